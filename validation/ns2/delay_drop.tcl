# Twin of delay_drop.toml: the link's delay drops from 300 ms to 20 ms at 20 s (a
# handoff to a shorter path); the rate stays 10 Mb/s; a window of 300 packets.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 300ms 150}] s p
mf_change 20.0 $s $p 10Mb 20ms
mf_bulk $s $p newreno 300
mf_measure {before 5 20 transition 20 30 after 30 60}
