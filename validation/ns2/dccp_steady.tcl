# Twin of dccp_steady.toml: one DCCP flow with CCID 3 (ns-2's Agent/DCCP/TFRC at both
# ends, the agent the Freeze-DCCP paper's simulations used; packetSize_ 1000: 1032
# bytes on the wire) alone on a 10 Mb/s, 50 ms link.
# ECN is off (see mf_tfrc_flow in lib.tcl). Goodput: bytes leaving the bottleneck
# queue towards the receiver times 1000/1032, over each interval.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 50ms 100}] s p
mf_tfrc_flow video $s $p 1000 dccp
mf_measure {start 5 20 steady 30 60}
