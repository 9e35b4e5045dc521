# Twin of tfrc_steady.toml: one TFRC flow (ns-2's Agent/TFRC and Agent/TFRCSink,
# packetSize_ 1000: 1032 bytes on the wire) alone on a 10 Mb/s, 50 ms link. ns-2's
# TFRC is the original research TFRC, not RFC 5348 (see validation/README.md).
#
# Goodput: bytes leaving the bottleneck queue towards the receiver times 1000/1032
# (mf_tfrc_flow in lib.tcl), over each interval.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 50ms 100}] s p
mf_tfrc_flow video $s $p 1000
mf_measure {start 5 20 steady 30 60}
