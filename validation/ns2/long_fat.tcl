# Twin of long_fat.toml: one NewReno transfer over a long fat pipe (100 Mb/s, 50 ms
# each way, 100-packet DropTail queue): slow start overshoots, a timeout follows, and
# the go-back-N resend draws duplicate ACKs at exactly `recover` (RFC 6582 §4), which
# must not start a second fast retransmit.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {100Mb 50ms 100}] s p
mf_bulk $s $p newreno 100000
mf_measure {start 0 20 steady 20 120}
