# Twin of tfrc_steady.toml: one TFRC flow (ns-2's Agent/TFRC and Agent/TFRCSink,
# packetSize_ 1000: 1032 bytes on the wire) alone on a 10 Mb/s, 50 ms link. ns-2's
# TFRC is the original research TFRC, not RFC 5348 (see validation/README.md).
#
# Goodput: bytes leaving the bottleneck queue towards the receiver (a queue monitor;
# TFRCSink counts no bytes) times 1000/1032, over each interval.
source [file join [file dirname [info script]] lib.tcl]
set s [$ns node]; set p [$ns node]
mf_link $s $p 10Mb 50ms 100

set tfrc [new Agent/TFRC]
set sink [new Agent/TFRCSink]
$tfrc set packetSize_ 1000
$ns attach-agent $s $tfrc
$ns attach-agent $p $sink
$ns connect $tfrc $sink
set qm [$ns monitor-queue $s $p ""]
$ns at 0.0 "$tfrc start"

set tf_intervals {}
proc tf_interval {label t0 t1} {
    global ns tf_intervals
    lappend tf_intervals [list $label $t0 $t1]
    $ns at $t0 "tf_mark $label 0"
    $ns at $t1 "tf_mark $label 1"
}
proc tf_mark {label which} {
    global qm tf_marks
    set tf_marks($label,$which) [$qm set bdepartures_]
}
proc tf_report {} {
    global tf_intervals tf_marks tfrc
    set out "\{\"flows\": \[\{\"name\": \"video\", \"intervals\": \{"
    set first 1
    foreach iv $tf_intervals {
        set label [lindex $iv 0]
        set span [expr {[lindex $iv 2] - [lindex $iv 1]}]
        set b [expr {$tf_marks($label,1) - $tf_marks($label,0)}]
        set g [expr {$b * 8.0 * 1000 / 1032 / $span}]
        if {!$first} { append out ", " }
        set first 0
        append out "\"$label\": $g"
    }
    append out "\}, \"packets_sent\": [$tfrc set ndatapack_]\}\]\}"
    puts $out
}
tf_interval start 5 20
tf_interval steady 30 60

$ns at 60 "tf_report; exit 0"
$ns run
