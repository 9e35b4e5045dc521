# Twin of handoff.toml: a vertical handoff at 10 s from 20 Mb/s, 1 ms to 384 kb/s, 70 ms
# after a 0.5 s interruption (the first case of Tsukamoto, Fukuda, Hori and Oie, "New flow
# control schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6), 2006).
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {20Mb 1ms 50}] s p
mf_handoff $s $p 10.0 10.5 384Kb 70ms
mf_bulk $s $p
mf_measure {before 5 10 handoff 10 15 after 15 60}
