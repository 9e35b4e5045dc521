# Shared procedures of the ns-2 twins of mobiflow's validation scenarios.
#
# Each twin builds the same network and traffic as its mobiflow TOML and prints one
# JSON object on stdout: per flow, payload goodput (bits/s) over each named interval,
# retransmitted packets and retransmission timeouts.
#
# Conventions (see validation/README.md): Agent/TCP/Newreno with TCPSink, or
# Agent/TCP/Sack1 with TCPSink/Sack1; packetSize_ is the payload, a packet on the
# wire is packetSize_ + 40 bytes; TCPSink's bytes_ counts wire bytes in order, so
# payload goodput = delta(bytes_) * packetSize_ / (packetSize_ + 40).

set ns [new Simulator]

# A duplex link with the same rate, delay and queue both ways: DropTail by default, or
# RED with ns-2.35's defaults (thresh_ 0, maxthresh_ 0, q_weight_ -1: automatic;
# gentle_, wait_, bytes_, queue_in_bytes_ true; linterm_ 10, mean_pktsize_ 500), whose
# limit_ qlim is read as qlim * 500 bytes, as queue_in_bytes_ makes it.
proc mf_link {a b rate delay qlim {queue DropTail}} {
    global ns
    $ns duplex-link $a $b $rate $delay $queue
    $ns queue-limit $a $b $qlim
    $ns queue-limit $b $a $qlim
}

# A chain of nodes n0 -- n1 -- ... joined by one mf_link per argument, each a list
# {rate delay qlim ?queue?}: the nodes are created first, then the links in order.
# Returns the nodes (lassign [mf_chain {10Mb 20ms 50}] s p).
proc mf_chain {args} {
    global ns
    set nodes {}
    for {set i 0} {$i <= [llength $args]} {incr i} {
        lappend nodes [$ns node]
    }
    foreach spec $args a [lrange $nodes 0 end-1] b [lrange $nodes 1 end] {
        mf_link $a $b {*}$spec
    }
    return $nodes
}

# The network of the vertical-handoff twins (Tsukamoto, Fukuda, Hori and Oie, "New flow
# control schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6),
# 2006): fixed host fh -- wired 10 Mb/s, 10 ms, DropTail 50 -- access router ar --
# access link (rate, delay) -- mobile host mh; the twin then changes the access link's
# interface. The TCP baseline only (ns-2 has none of the paper's reactions). The
# script's optional arguments (the reproduction's sensitivity runs): minrto_ in seconds,
# and the queue limit of the access link in packets (default 50). Returns {fh ar mh}.
proc mf_handoff_net {rate delay} {
    global argc argv
    if {$argc > 0} { Agent/TCP set minrto_ [lindex $argv 0] }
    set qlim 50
    if {$argc > 1} { set qlim [lindex $argv 1] }
    return [mf_chain {10Mb 10ms 50} [list $rate $delay $qlim]]
}

# Change rate and delay of both directions of a link at time t (ns2-notes.md: set
# them on the underlying link object).
proc mf_change {t a b rate delay} {
    global ns
    $ns at $t "[[$ns link $a $b] link] set bandwidth_ $rate; [[$ns link $b $a] link] set bandwidth_ $rate; [[$ns link $a $b] link] set delay_ $delay; [[$ns link $b $a] link] set delay_ $delay"
}

# The link between a and b is down, both ways, from t0 to t1 (ns-2's rtmodel-at).
proc mf_outage {a b t0 t1} {
    global ns
    $ns rtmodel-at $t0 down $a $b
    $ns rtmodel-at $t1 up $a $b
}

# A handoff: the link is down from t0 to t1, then comes back with a new rate and delay.
proc mf_handoff {a b t0 t1 rate delay} {
    mf_outage $a $b $t0 $t1
    mf_change $t1 $a $b $rate $delay
}

# Measured flows: one list {name kind agent counter pktsize header} each, where counter
# is the command that reads the wire bytes the flow has delivered so far and header the
# bytes a packet carries on the wire beyond its packetSize_ payload.
set flows {}

# A bulk TCP flow from node src to node dst (npkts packets if given). kind: newreno
# or sack. Returns the sink.
proc mf_flow {name kind src dst start pktsize window {npkts 0}} {
    global ns flows
    if {$kind == "sack"} {
        set tcp [new Agent/TCP/Sack1]
        set sink [new Agent/TCPSink/Sack1]
    } else {
        set tcp [new Agent/TCP/Newreno]
        set sink [new Agent/TCPSink]
    }
    $tcp set packetSize_ $pktsize
    $tcp set window_ $window
    $ns attach-agent $src $tcp
    $ns attach-agent $dst $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    if {$npkts > 0} {
        $ns at $start "$ftp send [expr {$npkts * $pktsize}]"
    } else {
        $ns at $start "$ftp start"
    }
    lappend flows [list $name $kind $tcp [list $sink set bytes_] $pktsize 40]
    return $sink
}

# The twins' usual flow: "bulk", 1000-byte packets from 0 s, window 1000 packets.
proc mf_bulk {src dst {kind newreno} {window 1000}} {
    mf_flow bulk $kind $src $dst 0.0 1000 $window
}

# A TCP flow from node src to node dst that sends npkts packets of pktsize payload
# bytes from time start (an FTP's `send`). Its completion time, from start to the first
# instant the sink holds every byte in order (TCPSink's bytes_ counts the 40-byte SYN
# and 40 + pktsize bytes per packet), is polled every 0.1 ms and reported.
proc mf_sized_flow {name kind src dst start pktsize window npkts} {
    global ns
    set sink [mf_flow $name $kind $src $dst $start $pktsize $window $npkts]
    set need [expr {40 + $npkts * ($pktsize + 40)}]
    $ns at $start "mf_poll $name $sink $need $start"
}

proc mf_poll {name sink need start} {
    global ns done
    set now [$ns now]
    if {[$sink set bytes_] >= $need} {
        set done($name) [expr {$now - $start}]
    } else {
        $ns at [expr {$now + 0.0001}] "mf_poll $name $sink $need $start"
    }
}

# One TFRC flow (payload packetSize_, +32 bytes on the wire) from node a to node b,
# started at 0. TFRCSink counts no bytes, so goodput is measured at the queue from a
# to b (a queue monitor's bdepartures_) times packetSize_ / (packetSize_ + 32).
# kind "tfrc": ns-2's Agent/TFRC with Agent/TFRCSink (the original research TFRC over
# UDP). kind "dccp": Agent/DCCP/TFRC at both ends (DCCP with CCID 3, the agent the
# Freeze-DCCP paper's simulations used), driven by an FTP; the TFRC segment size s is
# set to the packet size at both ends (ns-2's default is 500), and ECN is off at both
# ends (with it on, ns-2.35's CCID 3 reports "ECN check failed" within the first RTTs
# on a plain DropTail path and stops sending). 32 header bytes either way. Goodput is
# measured at the queue from qa to qb (default: from a to b, which must then be
# neighbours); on a longer path, give its last hop.
proc mf_tfrc_flow {name a b pktsize {kind tfrc} {qa ""} {qb ""}} {
    global ns flows
    if {$kind == "dccp"} {
        set agent [new Agent/DCCP/TFRC]
        set sink [new Agent/DCCP/TFRC]
        foreach ag [list $agent $sink] {
            $ag set use_ecn_local_ 0
            $ag set use_ecn_remote_ 0
            $ag set s_s_ $pktsize
            $ag set r_s_ $pktsize
        }
    } else {
        set agent [new Agent/TFRC]
        set sink [new Agent/TFRCSink]
    }
    $agent set packetSize_ $pktsize
    $ns attach-agent $a $agent
    $ns attach-agent $b $sink
    $ns connect $agent $sink
    if {$qa == ""} { set qa $a; set qb $b }
    set qm [$ns monitor-queue $qa $qb ""]
    lappend flows [list $name $kind $agent [list $qm set bdepartures_] $pktsize 32]
    if {$kind == "dccp"} {
        set ftp [new Application/FTP]
        $ftp attach-agent $agent
        $ns at 0.0 "$sink listen"
        $ns at 0.0 "$ftp start"
    } else {
        $ns at 0.0 "$agent start"
    }
}

# --- measuring and reporting -----------------------------------------------------------

set intervals {}

# A named interval [t0, t1] over which goodput is measured.
proc mf_interval {label t0 t1} {
    global ns intervals
    lappend intervals [list $label $t0 $t1]
    $ns at $t0 "mf_mark $label 0"
    $ns at $t1 "mf_mark $label 1"
}

proc mf_mark {label which} {
    global flows marks
    foreach f $flows {
        set marks([lindex $f 0],$label,$which) [{*}[lindex $f 3]]
    }
}

# Print one JSON object: per flow, its payload goodput (bits/s) over each interval and
# its counters (TCP: completion time, retransmitted packets and timeouts; TFRC and DCCP:
# packets sent).
proc mf_report {} {
    global flows intervals marks done
    set out "\{\"flows\": \["
    set first 1
    foreach f $flows {
        lassign $f name kind agent counter pkt hdr
        if {!$first} { append out ", " }
        set first 0
        append out "\{\"name\": \"$name\", \"intervals\": \{"
        set ifirst 1
        foreach iv $intervals {
            set label [lindex $iv 0]
            set span [expr {[lindex $iv 2] - [lindex $iv 1]}]
            set b [expr {$marks($name,$label,1) - $marks($name,$label,0)}]
            set g [expr {$b * 8.0 * $pkt / ($pkt + $hdr) / $span}]
            if {!$ifirst} { append out ", " }
            set ifirst 0
            append out "\"$label\": $g"
        }
        append out "\}"
        switch $kind {
            dccp {
                set sent [expr {[$agent set num_data_pkt_] + [$agent set num_dataack_pkt_]}]
                append out ", \"packets_sent\": $sent"
            }
            tfrc {
                append out ", \"packets_sent\": [$agent set ndatapack_]"
            }
            default {
                if {[info exists done($name)]} {
                    set ct $done($name)
                } else {
                    set ct null
                }
                append out ", \"completion_time_s\": $ct"
                append out ", \"retransmits\": [$agent set nrexmitpack_], \"timeouts\": [$agent set nrexmit_]"
            }
        }
        append out "\}"
    }
    append out "\]\}"
    puts $out
}

proc mf_run {duration} {
    global ns
    $ns at $duration "mf_report; exit 0"
    $ns run
}

# Measure goodput over the named intervals (a flat list: label t0 t1 label t0 t1 ...),
# then run until the latest of them ends and report.
proc mf_measure {spec} {
    set end 0
    foreach {label t0 t1} $spec {
        mf_interval $label $t0 $t1
        if {$t1 > $end} { set end $t1 }
    }
    mf_run $end
}
