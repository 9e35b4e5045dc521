# Twin of scenarios/handoff/multiple.toml (Table IV of the vertical-handoff paper),
# the TCP baseline on the network of mf_handoff_net (lib.tcl), which also reads the
# optional arguments: minrto_ in seconds, the access link's queue limit in packets.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_handoff_net 20Mb 1ms] fh ar mh
foreach {t rate delay} {10 384Kb 70ms 13 20Mb 1ms 16 384Kb 70ms 19 20Mb 1ms} {
    mf_handoff $ar $mh $t [expr {$t + 0.5}] $rate $delay
}
mf_bulk $fh $mh
mf_measure {before 5 10 handoff 10 20 after 20 60}
