# Twin of droptail_sack.toml: as droptail.tcl with Agent/TCP/Sack1 and TCPSink/Sack1.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 20ms 50}] s p
mf_bulk $s $p sack
mf_measure {steady 10 60}
