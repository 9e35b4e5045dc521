"""Run by test_live_cleanup.py in namespace b behind the emulated link: writes non-IP,
malformed and oversized packets into the TUN device through a packet socket, then
checks that a TCP connection still crosses the link. Prints what it sent as JSON."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time

PORT = 5301


def ipv4(total: int, length: int, ihl: int = 5) -> bytes:
    """An IPv4 header claiming ``total`` bytes and ``ihl`` words, cut to ``length``."""
    header = bytes([0x40 | ihl, 0]) + struct.pack("!H", total) + bytes(16)
    return (header + bytes(max(0, length - 20)))[:length]


def main() -> int:
    dev = os.environ["MOBIFLOW_DEV_B"]
    ns_a = os.environ["MOBIFLOW_NS_A"]
    addr_a = os.environ["MOBIFLOW_ADDR_A"]
    echo_server = (
        "import socket\n"
        "s = socket.socket()\n"
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        f"s.bind(({addr_a!r}, {PORT}))\n"
        "s.listen(1)\n"
        "print('listening', flush=True)\n"
        "c, _ = s.accept()\n"
        "c.sendall(c.recv(100))\n"
        "c.close()\n"
    )
    server = subprocess.Popen(
        ["ip", "netns", "exec", ns_a, sys.executable, "-c", echo_server],
        stdout=subprocess.PIPE,
        text=True,
    )
    if server.stdout is None or server.stdout.readline() != "listening\n":
        return 3
    sent = {"non_ip": 0, "malformed": 0, "oversize": 0}
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    raw.bind((dev, 0))
    for junk in (b"\x00" * 60, b"\xff" * 100, b"\x10not an IP packet", bytes(range(256)) * 4):
        raw.send(junk)
        sent["non_ip"] += 1
    malformed = (
        ipv4(60, 3),  # truncated header
        ipv4(1000, 40),  # total length beyond the bytes
        ipv4(60, 60, ihl=3),  # header length below 20 bytes
        ipv4(10, 40),  # total length below the header
        bytes([0x60]) + bytes(20),  # IPv6, shorter than its header
        bytes([0x60, 0, 0, 0, 0x10, 0]) + bytes(34),  # IPv6 payload beyond the bytes
    )
    for bad in malformed:
        raw.send(bad)
        sent["malformed"] += 1
    # A packet beyond the link's MTU: the device must allow it first.
    subprocess.run(["ip", "link", "set", "dev", dev, "mtu", "9000"], check=True)
    for _ in range(3):
        raw.send(ipv4(4000, 4000))
        sent["oversize"] += 1
    subprocess.run(["ip", "link", "set", "dev", dev, "mtu", "1500"], check=True)
    time.sleep(0.3)
    with socket.create_connection((addr_a, PORT), timeout=10) as conn:
        conn.sendall(b"still forwarding")
        echo = conn.recv(100)
    server.wait(timeout=10)
    print(json.dumps({"sent": sent, "echo": echo.decode()}), flush=True)
    return 0 if echo == b"still forwarding" else 1


if __name__ == "__main__":
    sys.exit(main())
