//! cargo-fuzz target `trace_reader`: the function of the stable harness's
//! `crates/mobiflow-sim/tests/harness/targets.rs` (docs/fuzzing.md).
#![no_main]

#[path = "../../crates/mobiflow-sim/tests/harness/targets.rs"]
#[allow(dead_code)]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("mobiflow-fuzz-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    targets::trace_target(&dir, data);
});
