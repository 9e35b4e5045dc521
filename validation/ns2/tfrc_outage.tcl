# Twin of tfrc_outage.toml: one TFRC flow (ns-2's Agent/TFRC and Agent/TFRCSink,
# packetSize_ 1000: 1032 bytes on the wire) over a 10 Mb/s, 50 ms link that is down,
# both ways, from 20 s to 25 s. ns-2's TFRC is the original research TFRC, not RFC
# 5348 (see validation/README.md): the twin compares steady-state rates and shows the
# differences across the outage.
#
# Goodput: bytes leaving the bottleneck queue towards the receiver times 1000/1032
# (mf_tfrc_flow in lib.tcl), over each interval.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 50ms 100}] s p
mf_outage $s $p 20.0 25.0
mf_tfrc_flow video $s $p 1000
mf_measure {before 10 20 after 25 40 late 40 60}
