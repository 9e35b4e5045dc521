//! Configuration of a TCP connection: every knob the RFCs leave to the implementation,
//! with RFC defaults, and [`TcpConfig::ns2`], the conventions of ns-2's one-way TCP
//! agents (Agent/TCP/Newreno + TCPSink) so that cross-checks compare models, not
//! settings.

use super::delack::AckPolicy;
use super::ext::SenderExtSet;
use super::handoff::{HandoffReaction, HandoffSignal};
use super::idle::IdleRestart;
use super::jiffies::Clock;
use super::rtt::RtoFormula;
use crate::cc::{CcKind, CubicParams};
use crate::flow::FlowControl;
use crate::time::Duration;

crate::named_enum! {
    /// Loss recovery algorithm used after a fast retransmit.
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum Recovery ("recovery") {
        /// RFC 5681 §3.2 fast recovery: leave recovery on the first new ACK. Entry is
        /// guarded by RFC 6582's `recover` as in ns-2's `bugfix_`, so one window of
        /// losses causes one reduction.
        Reno = "reno",
        /// RFC 6582 NewReno: stay in recovery until the recovery point is acknowledged,
        /// retransmitting on each partial ACK.
        NewReno = "newreno" | "new_reno",
        /// RFC 6675 SACK-based loss recovery (requires SACK; when the peer does not
        /// agree to SACK, the sender falls back to NewReno, as Linux does).
        Sack = "sack",
    }
}

crate::named_enum! {
    /// How the sender decides that a segment is lost, with SACK (without SACK, only
    /// duplicate ACKs: RFC 5681 §3.2, RFC 6582).
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum LossDetection ("loss_detection") {
        /// RFC 6675 §4 `IsLost`: DupThresh SACKed segments above, and recovery starts
        /// on the DupThresh-th duplicate ACK (RFC 5681 §3.2).
        DupThresh = "dupthresh",
        /// RACK (RFC 8985 §6, `tcp::rack`): a segment is lost once a segment sent after
        /// it is delivered and a reordering window has passed; recovery starts when
        /// RACK marks a loss, never on a count of duplicate ACKs (Linux
        /// `tcp_recovery = 1`: `tcp_time_to_recover` ignores the dupthresh rule when
        /// RACK is on).
        Rack = "rack",
    }
}

crate::named_enum! {
    /// Which ACKs give RTT samples when timestamps are off (RFC 6298 §3 leaves the
    /// choice to the implementation, within Karn's rule).
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum RttSampling ("rtt_sampling", reading "_" as "-") {
        /// Every ACK of new data, timed from the newest segment it covers, unless it
        /// covers a retransmitted segment (Linux's `FLAG_RETRANS_DATA_ACKED`): after a
        /// timeout no sample comes until all retransmitted data is acknowledged.
        EveryAck = "every-ack",
        /// One segment timed at a time (the BSD "rtt timer", as ns-2's `rtt_active_` /
        /// `rtt_seq_`): timing starts at a new (never sent) segment when none is timed,
        /// stops on a timeout or fast retransmit, and the sample comes from the ACK
        /// that covers the timed segment, even if it also covers retransmitted ones
        /// (the timed segment itself was sent once: Karn's rule holds). One sample per
        /// RTT.
        TimedSegment = "timed-segment",
    }
}

/// How the initial window is chosen.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum InitialWindow {
    /// RFC 3390: min(4*MSS, max(2*MSS, 4380 bytes)).
    Rfc3390,
    /// RFC 6928: min(10*MSS, max(2*MSS, 14600 bytes)).
    Rfc6928,
    /// A fixed number of segments.
    Segments(u32),
}

/// All parameters of a TCP sender and receiver.
///
/// `repr(C)`, the fields in the order written: those the sender reads on every ACK
/// and every segment it sends come first, in one cache line (each flow's sender keeps
/// its own copy, out of the L1 cache with many flows); Rust's own order (by
/// alignment) spread them over three.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct TcpConfig {
    /// Upper bound on the sender's window regardless of the receiver (ns-2 `window_`,
    /// in bytes); `u64::MAX` for none.
    pub max_send_window: u64,
    /// Receive buffer in bytes: the advertised window is derived from its free space.
    pub rcv_buf: u64,
    /// Tick of the TSval clock (RFC 7323 §5.4: between 1 ms and 1 s).
    pub ts_granularity: Duration,
    /// Maximum segment size: payload bytes per full segment.
    pub mss: u32,
    /// Bytes of IP + TCP headers counted on the wire per segment (without options).
    pub header_bytes: u32,
    /// Duplicate ACKs that trigger a fast retransmit (RFC 5681 §3.2: 3).
    pub dupack_threshold: u32,
    /// Count TCP options (timestamps, SACK) in the wire size, as a real stack does.
    /// ns-2 does not.
    pub count_option_bytes: bool,
    /// Loss recovery after a fast retransmit.
    pub recovery: Recovery,
    /// Which ACKs give RTT samples when timestamps are off.
    pub rtt_sampling: RttSampling,
    /// Use RFC 7323 timestamps (negotiated with the receiver in the handshake).
    pub timestamps: bool,
    /// Use SACK (RFC 2018). Recovery `Sack` requires it.
    pub sack: bool,
    /// Restart from the initial window after an idle period longer than the RTO
    /// (RFC 5681 §4.1).
    pub idle_restart: bool,
    /// Limited transmit (RFC 3042).
    pub limited_transmit: bool,
    /// Congestion-window validation (RFC 7661 §4, as Linux's `tcp_is_cwnd_limited`):
    /// cwnd grows only while it limits the sender, not while the receiver's window or
    /// the application does. ns-2 grows cwnd regardless.
    pub cwnd_validation: bool,
    /// Loss detection with SACK: RFC 6675's DupThresh rule or RACK (RFC 8985).
    pub loss_detection: LossDetection,
    /// Tail loss probe (RFC 8985 §7, Linux `tcp_schedule_loss_probe`,
    /// `tcp_send_loss_probe`; needs SACK): in the open state, a probe after about two
    /// SRTT without an ACK, so that a loss at the tail is found by RACK instead of a
    /// retransmission timeout.
    pub tlp: bool,
    /// Proportional rate reduction (RFC 6937, Linux `tcp_cwnd_reduction`) for cwnd
    /// during SACK recovery; off, cwnd is ssthresh from the fast retransmit on (RFC
    /// 6675 §5).
    pub prr: bool,
    /// RTT samples from SACKed segments never retransmitted (Linux
    /// `tcp_sacktag_one`'s `first_sackt`, `tcp_ack_update_rtt`), when the ACK gives no
    /// other sample (a duplicate ACK, or Karn's rule).
    pub sack_rtt: bool,
    /// Receive-window policy (classic, AFC, auto-tuning). AFC also changes the
    /// sender (`flow::afc`).
    pub flow_control: FlowControl,
    /// Congestion controller.
    pub cc: CcKind,
    /// Initial ssthresh in bytes (RFC 5681 §3.1: arbitrarily high).
    pub initial_ssthresh: u64,
    /// Upper bound on cwnd, bytes (ns-2 `maxcwnd_`); `u64::MAX` for none.
    pub max_cwnd: u64,
    /// RTO lower bound (RFC 6298 §2.4: 1 s; Linux 200 ms).
    pub min_rto: Duration,
    /// RTO upper bound (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// Clock granularity G of RFC 6298 §2.3, and the tick of RTO arithmetic.
    pub clock_granularity: Duration,
    /// Delayed-ACK timeout (RFC 1122: at most 500 ms).
    pub delack_timeout: Duration,
    /// Persist timer: shortest and longest probe interval (RFC 1122 §4.2.2.17 backoff).
    pub persist_min: Duration,
    pub persist_max: Duration,
    /// How long before the disconnection the receiver learns of it and freezes
    /// (ideally about one RTT; [SLIDE/GUESS]).
    pub freeze_warning: Duration,
    pub initial_window: InitialWindow,
    /// Maximum number of RTO backoff doublings (RFC 6298 §5.5 leaves it open).
    pub max_backoff_exponent: u32,
    /// Full-sized segments after which an ACK is sent at once (RFC 5681 §4.2: 2).
    pub ack_every: u32,
    /// Sender extensions turned on by name (`tcp::ext`; only those the list marks
    /// `listed`: the others follow from the settings above).
    pub extensions: SenderExtSet,
    /// Window-scale shift the receiver offers (RFC 7323 §2); `None` picks the smallest
    /// shift that fits `rcv_buf`.
    pub wscale: Option<u8>,
    /// How the window-based controllers count what an ACK acknowledged: bytes (RFC
    /// 5681), ACKs (ns-2) or segments delivered (Linux) ([`crate::cc::Counting`]).
    pub window_counting: crate::cc::Counting,
    /// How the RTO follows from the RTT samples (`tcp::rtt`): RFC 6298 or Linux's
    /// `tcp_rtt_estimator` / `__tcp_set_rto`.
    pub rto_formula: RtoFormula,
    /// On a second timeout of the same data, hold ssthresh (RFC 5681 §3.1) rather than
    /// halving what is in flight again (ns-2, which then sets it to 2 segments).
    pub hold_ssthresh_on_repeated_rto: bool,
    /// Exchange SYN / SYN-ACK before data (one RTT); ns-2's one-way agents model the
    /// same with a 40-byte first packet (`syn_ true`, `delay_growth_ true`).
    pub handshake: bool,
    /// Delayed ACKs at the receiver (RFC 5681 §4.2, RFC 1122 §4.2.3.2).
    pub delayed_ack: bool,
    /// When delayed ACKs go out (`tcp::delack`): RFC 5681 §4.2 (`ack_every`,
    /// `delack_timeout`) or Linux's quick-ACK mode and adaptive `ato`, which replace
    /// both.
    pub ack_policy: AckPolicy,
    /// Receiver silly-window-syndrome avoidance (RFC 1122 §4.2.3.3, RFC 9293 §3.8.6.2.2).
    pub receiver_sws: bool,
    /// Sender SWS avoidance (RFC 1122 §4.2.3.4): while data is in flight, do not send
    /// a segment shorter than the MSS because the receiver's window is short, unless it
    /// is at least half the largest window offered. Off by default: Linux and ns-2
    /// fill the offered window to its edge.
    pub sender_sws: bool,
    /// How cwnd restarts after idle (`tcp::idle`): RFC 5681 §4.1 (the restart window
    /// at once) or Linux's `tcp_cwnd_restart` (halved per RTO idle).
    pub idle_restart_rule: IdleRestart,
    /// With `limited_transmit`, also on the first two duplicate ACKs after a
    /// retransmission timeout, while the go-back-N resend is under way: each lets one
    /// more segment out beyond cwnd, as ns-2 does (`RenoTcpAgent::timeout` zeroes
    /// `dupacks_`, and `TcpAgent::send_one` then sends the next packet while it is
    /// within `highest_ack_ + cwnd_ + dupacks_`). Off: limited transmit only outside
    /// any recovery (RFC 3042 §2 describes it for a connection without loss recovery
    /// under way).
    pub limited_transmit_after_timeout: bool,
    /// Restart the retransmission timer when a fast retransmit starts a recovery, as
    /// ns-2 does (`reset_rtx_timer(1, 0)` in `TcpAgent::dupack_action`,
    /// `NewRenoTcpAgent::dupack_action`, `Sack1TcpAgent::dupack_action`). Off: RFC 6298
    /// §5.3, the timer restarts only on ACKs of new data, so a recovery whose first
    /// ACK takes longer than the time left since the last new ACK ends in a timeout.
    pub rto_restart_on_fast_retransmit: bool,
    /// Send a window update when the application's reads open the window (RFC 9293
    /// §3.8.6.2.2). Off, the sender learns of a reopened window only from ACKs of
    /// arriving data or of its zero-window probes (a receiver without window updates).
    pub window_updates: bool,
    /// Sender's reaction to an interface change of the mobile host (`tcp::handoff`; the
    /// vertical-handoff paper: Tsukamoto, Fukuda, Hori and Oie, "New flow control schemes
    /// of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6), 2006): none,
    /// IETT, BA-SST or both.
    pub handoff_reaction: HandoffReaction,
    /// How a mobile receiver tells the sender of the change ([GUESS]).
    pub handoff_signal: HandoffSignal,
    /// BA-SST re-estimates from later packet pairs of the slow start after the change
    /// (Aron & Druschel); off, only the first pair counts (Hoe) ([GUESS]).
    pub ba_sst_refine: bool,
    /// On an interface change (with a reaction), forget SRTT/RTTVAR: the RTO starts
    /// again from `initial_rto` and the new path's first sample ([GUESS]; the seed
    /// does not say).
    pub handoff_reset_rtt: bool,
    /// Freeze-TCP at the receiver (Goff et al. 2000): a zero window `freeze_warning`
    /// before each predicted disconnection, three TR-ACKs on reconnection.
    pub freeze: bool,
    /// D-SACK at the receiver (RFC 2883; Linux `tcp_dsack = 1`): the first SACK block
    /// of the next ACK reports a segment that arrived with bytes already received
    /// (`tcp::dsack`). Only with SACK.
    pub dsack: bool,
    /// Undo of a congestion reduction proven spurious (Linux `tcp_try_undo_recovery`,
    /// `tcp_try_undo_partial`, `tcp_try_undo_dsack`, `tcp_try_undo_loss`): by the
    /// Eifel detection (RFC 3522, with timestamps) or when every retransmission of the
    /// episode was D-SACKed (RFC 3708); the controller gets its window back
    /// (`tcp::undo`).
    pub undo: bool,
    /// F-RTO after a retransmission timeout (RFC 5682 §3, the SACK-enhanced version,
    /// as Linux `tcp_process_loss` with `tcp_frto = 2`): new data on the first ACK,
    /// and an undo if the next acknowledges data that was never retransmitted
    /// (`tcp::undo`).
    pub frto: bool,
}

impl Default for TcpConfig {
    /// RFC defaults: the behaviour a standards-following stack has.
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            header_bytes: 40,
            count_option_bytes: true,
            cc: CcKind::NewReno,
            recovery: Recovery::Sack,
            dupack_threshold: 3,
            loss_detection: LossDetection::DupThresh,
            tlp: false,
            prr: false,
            sack_rtt: false,
            initial_window: InitialWindow::Rfc3390,
            initial_ssthresh: u64::MAX,
            max_cwnd: u64::MAX,
            max_send_window: u64::MAX,
            window_counting: crate::cc::Counting::Bytes,
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(1),
            clock_granularity: Duration::from_millis(1),
            rto_formula: RtoFormula::Rfc6298,
            rtt_sampling: RttSampling::EveryAck,
            max_backoff_exponent: 6,
            hold_ssthresh_on_repeated_rto: true,
            timestamps: true,
            ts_granularity: Duration::from_millis(1),
            sack: true,
            handshake: true,
            delayed_ack: true,
            delack_timeout: Duration::from_millis(200),
            ack_every: 2,
            ack_policy: AckPolicy::Rfc5681,
            rcv_buf: 1 << 22,
            wscale: None,
            receiver_sws: true,
            sender_sws: false,
            persist_min: Duration::from_millis(200),
            persist_max: Duration::from_secs(60),
            idle_restart: true,
            idle_restart_rule: IdleRestart::Rfc5681,
            limited_transmit: true,
            limited_transmit_after_timeout: false,
            rto_restart_on_fast_retransmit: false,
            cwnd_validation: true,
            window_updates: true,
            flow_control: FlowControl::Classic,
            handoff_reaction: HandoffReaction::None,
            handoff_signal: HandoffSignal::AckOption,
            ba_sst_refine: true,
            handoff_reset_rtt: false,
            freeze: false,
            freeze_warning: Duration::from_millis(100),
            dsack: false,
            undo: false,
            frto: false,
            extensions: SenderExtSet::EMPTY,
        }
    }
}

impl TcpConfig {
    /// The clock the sender's timers run on, the one place that decides it: Linux's
    /// RTO formula comes with the kernel's timer wheel (`tcp::jiffies`), which arms the
    /// retransmission timer (`icsk_retransmit_timer`) and the loss probe's; every other
    /// profile fires timers at exactly their time. The sender reads it once, when it is
    /// built.
    pub fn clock(&self) -> Clock {
        match self.rto_formula {
            RtoFormula::Linux => Clock::Jiffies,
            RtoFormula::Rfc6298 => Clock::Exact,
        }
    }

    /// The conventions of ns-2.35's Agent/TCP/Newreno with a TCPSink, as the seed
    /// documents' simulations used them: no timestamps, no SACK, no delayed ACKs,
    /// window growth counted per ACK in packets, 1000-byte packets with a 40-byte
    /// header, `minrto_ 0.2`, `tcpTick_ 0.01`, `maxrto_ 60`, `windowInit_ 2`.
    ///
    /// Two of ns-2.35's defaults (`tcl/lib/ns-default.tcl`) are on as well:
    /// * `syn_ true` with `delay_growth_ true`: the first packet is a 40-byte SYN-like
    ///   packet (`TcpAgent::output`, seqno 0 carries no data) and the window stays at
    ///   one packet until it is acknowledged, then becomes `windowInit_`
    ///   (`TcpAgent::set_initial_window`, `NewRenoTcpAgent::recv`): data starts one
    ///   RTT later, and that RTT is the first sample. Here `handshake = true` (a
    ///   header-only SYN, the SYN-ACK opening the initial window).
    /// * `singledup_ 1`: limited transmit (RFC 3042; `TcpAgent::send_one` sends one new
    ///   packet on each of the first two duplicate ACKs): `limited_transmit = true`.
    ///   A timeout zeroes `dupacks_` (`RenoTcpAgent::timeout`), so the first two
    ///   duplicate ACKs after it send one packet each too:
    ///   `limited_transmit_after_timeout = true`.
    ///
    /// The fast retransmit restarts the retransmission timer (`reset_rtx_timer(1, 0)`
    /// in `dupack_action`): `rto_restart_on_fast_retransmit = true`.
    pub fn ns2() -> Self {
        TcpConfig {
            mss: 1000,
            header_bytes: 40,
            count_option_bytes: false,
            cc: CcKind::NewReno,
            recovery: Recovery::NewReno,
            initial_window: InitialWindow::Segments(2),
            window_counting: crate::cc::Counting::PerAck,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(3),
            clock_granularity: Duration::from_millis(10),
            rtt_sampling: RttSampling::TimedSegment,
            hold_ssthresh_on_repeated_rto: false,
            timestamps: false,
            sack: false,
            // ns-2.35: `syn_ true`, `delay_growth_ true`.
            handshake: true,
            delayed_ack: false,
            receiver_sws: false,
            sender_sws: false,
            idle_restart: false,
            // ns-2.35: `singledup_ 1` (RFC 3042), after a timeout too.
            limited_transmit: true,
            limited_transmit_after_timeout: true,
            // ns-2.35: every `dupack_action` restarts the timer.
            rto_restart_on_fast_retransmit: true,
            cwnd_validation: false,
            ..TcpConfig::default()
        }
    }

    /// What an unmodified Linux 6.x stack does by default (`profile = "linux"`), as far
    /// as this crate models it; each value is the kernel's default and where it is set:
    ///
    /// * `mss = 1448`: a 1500-byte MTU less 40 bytes of headers and the 12 bytes of the
    ///   timestamp option, which Linux takes out of `mss_cache` (`tcp_sync_mss`,
    ///   `tcp_current_mss`); options are counted on the wire.
    /// * `cc = cubic` (`CONFIG_DEFAULT_TCP_CONG`) with the kernel's arithmetic and HyStart
    ///   (`tcp_cubic.c`, [`CubicParams::linux`]); SACK (`tcp_sack = 1`), timestamps
    ///   (`tcp_timestamps = 1`) and the handshake.
    /// * initial window 10 segments (`TCP_INIT_CWND`, `tcp_init_cwnd`; RFC 6928).
    /// * `rto_min` 200 ms (`TCP_RTO_MIN`), initial RTO 1 s (`TCP_TIMEOUT_INIT`, RFC 6298
    ///   §2.1), at most 120 s (`TCP_RTO_MAX`), backed off up to `tcp_retries2 = 15`
    ///   times; the RTT clock in microseconds (`tcp_rtt_estimator` works in µs).
    /// * Linux's delayed ACKs (`ack_policy = linux`, `tcp::delack`): quick-ACK mode
    ///   (`tcp_incr_quickack`, `tcp_enter_quickack_mode`), an ACK once more than one
    ///   `rcv_mss` is unacknowledged (`__tcp_ack_snd_check`), otherwise the adaptive
    ///   `ato` from 40 ms (`TCP_ATO_MIN`, `tcp_event_data_recv`, `tcp_send_delayed_ack`,
    ///   at most `TCP_DELACK_MAX` = 200 ms), SACK compression; `delack_timeout` 40 ms
    ///   and `ack_every` 2 are what the RFC policy would use.
    /// * the kernel's RTO formula (`rto_formula = linux`: `tcp_rtt_estimator`,
    ///   `__tcp_set_rto`, RTO = SRTT + max(4 mdev, rto_min) with mdev held per RTT).
    /// * a repeated timeout keeps ssthresh (`tcp_enter_loss` sets it only when not
    ///   already in `TCP_CA_Loss`); the retransmission of the head restarts the timer
    ///   (`tcp_xmit_retransmit_queue` rearms `ICSK_TIME_RETRANS`).
    /// * congestion-window validation (`tcp_is_cwnd_limited`), restart after idle
    ///   (`tcp_slow_start_after_idle = 1`; `idle_restart_rule = linux`:
    ///   `tcp_cwnd_restart` halves cwnd per RTO idle, `tcp::idle`), limited transmit
    ///   (with SACK, each duplicate ACK frees a slot in `tcp_packets_in_flight`),
    ///   receiver SWS avoidance (`__tcp_select_window`), no sender SWS avoidance
    ///   (Linux fills the offered window: `tcp_snd_wnd_test`), TSval in milliseconds
    ///   (`tcp_time_stamp_ts`).
    ///
    /// * loss detection by RACK (`tcp_recovery = 1`: `tcp_rack_mark_lost`), the tail
    ///   loss probe (`tcp_early_retrans = 3`: `tcp_schedule_loss_probe`), proportional
    ///   rate reduction in recovery (`tcp_cwnd_reduction`) and RTT samples from SACKed
    ///   data (`tcp_sacktag_one`, `tcp_ack_update_rtt`).
    ///
    /// * D-SACK (`tcp_dsack = 1`, `tcp_dsack_set`), F-RTO (`tcp_frto = 2`,
    ///   `tcp_process_loss`) and the undo of spurious reductions (`tcp_try_undo_*`,
    ///   `tcp_undo_cwnd_reduction`).
    ///
    /// * receive-buffer auto-tuning (`flow_control = linux`, `flow::linux`): the
    ///   buffer starts at `tcp_rmem[1]` = 128 KB (half of it window) and
    ///   `tcp_rcv_space_adjust` grows it up to `tcp_rmem[2]` = 6 MB, whose window, 3
    ///   MB, is `rcv_buf` (Linux 6.18 raised `tcp_rmem[2]` to 32 MB).
    ///
    /// * CUBIC as `tcp_cubic.c` computes it, with HyStart (`CubicParams::linux`).
    pub fn linux() -> Self {
        TcpConfig {
            mss: 1448,
            header_bytes: 40,
            count_option_bytes: true,
            cc: CcKind::Cubic(CubicParams::linux()),
            // Windows in segments (`tcp_slow_start`, `tcp_cong_avoid_ai`,
            // `tcp_reno_ssthresh`): Reno and NewReno grow as the kernel's `reno`.
            window_counting: crate::cc::Counting::Segments,
            recovery: Recovery::Sack,
            initial_window: InitialWindow::Segments(10),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            initial_rto: Duration::from_secs(1),
            clock_granularity: Duration::from_micros(1),
            rto_formula: RtoFormula::Linux,
            max_backoff_exponent: 15,
            hold_ssthresh_on_repeated_rto: true,
            timestamps: true,
            sack: true,
            handshake: true,
            delayed_ack: true,
            delack_timeout: Duration::from_millis(40),
            ack_every: 2,
            ack_policy: AckPolicy::Linux,
            receiver_sws: true,
            sender_sws: false,
            // The zero-window probe timer: `tcp_probe0_base` (the RTO, at least
            // `TCP_RTO_MIN`), backed off up to `TCP_RTO_MAX` (`tcp_probe0_when`).
            persist_min: Duration::from_millis(200),
            persist_max: Duration::from_secs(120),
            idle_restart: true,
            idle_restart_rule: IdleRestart::Linux,
            limited_transmit: true,
            rto_restart_on_fast_retransmit: true,
            cwnd_validation: true,
            loss_detection: LossDetection::Rack,
            tlp: true,
            prr: true,
            sack_rtt: true,
            dsack: true,
            undo: true,
            frto: true,
            extensions: SenderExtSet::EMPTY,
            // `tcp_rmem` = 4096 131072 6291456: the buffer starts at 128 KB and
            // auto-tuning grows it up to 6 MB, whose window is half (`flow::linux`).
            rcv_buf: 3_145_728,
            flow_control: FlowControl::Linux(crate::flow::LinuxRcvConfig::default()),
            ..TcpConfig::default()
        }
    }

    /// Initial window in bytes.
    pub fn initial_window_bytes(&self) -> u64 {
        use crate::cc::WindowParams;
        match self.initial_window {
            InitialWindow::Rfc3390 => WindowParams::rfc3390_iw(self.mss),
            InitialWindow::Rfc6928 => WindowParams::rfc6928_iw(self.mss),
            InitialWindow::Segments(n) => n as u64 * self.mss as u64,
        }
    }

    /// Window parameters handed to the congestion controller.
    pub fn window_params(&self) -> crate::cc::WindowParams {
        crate::cc::WindowParams {
            initial_window: self.initial_window_bytes(),
            initial_ssthresh: self.initial_ssthresh,
            loss_window_segments: 1,
            max_window: self.max_cwnd,
            counting: self.window_counting,
        }
    }

    /// Check internal consistency; the message names the offending field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.mss == 0 {
            return Err(("mss", "must be at least 1 byte".into()));
        }
        if self.recovery == Recovery::Sack && !self.sack {
            return Err(("recovery", "\"sack\" recovery needs sack = true".into()));
        }
        if self.dupack_threshold == 0 {
            return Err(("dupack_threshold", "must be at least 1".into()));
        }
        if self.min_rto > self.max_rto {
            return Err(("min_rto", "must not exceed max_rto".into()));
        }
        if self.ts_granularity.is_zero() {
            return Err(("ts_granularity", "must be positive".into()));
        }
        if self.ack_every == 0 {
            return Err(("ack_every", "must be at least 1".into()));
        }
        if self.rcv_buf < self.mss as u64 {
            return Err((
                "rcv_buf",
                format!("must hold at least one segment ({} bytes)", self.mss),
            ));
        }
        if matches!(self.flow_control, crate::flow::FlowControl::Rsfc(_)) && !self.timestamps {
            return Err((
                "timestamps",
                "flow_control = \"rsfc\" needs timestamps = true (RSFC estimates the \
                 uplink queueing delay from RFC 7323 timestamps)"
                    .into(),
            ));
        }
        self.flow_control.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::TcpConfig;
    use std::mem::{offset_of, size_of};

    /// The fields the sender reads on every ACK and every segment it sends stay
    /// together at the head (see [`TcpConfig`]), and the whole no larger than it was.
    #[test]
    fn the_per_packet_fields_lie_in_the_first_48_bytes() {
        let ends = [
            offset_of!(TcpConfig, max_send_window) + 8,
            offset_of!(TcpConfig, rcv_buf) + 8,
            offset_of!(TcpConfig, ts_granularity) + 8,
            offset_of!(TcpConfig, mss) + 4,
            offset_of!(TcpConfig, header_bytes) + 4,
            offset_of!(TcpConfig, dupack_threshold) + 4,
            offset_of!(TcpConfig, recovery) + 1,
            offset_of!(TcpConfig, rtt_sampling) + 1,
            offset_of!(TcpConfig, timestamps) + 1,
            offset_of!(TcpConfig, sack) + 1,
            offset_of!(TcpConfig, idle_restart) + 1,
            offset_of!(TcpConfig, limited_transmit) + 1,
            offset_of!(TcpConfig, cwnd_validation) + 1,
        ];
        assert!(ends.iter().all(|&e| e <= 48), "{ends:?}");
        assert!(size_of::<TcpConfig>() <= 280);
    }
}
