# Twin of scenarios/handoff/multiple.toml (Table IV of Tsukamoto, Fukuda, Hori
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
foreach {t rate delay} {10 384Kb 70ms 13 20Mb 1ms 16 384Kb 70ms 19 20Mb 1ms} {
    $ns rtmodel-at $t down $ar $mh
    $ns rtmodel-at [expr {$t + 0.5}] up $ar $mh
    mf_change [expr {$t + 0.5}] $ar $mh $rate $delay
}
mf_flow bulk newreno $fh $mh 0.0 1000 1000
mf_interval before 5 10
mf_interval handoff 10 20
mf_interval after 20 60
mf_run 60
