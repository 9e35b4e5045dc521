# Twin of delay_drop.toml: the link's delay drops from 300 ms to 20 ms at 20 s (a
# handoff to a shorter path); the rate stays 10 Mb/s; a window of 300 packets.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 300ms 150
mf_change 20.0 $s $p 10Mb 20ms
mf_flow bulk newreno $s $p 0.0 1000 300
mf_interval before 5 20
mf_interval transition 20 30
mf_interval after 30 60
mf_run 60
