# Twin of rwnd_limited.toml: a receive-window-limited bulk transfer on a long-RTT link.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {15Mb 265ms 1000}] s p
mf_bulk $s $p newreno 262
mf_measure {steady 10 60}
