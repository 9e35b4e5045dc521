# Twin of ten_flows.toml: ten NewReno flows sharing a 20 Mb/s bottleneck.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {20Mb 20ms 100}] s p
for {set i 0} {$i < 10} {incr i} {
    mf_flow f$i newreno $s $p [expr {$i * 0.1}] 1000 1000
}
mf_measure {steady 10 60}
