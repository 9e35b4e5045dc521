# Twin of outage.toml: the link is down from 20 s to 25 s (RTO backoff, then recovery).
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 50ms 100
$ns rtmodel-at 20.0 down $s $p
$ns rtmodel-at 25.0 up $s $p
mf_flow bulk newreno $s $p 0.0 1000 1000
mf_interval before 10 20
mf_interval after 25 40
mf_interval late 40 60
mf_run 60
