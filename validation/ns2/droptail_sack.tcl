# Twin of droptail_sack.toml: as droptail.tcl with Agent/TCP/Sack1 and TCPSink/Sack1.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 20ms 50
mf_flow bulk sack $s $p 0.0 1000 1000
mf_interval steady 10 60
mf_run 60
