//! The project's one small generator of pseudo-random numbers, for the machines that
//! draw (BBR's random choices) and for the tests' random inputs.

/// The next number of a SplitMix64 stream (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014) whose state is `state`.
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
