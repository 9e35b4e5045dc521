# Twin of random_loss.toml: one NewReno flow on 10 Mb/s, 20 ms, DropTail 50, with 1 %
# uniform random loss on the data direction (an ErrorModel in front of the queue, as
# `$ns lossmodel` inserts it).
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 20ms 50}] s p
set em [new ErrorModel]
$em unit pkt
$em set rate_ 0.01
$em ranvar [new RandomVariable/Uniform]
$em drop-target [new Agent/Null]
$ns lossmodel $em $s $p
mf_bulk $s $p
mf_measure {steady 10 300}
