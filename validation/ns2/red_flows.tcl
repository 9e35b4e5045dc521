# Twin of red_flows.toml: five NewReno flows through a RED queue with ns-2.35's
# default RED parameters.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 20ms 50 RED}] s p
for {set i 0} {$i < 5} {incr i} {
    mf_flow f$i newreno $s $p [expr {$i * 0.1}] 1000 1000
}
mf_measure {steady 10 60}
