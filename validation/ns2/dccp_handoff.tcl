# Twin of dccp_handoff.toml: one seed-003 handoff (802.11g -> 802.11g) with the seed's
# own agent, Agent/DCCP/TFRC at both ends (CCID 3; s = packetSize_ = 500 B, 532 bytes
# on the wire; ECN off, see mf_tfrc_flow in lib.tcl; every other setting ns-2.35's
# default, among them s_smallest_p_ = 1e-5). Mobile node mn -- 54 Mb/s, 10 ms --
# access router ar -- 100 Mb/s, 50 ms -- correspondent node cn, DropTail 50 packets;
# the flow runs mn -> cn. As in the seed's script, the AR-CN link is down, both ways,
# from 30 s for T_handoff = 2.62 s (rtmodel-at ... down $ar $cn). Goodput: bytes
# leaving the ar -> cn queue times 500/532, over each interval.
source [file join [file dirname [info script]] lib.tcl]
set mn [$ns node]; set ar [$ns node]; set cn [$ns node]
mf_link $mn $ar 54Mb 10ms 50
mf_link $ar $cn 100Mb 50ms 50
$ns rtmodel-at 30.0 down $ar $cn
$ns rtmodel-at 32.62 up $ar $cn
mf_tfrc_flow dccp $mn $cn 500 dccp $ar $cn
mf_tfrc_interval before 20 30
mf_tfrc_interval recovery 32.62 42.62
mf_tfrc_interval after 42.62 92.62

$ns at 92.62 "mf_tfrc_report"
$ns run
