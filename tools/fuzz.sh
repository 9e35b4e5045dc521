#!/usr/bin/env bash
# Coverage-guided fuzzing of one target with cargo-fuzz (libFuzzer), for contributors'
# long runs (docs/fuzzing.md). CI runs the same targets on the stable harness instead
# (`make test-fuzz`).
#
#   tools/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER ARGS...]
#
# TARGET: scenario_loader, trace_reader, unit_parsers or pcap_encoder. Needs
# `cargo install cargo-fuzz`. On the stable toolchain it sets RUSTC_BOOTSTRAP=1 (cargo-fuzz
# passes nightly -Z flags) and runs without a sanitizer (`-s none`): Rust's own checks
# (bounds, overflow: debug assertions are on) are what find defects here.
# The seed corpus is built from scenarios/ and traces/ into fuzz/corpus/TARGET (kept
# between runs); crashes go to fuzz/artifacts/TARGET.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=${1:?usage: tools/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER ARGS...]}
shift
secs=600
if [ $# -gt 0 ] && [ "$1" != "--" ]; then secs=$1; shift; fi
[ "${1:-}" = "--" ] && shift

command -v cargo-fuzz >/dev/null 2>&1 || {
    echo "error: cargo-fuzz is not installed (cargo install cargo-fuzz)" >&2
    exit 2
}

corpus=fuzz/corpus/$target
mkdir -p "$corpus"
case $target in
scenario_loader)
    # Each scenario, and each with overrides (the target reads `--set` lines after a
    # `#%set` line).
    for f in $(find scenarios -name '*.toml'); do
        n=$(basename "$f" .toml)
        cp "$f" "$corpus/$n.toml"
        { cat "$f"; printf '\n#%%set\nrun.duration=2s\nflows.0.cc=cubic\ntcp.rcv_buf=8KB\n'; } \
            >"$corpus/$n.set.toml"
    done ;;
trace_reader)
    for t in traces/*.down traces/*.up; do head -n 300 "$t" >"$corpus/$(basename "$t")"; done ;;
unit_parsers)
    grep -rhoE '"[0-9][^"]{0,22}"' scenarios | tr -d '"' | sort -u | while IFS= read -r v; do
        printf '%s' "$v" >"$corpus/$(printf '%s' "$v" | cksum | cut -d' ' -f1)"
    done ;;
pcap_encoder)
    # Any bytes will do (the target reads them as fields): pieces of a shipped trace.
    for i in $(seq 0 31); do
        dd if=traces/TMobile-UMTS-driving.up of="$corpus/bytes$i" bs=200 skip="$i" count=1 status=none
    done ;;
*)
    echo "error: unknown target $target" >&2
    exit 2 ;;
esac

cd fuzz
RUSTC_BOOTSTRAP=1 cargo fuzz run --debug-assertions -s none "$target" "corpus/$target" -- \
    -max_total_time="$secs" -max_len=65536 "$@"
