# Twin of asym_updown.toml: an asymmetric access link (down 2 Mb/s, up 256 kb/s, 50 ms
# each way, DropTail 50 both ways) carrying an upload and, from 10 s, a download whose
# ACKs queue behind the upload's data.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set m [$ns node]
$ns simplex-link $s $m 2Mb 50ms DropTail
$ns simplex-link $m $s 256Kb 50ms DropTail
$ns queue-limit $s $m 50
$ns queue-limit $m $s 50
mf_flow up newreno $m $s 0.0 1000 1000
mf_flow down newreno $s $m 10.0 1000 1000
mf_measure {alone 2 10 shared 20 120}
