# Twin of scenarios/handoff/wlan_to_imt_long.toml (Table III of Tsukamoto, Fukuda, Hori
# and Oie, "New flow control schemes of TCP for multimodal mobile hosts", IEICE Trans.
# Commun. E89-B(6), 2006): fixed host fh, access router ar,
# mobile host mh; fh-ar wired 10 Mb/s, 10 ms; the access link ar-mh changes interface.
# The TCP baseline only (ns-2 has none of the reactions).
source [file join [file dirname [info script]] lib.tcl]
# Optional arguments (the reproduction's sensitivity runs): minrto_ in seconds, and the
# queue limit of the access link in packets (default 50).
if {$argc > 0} { Agent/TCP set minrto_ [lindex $argv 0] }
set qlim 50
if {$argc > 1} { set qlim [lindex $argv 1] }
set fh [$ns node]; set ar [$ns node]; set mh [$ns node]
mf_link $fh $ar 10Mb 10ms 50
mf_link $ar $mh 20Mb 1ms $qlim
$ns rtmodel-at 10.0 down $ar $mh
$ns rtmodel-at 13.5 up $ar $mh
mf_change 13.5 $ar $mh 384Kb 70ms
mf_flow bulk newreno $fh $mh 0.0 1000 1000
mf_interval before 5 10
mf_interval handoff 10 15
mf_interval handoff20 10 20
mf_interval after 15 60
mf_run 60
