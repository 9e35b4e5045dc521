# ns-2 twin of scenarios/fld/{wan,mobile}_{1,3}bg.toml: the seed's own kind of testbed
# (ns-2 with its Linux TCP module, Agent/TCP/Linux), for the baselines ns-2 has (Reno
# and CUBIC; there is no Relentless or FLD_TCP module in ns-2.35).
#
#   ns bursts.tcl RATE DELAY NBG BG_BYTES BURST_CC SEED BURST_TIMES...
#   ns bursts.tcl 10Mb 15ms 1 47185920 reno 1 5 12 19 26
#
# Prints one JSON object: the burst transfer times (write -> last byte acknowledged at
# the sender, one half RTT later than mobiflow's, which stops at the receiver) and
# the background flows' completion times (also at the sender), in seconds.
#
# Same setup as the TOML files: one duplex link, RED queue of 20 packets with
# thresholds 5/15, w_q 0.002, max_p 0.1, gentle; 1460-byte payload + 40 bytes of
# headers; SACK with timestamps; delayed ACKs with a 40 ms timer; 200 ms RTO floor
# (Linux's own, inside the module). Background flows are Reno with IW 3 (RFC 3390, as
# mobiflow's rfc profile); the burst flow has the same IW.

if {$argc < 7} {
    puts stderr "usage: ns bursts.tcl RATE DELAY NBG BG_BYTES BURST_CC SEED BURST_TIMES..."
    exit 2
}
set rate [lindex $argv 0]
set delay [lindex $argv 1]
set nbg [lindex $argv 2]
set bg_bytes [lindex $argv 3]
set burst_cc [lindex $argv 4]
set seed [lindex $argv 5]
set burst_times [lrange $argv 6 end]
set burst_bytes {524288 1048576 1048576 1048576}
set pkt 1460

global defaultRNG
$defaultRNG seed $seed
set ns [new Simulator]

Queue/RED set thresh_ 5
Queue/RED set maxthresh_ 15
Queue/RED set q_weight_ 0.002
Queue/RED set linterm_ 10
Queue/RED set gentle_ true
Queue/RED set queue_in_bytes_ false
Queue/RED set mean_pktsize_ 500
Agent/TCPSink/DelAck set interval_ 0.04

set s [$ns node]
set c [$ns node]
$ns duplex-link $s $c $rate $delay RED
$ns queue-limit $s $c 20
$ns queue-limit $c $s 20

proc linux_flow {cc} {
    global ns s c pkt
    set tcp [new Agent/TCP/Linux]
    $tcp set timestamps_ true
    $tcp set window_ 100000
    $tcp set packetSize_ $pkt
    $tcp set windowInit_ 3
    $ns at 0 "$tcp select_ca $cc"
    set sink [new Agent/TCPSink/Sack1/DelAck]
    $sink set ts_echo_rfc1323_ true
    $ns attach-agent $s $tcp
    $ns attach-agent $c $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    return [list $tcp $ftp]
}

# Packets needed for `bytes` (ns-2 sends whole packets).
proc pkts {bytes} {
    global pkt
    return [expr {($bytes + $pkt - 1) / $pkt}]
}

set bgs {}
for {set i 0} {$i < $nbg} {incr i} {
    set f [linux_flow reno]
    $ns at $i "[lindex $f 1] send $bg_bytes"
    lappend bgs [list [lindex $f 0] [expr {[pkts $bg_bytes] - 1}] $i]
}
set bf [linux_flow $burst_cc]
set btcp [lindex $bf 0]
set total 0
set targets {}
foreach t $burst_times b $burst_bytes {
    set total [expr {$total + [pkts $b]}]
    $ns at $t "[lindex $bf 1] send $b"
    lappend targets [list $t [expr {$total - 1}]]
}

# Poll the senders' cumulative ACK every millisecond.
set next_burst 0
set burst_done {}
array set bg_done {}
proc poll {} {
    global ns btcp targets next_burst burst_done bgs bg_done
    set now [$ns now]
    while {$next_burst < [llength $targets]} {
        set tg [lindex $targets $next_burst]
        if {[$btcp set ack_] >= [lindex $tg 1] && $now >= [lindex $tg 0]} {
            lappend burst_done [expr {$now - [lindex $tg 0]}]
            incr next_burst
        } else {
            break
        }
    }
    set i 0
    foreach b $bgs {
        if {![info exists bg_done($i)] && [[lindex $b 0] set ack_] >= [lindex $b 1]} {
            set bg_done($i) [expr {$now - [lindex $b 2]}]
        }
        incr i
    }
    $ns at [expr {$now + 0.001}] "poll"
}
$ns at 0.0 "poll"

proc report {} {
    global burst_done bg_done nbg
    set bg {}
    for {set i 0} {$i < $nbg} {incr i} {
        if {[info exists bg_done($i)]} { lappend bg $bg_done($i) } else { lappend bg null }
    }
    puts "\{\"bursts_s\": \[[join $burst_done ", "]\], \"background_s\": \[[join $bg ", "]\]\}"
    exit 0
}
$ns at [expr {[lindex $burst_times end] + 200}] "report"
$ns run
