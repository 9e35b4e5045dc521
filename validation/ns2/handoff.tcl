# Twin of handoff.toml: a vertical handoff at 10 s from 20 Mb/s, 1 ms to 384 kb/s, 70 ms
# after a 0.5 s interruption (the first case of Tsukamoto, Fukuda, Hori and Oie, "New flow
# control schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6), 2006).
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 20Mb 1ms 50
$ns rtmodel-at 10.0 down $s $p
$ns rtmodel-at 10.5 up $s $p
mf_change 10.5 $s $p 384Kb 70ms
mf_flow bulk newreno $s $p 0.0 1000 1000
mf_interval before 5 10
mf_interval handoff 10 15
mf_interval after 15 60
mf_run 60
