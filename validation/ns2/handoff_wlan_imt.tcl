# Twin of scenarios/handoff/wlan_to_imt.toml (seed 002, Table I): fixed host fh, access router ar,
# mobile host mh; fh-ar wired 10 Mb/s, 10 ms; the access link ar-mh changes interface.
# The TCP baseline only (ns-2 has none of the reactions).
source [file join [file dirname [info script]] lib.tcl]
# Optional argument: minrto_ in seconds (the reproduction's sensitivity run uses 1).
if {$argc > 0} { Agent/TCP set minrto_ [lindex $argv 0] }
set fh [$ns node]; set ar [$ns node]; set mh [$ns node]
mf_link $fh $ar 10Mb 10ms 50
mf_link $ar $mh 20Mb 1ms 50
$ns rtmodel-at 10.0 down $ar $mh
$ns rtmodel-at 10.5 up $ar $mh
mf_change 10.5 $ar $mh 384Kb 70ms
mf_flow bulk newreno $fh $mh 0.0 1000 1000
mf_interval before 5 10
mf_interval handoff 10 15
mf_interval after 15 60
mf_run 60
