"""`mobiflow run --pcap`: captures at every host, readable as pcap."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import mobiflow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "examples" / "rwnd_limited.toml"
SHORT = {"run.duration": "4s", "measure.intervals": {}}


def _frames(path: Path) -> int:
    data = path.read_bytes()
    magic, _, _, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B23C4D  # nanosecond pcap
    assert linktype == 1  # Ethernet
    n, off = 0, 24
    while off < len(data):
        _, _, incl, orig = struct.unpack("<IIII", data[off : off + 16])
        assert incl <= snaplen
        assert incl <= orig
        off += 16 + incl
        n += 1
    assert off == len(data)
    return n


def test_pcap_writes_one_capture_per_host(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = mobiflow.run(EXAMPLE, set=SHORT, out=out, pcap=True)
    server, phone = out / "server.pcap", out / "phone.pcap"
    flow = summary["flows"][0]
    # The server sends every data segment (and the SYN) and receives the ACKs; the
    # phone receives what has arrived by the end (some is still in flight).
    assert _frames(server) >= flow["segments_sent"]
    assert 0 < _frames(phone) < _frames(server)


def test_pcap_without_out_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mobiflow", "run", str(EXAMPLE), "--pcap"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "--pcap needs --out" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_the_capture_without_malformed_packets(tmp_path: Path) -> None:
    out = tmp_path / "run"
    mobiflow.run(EXAMPLE, set=SHORT, out=out, pcap=True)
    proc = subprocess.run(
        [
            "tshark",
            "-r",
            str(out / "server.pcap"),
            "-Y",
            "_ws.malformed",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == ""
