# Twin of outage.toml: the link is down from 20 s to 25 s (RTO backoff, then recovery).
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 50ms 100}] s p
mf_outage $s $p 20.0 25.0
mf_bulk $s $p
mf_measure {before 10 20 after 25 40 late 40 60}
