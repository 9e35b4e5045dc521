//! Linux's receive window and receive-buffer auto-tuning (dynamic right-sizing), as
//! Linux 6.18 does it (`flow_control = "linux"`; net/ipv4/tcp_input.c,
//! tcp_output.c):
//!
//! * **The buffer** `sk_rcvbuf` starts at `tcp_rmem[1]` = 128 KB and only grows, up to
//!   `tcp_rmem[2]`. Only `scaling_ratio` of it is window (`tcp_win_from_space`); the
//!   rest pays for the kernel's per-packet overhead (skb truesize). The kernel learns
//!   the ratio from the first packets (`tcp_measure_rcv_mss`: payload / truesize,
//!   which depends on the NIC driver); its starting value is
//!   `TCP_DEFAULT_SCALING_RATIO`, one half, which this model keeps.
//!   `TcpConfig::rcv_buf` is the largest *window* (the receiver holds no more than that
//!   unread or out of order), so the buffer's ceiling is `rcv_buf` / ratio: the linux
//!   profile's `rcv_buf` of 3 MB is the window of `tcp_rmem[2]` = 6 MB. This is also
//!   what `mobiflow live` enforces for `rcv_buf` (the window clamp).
//! * **The window** (`__tcp_select_window`): the free window space
//!   (`tcp_space`: ratio × buffer less what the buffer holds), at most
//!   `rcv_ssthresh`. `rcv_ssthresh` starts at the first window offered (at most
//!   65535, the unscaled SYN-ACK field: `tcp_select_initial_window`) and grows with
//!   each data segment of at least 128 bytes by max(2 MSS, 2 × its length), up to
//!   min(`window_clamp`, free space) (`tcp_grow_window`); a segment that grows it is
//!   ACKed at once (`quick |= 1`, see `tcp::delack`). `window_clamp` is ratio ×
//!   buffer.
//! * **Right-sizing** (`tcp_rcv_space_adjust` at each read, `tcp_rcvbuf_grow`): once
//!   per receiver RTT (`tcp_rcv_rtt_measure_ts`: the receiver's estimate), the bytes
//!   the application copied in that RTT less those still queued (`copied`) are
//!   compared with the last measurement (`rcvq_space.space`, first min(rcv_ssthresh,
//!   10 MSS): `tcp_init_buffer_space`). If more, the window wanted is
//!   `2 copied + 4 copied (copied − space) / space` ("DRS is always one RTT late",
//!   plus the slow-start term of Linux 6.18's "tcp: fix too slow tcp_rcvbuf_grow()
//!   action"), plus the data held out of order; the buffer becomes that window over
//!   the ratio, if larger. Out-of-order data also calls the growth with an unchanged
//!   measurement (`tcp_data_queue_ofo`). The kernel adds the span from `rcv_nxt` to the
//!   end of the last out-of-order segment; this model adds the out-of-order bytes (the
//!   span less its holes).
//!
//! Memory pressure (`tcp_clamp_window`, `tcp_adjust_rcv_ssthresh`, pruning) is not
//! modelled, nor is the window-scale shift: the receiver takes it from `rcv_buf` (3 MB:
//! 6) where Linux takes it from `tcp_rmem[2]` (6 MB: 7).

use super::{RcvState, RwndPolicy};
use crate::time::Instant;
use crate::wire::Segment;

/// Parameters of [`LinuxRcv`].
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxRcvConfig {
    /// `tcp_rmem[1]`: the buffer a connection starts with, bytes.
    pub initial_buf: u64,
    /// `scaling_ratio` / 256: the part of the buffer that is window.
    pub scaling_ratio: f64,
}

impl Default for LinuxRcvConfig {
    fn default() -> Self {
        LinuxRcvConfig {
            initial_buf: 131_072,
            scaling_ratio: 0.5,
        }
    }
}

impl LinuxRcvConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.initial_buf == 0 {
            return Err(("initial_buf", "must be positive".into()));
        }
        if !(self.scaling_ratio > 0.0 && self.scaling_ratio <= 1.0) {
            return Err(("scaling_ratio", "must be in (0, 1]".into()));
        }
        Ok(())
    }

    /// `tcp_win_from_space`.
    fn win(&self, space: u64) -> u64 {
        (space as f64 * self.scaling_ratio) as u64
    }

    /// `tcp_space_from_win`.
    fn space(&self, win: u64) -> u64 {
        (win as f64 / self.scaling_ratio) as u64
    }

    /// The buffer's ceiling (`tcp_rmem[2]`) for a largest window of `rcv_buf`.
    fn max_buf(&self, rcv_buf: u64) -> u64 {
        self.space(rcv_buf)
    }

    /// The window of the SYN-ACK for a largest window of `rcv_buf` bytes
    /// (`tcp_select_initial_window`: the unscaled field).
    pub fn initial_window(&self, rcv_buf: u64) -> u64 {
        self.win(self.initial_buf.min(self.max_buf(rcv_buf)))
            .min(u16::MAX as u64)
    }
}

/// `TCP_INIT_CWND`: the first measurement is at most 10 segments.
const INIT_CWND: u64 = 10;
/// `tcp_grow_window` is called for segments of at least this many bytes.
const GROW_MIN_LEN: u32 = 128;

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct LinuxRcv {
    cfg: LinuxRcvConfig,
    /// `sk_rcvbuf`, `window_clamp`, `rcv_ssthresh`.
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: Option<u64>,
    /// `rcvq_space`: the last measurement, and where and when this one started.
    space: u64,
    period: Option<(Instant, u64)>,
    grew: bool,
    /// Buffer growths (`tcp_rcvbuf_grow` that raised `sk_rcvbuf`).
    pub growths: u64,
}

impl LinuxRcv {
    pub fn new(cfg: LinuxRcvConfig) -> Self {
        LinuxRcv {
            rcvbuf: cfg.initial_buf,
            window_clamp: cfg.win(cfg.initial_buf),
            rcv_ssthresh: None,
            space: 0,
            period: None,
            grew: false,
            growths: 0,
            cfg,
        }
    }

    /// `sk_rcvbuf` now, bytes.
    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    /// `rcv_ssthresh` now, bytes (before the first segment: the first offer).
    pub fn rcv_ssthresh(&self) -> Option<u64> {
        self.rcv_ssthresh
    }

    /// `tcp_space`: the free window space.
    fn free_space(&self, st: &RcvState) -> u64 {
        self.cfg
            .win(self.rcvbuf.min(self.cfg.max_buf(st.rcv_buf)))
            .saturating_sub(st.occupancy())
    }

    /// `tcp_rcvbuf_grow` with the new measurement `newval`.
    fn grow_buf(&mut self, newval: u64, st: &RcvState) {
        let old = self.space.max(1);
        self.space = newval;
        let mut rcvwin = 2 * newval;
        rcvwin += 2 * (rcvwin * newval.saturating_sub(old) / old);
        rcvwin += st.ooo_bytes;
        let rcvbuf = self.cfg.space(rcvwin).min(self.cfg.max_buf(st.rcv_buf));
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.cfg.win(rcvbuf);
            self.growths += 1;
        }
    }

    /// `tcp_grow_window`.
    fn grow_window(&mut self, len: u32, st: &RcvState) {
        let Some(ssthresh) = self.rcv_ssthresh else {
            return;
        };
        let room = self.window_clamp.min(self.free_space(st));
        if room <= ssthresh || len < GROW_MIN_LEN {
            return;
        }
        let incr = (2 * st.mss as u64).max(2 * len as u64);
        self.rcv_ssthresh = Some(ssthresh + incr.min(room - ssthresh));
        self.grew = true;
    }
}

impl RwndPolicy for LinuxRcv {
    fn name(&self) -> &'static str {
        "linux"
    }

    fn on_segment(&mut self, now: Instant, seg: &Segment, st: &RcvState) {
        if self.period.is_none() {
            // tcp_init_buffer_space, when the connection is established.
            let first = self.cfg.initial_window(st.rcv_buf).min(self.window_clamp);
            self.rcv_ssthresh = Some(first);
            self.space = first.min(INIT_CWND * st.mss as u64);
            self.period = Some((now, st.rcv_read));
        }
        if seg.len == 0 {
            return;
        }
        let end = seg.seq + seg.len as u64;
        if end <= st.rcv_nxt {
            return; // a duplicate
        }
        if seg.seq > st.rcv_nxt {
            // tcp_data_queue_ofo: provision for the data held out of order.
            self.grow_buf(self.space, st);
        }
        self.grow_window(seg.len, st);
    }

    fn on_read(&mut self, now: Instant, _bytes: u64, st: &RcvState) {
        // tcp_rcv_space_adjust.
        let (Some((t0, seq0)), Some(rtt)) = (self.period, st.rtt) else {
            return;
        };
        if now - t0 < rtt {
            return;
        }
        let copied = (st.rcv_read - seq0).saturating_sub(st.unread());
        if copied > self.space {
            self.grow_buf(copied, st);
        }
        self.period = Some((now, st.rcv_read));
    }

    fn window(&mut self, st: &RcvState) -> u64 {
        let free = self.free_space(st);
        match self.rcv_ssthresh {
            Some(s) => free.min(s),
            None => free.min(self.cfg.initial_window(st.rcv_buf)),
        }
    }

    fn wants_quick_ack(&mut self) -> bool {
        std::mem::take(&mut self.grew)
    }

    fn buffer_limit(&self, rcv_buf: u64) -> u64 {
        self.rcvbuf.min(self.cfg.max_buf(rcv_buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::{ms, t_ms};

    fn st(rcv_nxt: u64, rcv_read: u64) -> RcvState {
        RcvState {
            now: t_ms(0),
            rcv_buf: 3 << 20,
            rcv_nxt,
            rcv_read,
            ooo_bytes: 0,
            mss: 1448,
            rtt: Some(ms(100)),
            ts_tick: None,
        }
    }

    fn data(seq: u64) -> Segment {
        Segment {
            seq,
            len: 1448,
            ..Segment::default()
        }
    }

    /// `tcp_select_initial_window` with `tcp_rmem[1]` = 128 KB and the default
    /// scaling ratio: the first window is 64 KB (at most 65535 unscaled).
    #[test]
    fn first_window_is_half_of_tcp_rmem1() {
        let mut p = LinuxRcv::new(LinuxRcvConfig::default());
        assert_eq!(p.window(&st(0, 0)), 65535);
        p.on_segment(t_ms(0), &data(0), &st(0, 0));
        // rcv_ssthresh starts at 65535 and the first segment fills the clamp (65536).
        assert_eq!(p.rcv_ssthresh(), Some(65_536));
        assert_eq!(p.rcvbuf(), 131_072);
    }

    /// `tcp_rcv_space_adjust` + `tcp_rcvbuf_grow` (Linux 6.18): after an RTT in which
    /// the application copied more than the last measurement, the buffer becomes
    /// (2 copied + 4 copied (copied - space) / space) / ratio.
    #[test]
    fn buffer_grows_from_what_was_copied_in_one_rtt() {
        let mut p = LinuxRcv::new(LinuxRcvConfig::default());
        p.on_segment(t_ms(0), &data(0), &st(0, 0));
        assert_eq!(p.space, 14_480);
        // 50 ms: too early (the receiver RTT is 100 ms).
        p.on_read(t_ms(50), 20_000, &st(20_000, 20_000));
        assert_eq!(p.rcvbuf(), 131_072);
        // 100 ms: 28 960 copied > 14 480: rcvwin = 57 920 + 2 × 57 920 × 1 = 173 760.
        p.on_read(t_ms(100), 8_960, &st(28_960, 28_960));
        assert_eq!(p.rcvbuf(), 347_520);
        assert_eq!(p.window_clamp, 173_760);
        // The next RTT copied less than 28 960: no change, a new period.
        p.on_read(t_ms(200), 10_000, &st(38_960, 38_960));
        assert_eq!(p.rcvbuf(), 347_520);
    }

    /// The buffer never exceeds `tcp_rmem[2]` (`TcpConfig::rcv_buf`, the window, over
    /// the ratio).
    #[test]
    fn buffer_is_capped_by_tcp_rmem2() {
        let mut p = LinuxRcv::new(LinuxRcvConfig::default());
        p.on_segment(t_ms(0), &data(0), &st(0, 0));
        p.on_read(t_ms(100), 5_000_000, &st(5_000_000, 5_000_000));
        assert_eq!(p.rcvbuf(), 6 << 20);
    }

    /// `tcp_grow_window`: once the clamp has room, each segment raises rcv_ssthresh
    /// by 2 MSS and asks for a quick ACK; the window is min(rcv_ssthresh, free space).
    #[test]
    fn window_grows_by_two_segments_per_segment_up_to_the_clamp() {
        let mut p = LinuxRcv::new(LinuxRcvConfig::default());
        p.on_segment(t_ms(0), &data(0), &st(0, 0));
        assert!(p.wants_quick_ack(), "65535 -> 65536: one byte of room");
        assert!(!p.wants_quick_ack());
        p.on_read(t_ms(100), 28_960, &st(28_960, 28_960));
        let before = p.rcv_ssthresh().unwrap();
        p.on_segment(t_ms(101), &data(28_960), &st(28_960, 28_960));
        assert_eq!(p.rcv_ssthresh(), Some(before + 2896));
        assert!(p.wants_quick_ack());
        assert_eq!(p.window(&st(30_408, 30_408)), before + 2896);
        for k in 0..200u64 {
            let seq = 30_408 + 1448 * k;
            p.on_segment(t_ms(102), &data(seq), &st(seq, seq));
        }
        assert_eq!(p.rcv_ssthresh(), Some(173_760));
        assert!(p.wants_quick_ack());
        let seq = 30_408 + 1448 * 200;
        p.on_segment(t_ms(103), &data(seq), &st(seq, seq));
        assert!(!p.wants_quick_ack(), "no room left: no quick ACK");
    }

    /// `__tcp_select_window`: unread data takes its place out of the window space.
    #[test]
    fn unread_data_shrinks_the_window() {
        let mut p = LinuxRcv::new(LinuxRcvConfig::default());
        p.on_segment(t_ms(0), &data(0), &st(0, 0));
        assert_eq!(p.window(&st(60_000, 0)), 65_536 - 60_000);
    }
}
