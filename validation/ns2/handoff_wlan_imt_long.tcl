# Twin of scenarios/handoff/wlan_to_imt_long.toml (Table III of the vertical-handoff paper),
# the TCP baseline on the network of mf_handoff_net (lib.tcl), which also reads the
# optional arguments: minrto_ in seconds, the access link's queue limit in packets.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_handoff_net 20Mb 1ms] fh ar mh
mf_handoff $ar $mh 10.0 13.5 384Kb 70ms
mf_bulk $fh $mh
mf_measure {before 5 10 handoff 10 15 handoff20 10 20 after 15 60}
