#!/usr/bin/env bash
# Profile-guided optimisation (PGO) of the release builds, trained on the project's own
# runs. Usage:
#
#   tools/pgo.sh profile   build mobiflow-run instrumented (-Cprofile-generate) in
#                          target/pgo-gen, run it on the training set, merge the counts
#                          into target/pgo/merged.profdata
#   tools/pgo.sh flags     print the RUSTFLAGS that use that profile (nothing without it)
#   tools/pgo.sh run       build mobiflow-run with the profile in target/pgo (without
#                          one: the plain release build); print the binary's path
#
# The training set: the benchmark's bulk scenario (bench/bench.py's `scenario`: 1, 10 and
# 100 SACK flows, 20 s) and every scenarios/examples/*.toml. Runs are deterministic, so
# the profile depends almost only on the sources: two `profile` runs of one tree differ
# by a few counts in three functions outside the simulation (ryu's float formatting and
# an IndexMap insertion in toml_edit, whose hasher is seeded at random), and binaries
# built from either profile are byte-identical (checked on 2026-11-27: two profiles, two
# clean `run` builds, one sha256). rustc tracks the profile file, so cargo rebuilds when
# it changes. The counts are merged with the toolchain's own
# llvm-profdata (rustup component llvm-tools), whose format matches rustc's LLVM;
# without it `profile` says so and does nothing, `flags` prints nothing, and the builds
# go on without PGO (CI needs no llvm-tools).
#
# PGO builds go to their own target directory (target/pgo): RUSTFLAGS are part of
# cargo's fingerprint, so sharing target/release would rebuild everything each time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
CARGO=${CARGO:-cargo}
PY=${PYTHON:-.venv/bin/python}
OUT=$ROOT/target/pgo
PROFILE=$OUT/merged.profdata

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"

case "${1:-}" in
flags)
    if [ -x "$profdata" ] && [ -f "$PROFILE" ]; then
        echo "-Cprofile-use=$PROFILE"
    fi
    ;;
profile)
    if [ ! -x "$profdata" ]; then
        echo "note: no PGO (llvm-profdata missing: rustup component add llvm-tools)" >&2
        exit 0
    fi
    GEN=$ROOT/target/pgo-gen
    RAW=$GEN/profraw
    rm -rf "$RAW" "$GEN/train" && mkdir -p "$RAW" "$GEN/train" "$OUT"
    RUSTFLAGS="-Cprofile-generate=$RAW" $CARGO build --release -p mobiflow-sim \
        --bin mobiflow-run --target-dir "$GEN"
    # The build's proc macros and build scripts are instrumented too and write counts
    # when they run (only when not cached): the profile is of the training runs alone.
    rm -rf "$RAW" && mkdir -p "$RAW"
    "$PY" - "$GEN/train" <<'PYEOF'
import sys
from pathlib import Path

sys.path.insert(0, "bench")
import bench  # noqa: E402

for n in (1, 10, 100):
    (Path(sys.argv[1]) / f"bulk_{n}.toml").write_text(bench.scenario(n, 20.0))
PYEOF
    for f in "$GEN"/train/*.toml scenarios/examples/*.toml; do
        echo "pgo: training on $f"
        LLVM_PROFILE_FILE="$RAW/%m_%p.profraw" "$GEN/release/mobiflow-run" "$f" >/dev/null
    done
    "$profdata" merge -o "$PROFILE" "$RAW"
    echo "pgo: $PROFILE"
    ;;
run)
    flags=$("$0" flags)
    if [ -n "$flags" ]; then
        RUSTFLAGS="$flags" $CARGO build --release -p mobiflow-sim --bin mobiflow-run \
            --target-dir "$OUT" >&2
        echo "$OUT/release/mobiflow-run"
    else
        $CARGO build --release -p mobiflow-sim --bin mobiflow-run >&2
        echo "$ROOT/target/release/mobiflow-run"
    fi
    ;;
*)
    echo "usage: tools/pgo.sh profile|flags|run" >&2
    exit 2
    ;;
esac
