# Twin of dccp_steady.toml: one DCCP flow with CCID 3 (ns-2's Agent/DCCP/TFRC at both
# ends, the agent the Freeze-DCCP paper's simulations used; packetSize_ 1000: 1032
# bytes on the wire) alone on a 10 Mb/s, 50 ms link.
# ECN is off (see mf_tfrc_flow in lib.tcl). Goodput: bytes leaving the bottleneck
# queue towards the receiver times 1000/1032, over each interval.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 50ms 100
mf_tfrc_flow video $s $p 1000 dccp
mf_tfrc_interval start 5 20
mf_tfrc_interval steady 30 60

$ns at 60 "mf_tfrc_report"
$ns run
