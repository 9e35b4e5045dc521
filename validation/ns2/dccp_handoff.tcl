# Twin of dccp_handoff.toml: one seed-003 handoff (802.11g -> 802.11g) with the seed's
# own agent, Agent/DCCP/TFRC at both ends (CCID 3; s = packetSize_ = 500 B, 532 bytes
# on the wire; ECN off, see mf_tfrc_flow in lib.tcl; every other setting ns-2.35's
# default, among them s_smallest_p_ = 1e-5). Mobile node mn -- 54 Mb/s, 10 ms --
# access router ar -- 100 Mb/s, 50 ms -- correspondent node cn, DropTail 50 packets;
# the flow runs mn -> cn. As in the seed's script, the AR-CN link is down, both ways,
# from 30 s for T_handoff = 2.62 s (rtmodel-at ... down $ar $cn). Goodput: bytes
# leaving the ar -> cn queue times 500/532, over each interval.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {54Mb 10ms 50} {100Mb 50ms 50}] mn ar cn
mf_outage $ar $cn 30.0 32.62
mf_tfrc_flow dccp $mn $cn 500 dccp $ar $cn
mf_measure {before 20 30 recovery 32.62 42.62 after 42.62 92.62}
