# Twin of droptail.toml: a link-limited NewReno transfer with DropTail drops.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 20ms 50}] s p
mf_bulk $s $p
mf_measure {steady 10 60}
