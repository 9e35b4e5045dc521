# ns-2 side of the benchmark: N bulk TCP flows (Agent/TCP/Sack1 + TCPSink/Sack1) over one
# 100 Mb/s, 20 ms link with a 500-packet DropTail queue and a window large enough to fill
# it. Usage: ns bulk.tcl NFLOWS DURATION_S PKTSIZE [SPACING_S]: flow i starts at i * SPACING_S
# (default 0.001). Prints the packets delivered in order.
set nflows [lindex $argv 0]
set duration [lindex $argv 1]
set pktsize [lindex $argv 2]
set spacing [expr {[llength $argv] > 3 ? [lindex $argv 3] : 0.001}]
set ns [new Simulator]
set n0 [$ns node]
set n1 [$ns node]
$ns duplex-link $n0 $n1 100Mb 20ms DropTail
$ns queue-limit $n0 $n1 500
Agent/TCP set window_ 100000
Agent/TCP set packetSize_ $pktsize
for {set i 0} {$i < $nflows} {incr i} {
    set tcp($i) [new Agent/TCP/Sack1]
    set sink($i) [new Agent/TCPSink/Sack1]
    $ns attach-agent $n0 $tcp($i)
    $ns attach-agent $n1 $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [expr {$i * $spacing}] "$ftp($i) start"
}
# Packets delivered in order: the highest cumulative ACK (packet numbers from 0), as
# TCPSink's 32-bit bytes_ overflows past 2 GB.
proc finish {} {
    global tcp nflows
    set tot 0
    for {set i 0} {$i < $nflows} {incr i} { set tot [expr {$tot + [$tcp($i) set ack_] + 1}] }
    puts "packets $tot"
    exit 0
}
$ns at $duration "finish"
$ns run
