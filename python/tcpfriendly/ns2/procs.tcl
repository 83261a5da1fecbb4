# ---- measurement helpers -------------------------------------------------
# Byte counters in ns-2 are C ints (they wrap past 2^31); `accumulate` adds
# wrap-safe increments so long, fast runs stay exact.

proc tcp_snapshot {i} {
    global tcp sink SNAP ACC LOSSCTR
    set SNAP($i,sent)   $ACC($i,sentbytes)
    set SNAP($i,rexmit) $ACC($i,rexmitbytes)
    set SNAP($i,dlv)    $ACC($i,sinkbytes)
    set SNAP($i,cuts)   [$tcp($i) set ncwndcuts_]
    set SNAP($i,cuts1)  [$tcp($i) set ncwndcuts1_]
    set SNAP($i,lossev) [$tcp($i) set $LOSSCTR($i)]
    set SNAP($i,to)     [$tcp($i) set nrexmit_]
    set SNAP($i,ecn)    [$tcp($i) set necnresponses_]
}

proc tcp_accumulate {i} {
    global tcp sink ACC
    acc1 $i sentbytes [$tcp($i) set ndatabytes_]
    acc1 $i rexmitbytes [$tcp($i) set nrexmitbytes_]
    acc1 $i sinkbytes [$sink($i) set bytes_]
}

# rate-based (TFRC) flows: packets sent by the sender, bytes received by the sink
proc rate_snapshot {i} {
    global tfrc SNAP ACC
    set SNAP($i,sent) [$tfrc($i) set ndatapack_]
    set SNAP($i,dlv)  $ACC($i,sinkbytes)
}

proc rate_accumulate {i} {
    global sink ACC
    acc1 $i sinkbytes [$sink($i) set bytes_]
}

# in-order data packets in `bytes` of a sink's bytes_ (the SYN's SYNHDR bytes, then PKT+HDR
# per packet)
proc sink_pkts {bytes} {
    global PKT HDR SYNHDR
    set b [expr {$bytes >= $SYNHDR ? $bytes - $SYNHDR : 0}]
    return [expr {$b / ($PKT + $HDR)}]
}

proc acc1 {i key cur} {
    global ACC
    set ACC($i,$key) [expr {$ACC($i,$key) + (($cur - $ACC($i,last$key)) & 0xFFFFFFFF)}]
    set ACC($i,last$key) $cur
}

proc cbr_snapshot {i} {
    global sink SNAP
    set e [$sink($i) set expected_]
    if {$e < 0} { set e 0 }
    set SNAP($i,sent) $e
    set SNAP($i,dlv) [$sink($i) set npkts_]
}

proc link_accumulate {l} {
    global qmon LACC
    set cur [$qmon($l) set bdepartures_]
    set LACC($l,bytes) [expr {$LACC($l,bytes) + (($cur - $LACC($l,lastbytes)) & 0xFFFFFFFF)}]
    set LACC($l,lastbytes) $cur
}

proc link_snapshot {l} {
    global qmon LSNAP LACC
    link_accumulate $l
    set qi [$qmon($l) get-pkts-integrator]
    $qi newpoint [[Simulator instance] now] [$qi set lasty_]
    set LSNAP($l,bytes) $LACC($l,bytes)
    set LSNAP($l,pdep)  [$qmon($l) set pdepartures_]
    set LSNAP($l,parr)  [$qmon($l) set parrivals_]
    set LSNAP($l,drops) [$qmon($l) set pdrops_]
    set LSNAP($l,marks) [$qmon($l) set pmarks_]
    set LSNAP($l,qint)  [$qi set sum_]
}

# cwnd/srtt/RTO sampler: runs only inside the measurement window
proc sample {} {
    global ns TCPFLOWS START STOP WND CWS CWN RTS RTN ROS tcp SAMPLE_DT MEASURE_TO
    set now [$ns now]
    foreach i $TCPFLOWS {
        if {$now < $START($i) || ($STOP($i) >= 0 && $now >= $STOP($i))} { continue }
        set c [$tcp($i) set cwnd_]
        # ns-2 lets cwnd_ grow past window_; the usable window is the minimum
        if {$c > $WND($i)} { set c $WND($i) }
        set CWS($i) [expr {$CWS($i) + $c}]
        incr CWN($i)
        set s [$tcp($i) set srtt_]
        if {$s > 0} {
            # srtt_ is kept in ticks scaled by 8 (T_SRTT_BITS = 3); read the tick now:
            # TCP/Linux switches it to 1 ms (a jiffy) when a module is selected
            set tick [$tcp($i) set tcpTick_]
            set RTS($i) [expr {$RTS($i) + $s / 8.0 * $tick}]
            incr RTN($i)
            # the RTO before backoff, as rtt_update and rtt_timeout compute it: (srtt + 4 var)
            # (rttvar_ is kept in ticks scaled by 4), at least minrto_, at most maxrto_
            set rto [expr {($s / 8 + [$tcp($i) set rttvar_]) * $tick}]
            set lo [$tcp($i) set minrto_]; set hi [$tcp($i) set maxrto_]
            if {$rto < $lo} { set rto $lo }
            if {$rto > $hi} { set rto $hi }
            set ROS($i) [expr {$ROS($i) + $rto}]
        }
    }
    set nxt [expr {$now + $SAMPLE_DT}]
    if {$nxt < $MEASURE_TO} { $ns at $nxt "sample" }
}

# the time series (the engine's `timeseries`): every SERIES_DT s, per window-based and
# rate-based flow in flow order, the packets delivered over the interval ending now (in order,
# for a window-based flow), its usable window and ssthresh now (null for a rate-based flow,
# which has neither), then per monitored link its bytes sent, drops and queue; printed for the intervals
# inside the measurement window (counted from 0 so that no counter wraps twice)
proc series {k} {
    global ns FLOWS KIND tcp sink WND SER ACC SERIES_DT MEASURE_FROM MEASURE_TO SERIES_NEXT PKT HDR
    global LINKS LACC LSER qmon
    set now [$ns now]
    set SERIES_NEXT 0
    foreach i $FLOWS {
        if {$KIND($i) == "tcp"} {
            acc1 $i sinkbytes [$sink($i) set bytes_]
            set p [sink_pkts $ACC($i,sinkbytes)]
        } elseif {$KIND($i) == "rate"} {
            # the TFRC sink counts data packets as they were on the wire (PKT + HDR)
            acc1 $i sinkbytes [$sink($i) set bytes_]
            set p [expr {$ACC($i,sinkbytes) / ($PKT + $HDR)}]
        } else { continue }
        if {$now - $SERIES_DT >= $MEASURE_FROM - 1e-9} {
            if {$KIND($i) == "tcp"} {
                set c [$tcp($i) set cwnd_]
                if {$c > $WND($i)} { set c $WND($i) }
                # ssthresh_ starts at window_ in ns-2; the engine's is null until the first
                # window reduction (ncwndcuts_ counts them, timeouts included)
                if {[$tcp($i) set ncwndcuts_] > 0} { set st [$tcp($i) set ssthresh_] } else { set st null }
            } else { set c null; set st null }
            puts "SERIES t=$now id=$i dlv=[expr {$p - $SER($i,pkts)}] cwnd=$c ssthresh=$st"
        }
        set SER($i,pkts) $p
    }
    # per monitored link: the bytes that started on the wire and the queue drops over the
    # interval, and the packets waiting now (the one on the wire excluded)
    foreach l $LINKS {
        link_accumulate $l
        set b $LACC($l,bytes)
        set d [$qmon($l) set pdrops_]
        set m [$qmon($l) set pmarks_]
        if {$now - $SERIES_DT >= $MEASURE_FROM - 1e-9} {
            puts "LSERIES t=$now key=$l bytes=[expr {$b - $LSER($l,bytes)}] drops=[expr {$d - $LSER($l,drops)}] marks=[expr {$m - $LSER($l,marks)}] q=[$qmon($l) set pkts_]"
        }
        set LSER($l,bytes) $b
        set LSER($l,drops) $d
        set LSER($l,marks) $m
    }
    set nxt [expr {($k + 1) * $SERIES_DT}]
    if {$nxt <= $MEASURE_TO + 1e-9} {
        set SERIES_NEXT [expr {$k + 1}]
        $ns at $nxt "series $SERIES_NEXT"
    }
}

# at the end of the run: the sample due now (its event, scheduled later, would follow `exit`)
proc series_finish {} {
    global ns SERIES_NEXT SERIES_DT
    if {$SERIES_NEXT > 0 && abs($SERIES_NEXT * $SERIES_DT - [$ns now]) < 1e-9} { series $SERIES_NEXT }
}

# keeps the wrap-safe byte counters current (a C int cannot wrap twice in 5 s)
proc accumulate {} {
    global ns TCPFLOWS RATEFLOWS MEASURE_TO LINKS
    foreach i $TCPFLOWS { tcp_accumulate $i }
    foreach i $RATEFLOWS { rate_accumulate $i }
    foreach l $LINKS { link_accumulate $l }
    set nxt [expr {[$ns now] + 5.0}]
    if {$nxt < $MEASURE_TO} { $ns at $nxt "accumulate" }
}

proc measure_start {} {
    global FLOWS KIND SAMPLE_DT LINKS
    foreach i $FLOWS {
        if {$KIND($i) == "tcp"} {
            tcp_accumulate $i; tcp_snapshot $i
        } elseif {$KIND($i) == "rate"} {
            rate_accumulate $i; rate_snapshot $i
        } else { cbr_snapshot $i }
    }
    foreach l $LINKS { link_snapshot $l }
    if {$SAMPLE_DT > 0} { sample }
}

proc measure_end {} {
    global ns FLOWS KIND GROUP SNAP tcp sink CWS CWN RTS RTN ROS PKT HDR SYNHDR LSNAP LINKS LINKRATE DROPTRACE
    set t [$ns now]
    set total 0
    foreach i $FLOWS {
        if {$KIND($i) == "tcp"} {
            tcp_accumulate $i
            set s0 $SNAP($i,sent); set r0 $SNAP($i,rexmit); set d0 $SNAP($i,dlv)
            set c0 $SNAP($i,cuts); set c10 $SNAP($i,cuts1); set t0 $SNAP($i,to); set e0 $SNAP($i,ecn)
            set l0 $SNAP($i,lossev)
            tcp_snapshot $i
            set sent   [expr {($SNAP($i,sent) - $s0) / $PKT}]
            set rexmit [expr {($SNAP($i,rexmit) - $r0) / $PKT}]
            # sink bytes_ counts in-order bytes as they were on the wire: the
            # SYN once (SYNHDR = 40 bytes with syn_ true, 0 without), then
            # PKT+HDR per data packet.
            set dlv [expr {[sink_pkts $SNAP($i,dlv)] - [sink_pkts $d0]}]
            set cw [expr {$CWN($i) > 0 ? double($CWS($i)) / $CWN($i) : "null"}]
            set rt [expr {$RTN($i) > 0 ? double($RTS($i)) / $RTN($i) : "null"}]
            set ro [expr {$RTN($i) > 0 ? double($ROS($i)) / $RTN($i) : "null"}]
            puts "FLOW id=$i group=$GROUP($i) kind=tcp sent=$sent rexmit=$rexmit delivered=$dlv ncwndcuts=[expr {$SNAP($i,cuts) - $c0}] ncwndcuts1=[expr {$SNAP($i,cuts1) - $c10}] lossev=[expr {$SNAP($i,lossev) - $l0}] ntimeouts=[expr {$SNAP($i,to) - $t0}] necn=[expr {$SNAP($i,ecn) - $e0}] mean_cwnd=$cw mean_srtt=$rt mean_rto=$ro"
        } elseif {$KIND($i) == "rate"} {
            rate_accumulate $i
            set s0 $SNAP($i,sent); set d0 $SNAP($i,dlv)
            rate_snapshot $i
            set sent [expr {$SNAP($i,sent) - $s0}]
            # the TFRC sink counts data packets as they were on the wire (PKT + HDR)
            set dlv [expr {$SNAP($i,dlv) / ($PKT + $HDR) - $d0 / ($PKT + $HDR)}]
            puts "FLOW id=$i group=$GROUP($i) kind=rate sent=$sent delivered=$dlv"
        } else {
            set s0 $SNAP($i,sent); set d0 $SNAP($i,dlv)
            cbr_snapshot $i
            set sent [expr {$SNAP($i,sent) - $s0}]
            set dlv [expr {$SNAP($i,dlv) - $d0}]
            puts "FLOW id=$i group=$GROUP($i) kind=$KIND($i) sent=$sent delivered=$dlv"
        }
        incr total $dlv
    }
    foreach l $LINKS {
        set b0 $LSNAP($l,bytes); set p0 $LSNAP($l,pdep); set a0 $LSNAP($l,parr); set d0 $LSNAP($l,drops); set m0 $LSNAP($l,marks); set q0 $LSNAP($l,qint)
        link_snapshot $l
        puts "LINK key=$l rate=$LINKRATE($l) bytes=[expr {$LSNAP($l,bytes) - $b0}] pkts=[expr {$LSNAP($l,pdep) - $p0}] arrivals=[expr {$LSNAP($l,parr) - $a0}] drops=[expr {$LSNAP($l,drops) - $d0}] marks=[expr {$LSNAP($l,marks) - $m0}] qint=[expr {$LSNAP($l,qint) - $q0}]"
    }
    puts "TOTAL delivered_pkts=$total t=$t"
    if {$DROPTRACE != ""} { flush $DROPTRACE }
    flush stdout
}
