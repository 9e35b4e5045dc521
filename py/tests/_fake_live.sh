#!/bin/sh
# Stands in for mobiflow-live on a machine without TUN devices (test_live.py).
echo "error: /dev/net/tun does not exist: this kernel or container offers no TUN devices" >&2
exit 2
