# Twin of long_fat.toml: one NewReno transfer over a long fat pipe (100 Mb/s, 50 ms
# each way, 100-packet DropTail queue): slow start overshoots, a timeout follows, and
# the go-back-N resend draws duplicate ACKs at exactly `recover` (RFC 6582 §4), which
# must not start a second fast retransmit.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 100Mb 50ms 100
mf_flow bulk newreno $s $p 0.0 1000 100000
mf_interval start 0 20
mf_interval steady 20 120
mf_run 120
