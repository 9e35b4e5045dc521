#!/usr/bin/env bash
# The wheel as a user gets it: install the built wheel into a fresh venv outside the
# source tree and use it from an empty directory (issue 21). `make test-wheel` builds
# the wheel first; CI runs it as part of `make test`.
#
#   tools/test_wheel.sh [DIST_DIR]
#
# Checks: the CLI runs a shipped scenario by its name; a scenario of the user's own
# names a shipped trace by file name; the Python API finds the shipped scenarios; a
# quick reproduction of every paper runs and writes its report; live mode either runs
# (root, /dev/net/tun) a command behind an emulated link with the program the wheel
# carries, or refuses with exit status 2 and a reason.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=$(cd "${1:-$src/dist}" && pwd)
shopt -s nullglob
wheels=("$dist"/mobiflow-*.whl)
if [ ${#wheels[@]} -ne 1 ]; then
    echo "error: expected one wheel in $dist, found ${#wheels[@]} (run make wheel)" >&2
    exit 1
fi
wheel=${wheels[0]}
python=${PYTHON:-python3}

tmp=$(mktemp -d /tmp/mobiflow-wheel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
step() { printf '\n== %s\n' "$*"; }

step "install $(basename "$wheel") into a fresh venv ($tmp/venv)"
"$python" -m venv "$tmp/venv"
# The exact versions the tests use (requirements-dev.txt) as constraints: the
# package's own ranges must admit them, and the run is repeatable.
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
    -c "$src/requirements-dev.txt" "$wheel"
mf="$tmp/venv/bin/mobiflow"
mkdir "$tmp/work"
cd "$tmp/work"

step "nothing is read from the source tree"
"$tmp/venv/bin/python" - "$src" <<'PY'
import sys
from pathlib import Path

import mobiflow
from mobiflow import _resources

src = Path(sys.argv[1]).resolve()
for p in (Path(mobiflow.__file__), _resources.SCENARIOS, _resources.TRACES, _resources.BIN):
    assert src not in p.resolve().parents, f"{p} is inside the source tree {src}"
assert (_resources.BIN / "mobiflow-live").is_file(), "the wheel carries mobiflow-live"
n = len(list(_resources.SCENARIOS.rglob("*.toml")))
t = len([p for p in _resources.TRACES.iterdir() if p.suffix in (".up", ".down")])
assert n > 50 and t >= 10, (n, t)
print(f"package at {Path(mobiflow.__file__).parent}: {n} scenarios, {t} traces")
PY

step "mobiflow run examples/outage.toml (a shipped scenario, by name)"
"$mf" --version
"$mf" run examples/outage.toml --json > outage.json
"$tmp/venv/bin/python" - <<'PY'
import json

f = json.load(open("outage.json"))["flows"][0]
assert f["bytes_delivered"] > 0, f
print(f"outage: {f['goodput_bps'] / 1e6:.3f} Mb/s")
PY

step "a scenario of one's own names a shipped trace by file name"
cat > own.toml <<'TOML'
name = "own_trace"
[run]
duration = "10s"
[[links]]
name = "cell"
a = "server"
b = "phone"
delay = "20ms"
queue_limit = "100p"
ab = { trace = "TMobile-UMTS-driving.down" }
ba = { trace = "TMobile-UMTS-driving.up" }
[[flows]]
name = "bulk"
from = "server"
to = "phone"
TOML
"$mf" run own.toml --out own
test -s own/summary.json

step "the Python API from outside the tree"
"$tmp/venv/bin/python" - <<'PY'
import mobiflow

sc = mobiflow.Scenario.load("examples/rwnd_limited.toml")  # shipped, found by name
run = sc.run()
print(run.flows.select("flow", "goodput_bps"))
PY

step "mobiflow reproduce all --quick"
"$mf" reproduce all --quick --out rep > rep.log 2>&1 || { tail -40 rep.log; exit 1; }
test -s rep/report.md
test -s rep/report.html
if grep -n "reproduction failed" rep/report.md; then exit 1; fi
tail -3 rep.log

step "live mode from the wheel"
if [ "$(id -u)" = 0 ] && [ -c /dev/net/tun ]; then
    # A TCP connection attempt from the far namespace: nothing listens at
    # 10.200.0.1, so the SYN crosses the emulated link and the RST comes back.
    "$mf" live run examples/rwnd_limited.toml -- "$tmp/venv/bin/python" -c '
import socket
try:
    socket.create_connection(("10.200.0.1", 9), timeout=3)
except ConnectionRefusedError:
    print("connection refused across the emulated link")
' > live.out 2>&1
    cat live.out
    grep -q "connection refused across the emulated link" live.out
    grep -Eq "live a->b: [1-9][0-9]* packets in" live.out
else
    set +e
    "$mf" live run examples/rwnd_limited.toml -- true 2> live.err
    status=$?
    set -e
    cat live.err
    test "$status" -eq 2
fi
echo
echo "wheel OK: $(basename "$wheel")"
