//! cargo-fuzz target `unit_parsers`: the function of the stable harness's
//! `crates/mobiflow-sim/tests/harness/targets.rs` (docs/fuzzing.md).
#![no_main]

#[path = "../../crates/mobiflow-sim/tests/harness/targets.rs"]
#[allow(dead_code)]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    targets::units_target(data);
});
