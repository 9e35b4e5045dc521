# Twin of short_transfers.toml: forty short NewReno transfers (4 to 64 packets)
# started 150 ms apart on a 10 Mb/s, 30 ms link with an 8-packet DropTail queue;
# compared: the median completion time.
source [file join [file dirname [info script]] lib.tcl]
lassign [mf_chain {10Mb 30ms 8}] s p
set sizes {4 8 16 32 64}
for {set i 0} {$i < 40} {incr i} {
    mf_sized_flow t$i newreno $s $p [expr {$i * 0.15}] 1000 1000 [lindex $sizes [expr {$i % 5}]]
}
mf_run 15
