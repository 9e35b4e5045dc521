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
set flows {}
set intervals {}

# A duplex link with the same rate, delay and DropTail limit both ways.
proc mf_link {a b rate delay qlim} {
    global ns
    $ns duplex-link $a $b $rate $delay DropTail
    $ns queue-limit $a $b $qlim
    $ns queue-limit $b $a $qlim
}

# A duplex link with RED queues both ways, ns-2.35's RED defaults (thresh_ 0,
# maxthresh_ 0, q_weight_ -1: automatic; gentle_, wait_, bytes_, queue_in_bytes_ true;
# linterm_ 10, mean_pktsize_ 500) and limit_ qlim (read as qlim * 500 bytes, as
# queue_in_bytes_ makes it).
proc mf_red_link {a b rate delay qlim} {
    global ns
    $ns duplex-link $a $b $rate $delay RED
    $ns queue-limit $a $b $qlim
    $ns queue-limit $b $a $qlim
}

# Change rate and delay of both directions of a link at time t (ns2-notes.md: set
# them on the underlying link object).
proc mf_change {t a b rate delay} {
    global ns
    $ns at $t "[[$ns link $a $b] link] set bandwidth_ $rate; [[$ns link $b $a] link] set bandwidth_ $rate; [[$ns link $a $b] link] set delay_ $delay; [[$ns link $b $a] link] set delay_ $delay"
}

# A bulk TCP flow from node src to node dst (npkts packets if given). kind: newreno
# or sack.
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
    lappend flows [list $name $tcp $sink $pktsize]
}

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
        set name [lindex $f 0]
        set marks($name,$label,$which) [[lindex $f 2] set bytes_]
    }
}

# A TCP flow from node src to node dst that sends npkts packets of pktsize payload
# bytes from time start (an FTP's `send`). Its completion time, from start to the first
# instant the sink holds every byte in order (TCPSink's bytes_ counts the 40-byte SYN
# and 40 + pktsize bytes per packet), is polled every 0.1 ms and reported.
proc mf_sized_flow {name kind src dst start pktsize window npkts} {
    global ns flows
    mf_flow $name $kind $src $dst $start $pktsize $window $npkts
    set sink [lindex [lindex $flows end] 2]
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

proc mf_report {} {
    global flows intervals marks done
    set out "\{\"flows\": \["
    set first 1
    foreach f $flows {
        set name [lindex $f 0]
        set tcp [lindex $f 1]
        set pkt [lindex $f 3]
        if {!$first} { append out ", " }
        set first 0
        append out "\{\"name\": \"$name\", \"intervals\": \{"
        set ifirst 1
        foreach iv $intervals {
            set label [lindex $iv 0]
            set span [expr {[lindex $iv 2] - [lindex $iv 1]}]
            set b [expr {$marks($name,$label,1) - $marks($name,$label,0)}]
            set g [expr {$b * 8.0 * $pkt / ($pkt + 40) / $span}]
            if {!$ifirst} { append out ", " }
            set ifirst 0
            append out "\"$label\": $g"
        }
        if {[info exists done($name)]} {
            set ct $done($name)
        } else {
            set ct null
        }
        append out "\}, \"completion_time_s\": $ct"
        append out ", \"retransmits\": [$tcp set nrexmitpack_], \"timeouts\": [$tcp set nrexmit_]\}"
    }
    append out "\]\}"
    puts $out
}

proc mf_run {duration} {
    global ns
    $ns at $duration "mf_report; exit 0"
    $ns run
}

# --- TFRC twins ------------------------------------------------------------------------
# One Agent/TFRC flow (payload packetSize_, +32 bytes on the wire) from node a to node
# b, started at 0. TFRCSink counts no bytes, so goodput is measured at the queue from a
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
    global ns tf_agent tf_qm tf_name tf_size tf_intervals tf_kind
    if {$kind == "dccp"} {
        set tf_agent [new Agent/DCCP/TFRC]
        set sink [new Agent/DCCP/TFRC]
        foreach ag [list $tf_agent $sink] {
            $ag set use_ecn_local_ 0
            $ag set use_ecn_remote_ 0
            $ag set s_s_ $pktsize
            $ag set r_s_ $pktsize
        }
    } else {
        set tf_agent [new Agent/TFRC]
        set sink [new Agent/TFRCSink]
    }
    $tf_agent set packetSize_ $pktsize
    $ns attach-agent $a $tf_agent
    $ns attach-agent $b $sink
    $ns connect $tf_agent $sink
    if {$qa == ""} { set qa $a; set qb $b }
    set tf_qm [$ns monitor-queue $qa $qb ""]
    set tf_name $name
    set tf_size $pktsize
    set tf_kind $kind
    set tf_intervals {}
    if {$kind == "dccp"} {
        set ftp [new Application/FTP]
        $ftp attach-agent $tf_agent
        $ns at 0.0 "$sink listen"
        $ns at 0.0 "$ftp start"
    } else {
        $ns at 0.0 "$tf_agent start"
    }
}

proc mf_tfrc_interval {label t0 t1} {
    global ns tf_intervals
    lappend tf_intervals [list $label $t0 $t1]
    $ns at $t0 "mf_tfrc_mark $label 0"
    $ns at $t1 "mf_tfrc_mark $label 1"
}

proc mf_tfrc_mark {label which} {
    global tf_qm tf_marks
    set tf_marks($label,$which) [$tf_qm set bdepartures_]
}

# Print the flow's goodput per interval and its packets sent as JSON, then exit.
proc mf_tfrc_report {} {
    global tf_intervals tf_marks tf_agent tf_name tf_size tf_kind
    set out "\{\"flows\": \[\{\"name\": \"$tf_name\", \"intervals\": \{"
    set first 1
    foreach iv $tf_intervals {
        set label [lindex $iv 0]
        set span [expr {[lindex $iv 2] - [lindex $iv 1]}]
        set b [expr {$tf_marks($label,1) - $tf_marks($label,0)}]
        set g [expr {$b * 8.0 * $tf_size / ($tf_size + 32) / $span}]
        if {!$first} { append out ", " }
        set first 0
        append out "\"$label\": $g"
    }
    if {$tf_kind == "dccp"} {
        set sent [expr {[$tf_agent set num_data_pkt_] + [$tf_agent set num_dataack_pkt_]}]
    } else {
        set sent [$tf_agent set ndatapack_]
    }
    append out "\}, \"packets_sent\": $sent\}\]\}"
    puts $out
    exit 0
}
