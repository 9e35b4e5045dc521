# Twin of scenarios/handoff/imt_to_lan.toml (Table II of the vertical-handoff paper),
# the TCP baseline on the network of mf_handoff_net (lib.tcl), which also reads the
# optional arguments: minrto_ in seconds, the access link's queue limit in packets.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_handoff_net 384Kb 70ms] fh ar mh
mf_handoff $ar $mh 10.0 10.5 100Mb 5ms
mf_bulk $fh $mh
mf_measure {before 5 10 handoff 10 15 after 15 60}
