# Twin of droptail.toml: a link-limited NewReno transfer with DropTail drops.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 20ms 50
mf_flow bulk newreno $s $p 0.0 1000 1000
mf_interval steady 10 60
mf_run 60
