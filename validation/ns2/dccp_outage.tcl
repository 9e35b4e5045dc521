# Twin of dccp_outage.toml: one DCCP flow with CCID 3 (ns-2's Agent/DCCP/TFRC at both
# ends, the agent the Freeze-DCCP paper's simulations used; packetSize_ 1000: 1032
# bytes on the wire) over a 10 Mb/s, 50 ms link that is down, both ways, from 20 s to 25 s.
# ECN is off (see mf_tfrc_flow in lib.tcl). Goodput: bytes leaving the bottleneck
# queue towards the receiver times 1000/1032, over each interval.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 50ms 100}] s p
mf_outage $s $p 20.0 25.0
mf_tfrc_flow video $s $p 1000 dccp
mf_measure {before 10 20 after 25 40 late 40 60}
