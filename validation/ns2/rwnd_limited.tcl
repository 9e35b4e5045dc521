# Twin of rwnd_limited.toml: a receive-window-limited bulk transfer on a long-RTT link.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 15Mb 265ms 1000
mf_flow bulk newreno $s $p 0.0 1000 262
mf_interval steady 10 60
mf_run 60
