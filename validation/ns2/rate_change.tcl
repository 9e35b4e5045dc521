# Twin of rate_change.toml: the link drops from 10 Mb/s, 20 ms to 2 Mb/s, 50 ms at 20 s.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 20ms 50
mf_change 20.0 $s $p 2Mb 50ms
mf_flow bulk newreno $s $p 0.0 1000 1000
mf_interval before 5 20
mf_interval transition 20 25
mf_interval after 25 60
mf_run 60
