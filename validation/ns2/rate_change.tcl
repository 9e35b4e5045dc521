# Twin of rate_change.toml: the link drops from 10 Mb/s, 20 ms to 2 Mb/s, 50 ms at 20 s.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 20ms 50}] s p
mf_change 20.0 $s $p 2Mb 50ms
mf_bulk $s $p
mf_measure {before 5 20 transition 20 25 after 25 60}
