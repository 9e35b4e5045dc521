//! Packet captures that Wireshark and tshark read.
//!
//! Each capture point (a host, or a link direction) is one pcap file (nanosecond
//! timestamps, magic 0xa1b23c4d, link type Ethernet) stamped with simulation time.
//! Segments are encoded as real Ethernet II / IPv4 / TCP headers: sequence and
//! acknowledgment numbers (32-bit, from a per-flow ISN), flags, window (scaled as
//! negotiated, RFC 7323 §2), and the options mobiflow models: MSS, SACK-permitted,
//! window scale, timestamps (RFC 7323), SACK blocks (RFC 2018), and AFC's option as an
//! RFC 6994 experimental option (kind 253, ExID 0x4146 "AF", one value byte: a bare
//! 2-byte kind+value option, as the AFC paper describes it, would not parse as TCP
//! options). Checksums are computed. The payload is zeros and only the first `snaplen`
//! bytes of each packet are stored; the recorded original length is the full one.
//!
//! Addresses: node `i` is 10.0.0.(i+1) with MAC 02:00:00:00:00:(i+1); flow `f` runs from
//! port 10000+f to port 5001+f... kept distinct per flow so that tshark's conversation
//! tracking separates flows.

use mobiflow_proto::tfrc::{wire, TfrcData, TfrcFeedback};
use mobiflow_proto::time::Instant;
use mobiflow_proto::wire::{Flags, Segment};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Per-flow constants needed to put a segment on the wire.
#[derive(Copy, Clone, Debug)]
pub struct FlowWire {
    pub src_node: usize,
    pub dst_node: usize,
    pub src_port: u16,
    pub dst_port: u16,
    /// Initial sequence numbers of the sender and of the receiver.
    pub isn: u32,
    pub irs: u32,
    /// Window-scale shift the receiver announced (its window field is wnd >> shift).
    pub rcv_wscale: u8,
}

impl FlowWire {
    /// Deterministic wire constants of flow `f` (ISNs from the scenario seed).
    pub fn new(f: usize, src_node: usize, dst_node: usize, seed: u64, rcv_wscale: u8) -> Self {
        let h = crate::engine::splitmix(seed ^ (f as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        FlowWire {
            src_node,
            dst_node,
            src_port: 10_000u16.wrapping_add(f as u16),
            dst_port: 5_001u16.wrapping_add(f as u16),
            isn: h as u32,
            irs: (h >> 32) as u32,
            rcv_wscale,
        }
    }
}

fn ip_of(node: usize) -> [u8; 4] {
    let n = node as u32 + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

fn mac_of(node: usize) -> [u8; 6] {
    let n = node as u32 + 1;
    [2, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// Internet checksum (RFC 1071) of `data`, starting from the partial sum `acc`.
fn checksum(mut acc: u32, data: &[u8]) -> u16 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        acc += (*b as u32) << 8;
    }
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Appends an Ethernet II header (type IPv4) and an IPv4 header (RFC 791: no options,
/// DF set, TTL 64, with its checksum) from node `src` to node `dst` for a datagram of
/// `ip_len` bytes carrying protocol `proto`.
fn push_eth_ipv4(buf: &mut Vec<u8>, src: usize, dst: usize, proto: u8, ip_len: usize, id: u16) {
    buf.extend_from_slice(&mac_of(dst));
    buf.extend_from_slice(&mac_of(src));
    buf.extend_from_slice(&[0x08, 0x00]);
    let ip_start = buf.len();
    let l = (ip_len as u16).to_be_bytes();
    let id = id.to_be_bytes();
    buf.extend_from_slice(&[0x45, 0, l[0], l[1], id[0], id[1], 0x40, 0, 64, proto, 0, 0]);
    buf.extend_from_slice(&ip_of(src));
    buf.extend_from_slice(&ip_of(dst));
    let c = checksum(0, &buf[ip_start..ip_start + 20]).to_be_bytes();
    buf[ip_start + 10] = c[0];
    buf[ip_start + 11] = c[1];
}

/// The IPv4 pseudo-header's share of a transport checksum (RFC 9293 §3.1, RFC 768,
/// RFC 4340 §9.1): the addresses of nodes `src` and `dst`, `proto` and the transport
/// length `len`, as 16-bit words summed.
fn pseudo_header_sum(src: usize, dst: usize, proto: u8, len: u32) -> u32 {
    let (s, d) = (ip_of(src), ip_of(dst));
    u16::from_be_bytes([s[0], s[1]]) as u32
        + u16::from_be_bytes([s[2], s[3]]) as u32
        + u16::from_be_bytes([d[0], d[1]]) as u32
        + u16::from_be_bytes([d[2], d[3]]) as u32
        + proto as u32
        + (len >> 16)
        + (len & 0xffff)
}

/// Encode `seg` as an Ethernet frame into `buf` (cleared first); returns the frame's
/// full length, payload included (only headers are written into `buf`).
pub fn encode_tcp(
    buf: &mut Vec<u8>,
    fw: &FlowWire,
    seg: &Segment,
    to_receiver: bool,
    ip_id: u16,
) -> usize {
    buf.clear();
    let (src, dst, sport, dport) = if to_receiver {
        (fw.src_node, fw.dst_node, fw.src_port, fw.dst_port)
    } else {
        (fw.dst_node, fw.src_node, fw.dst_port, fw.src_port)
    };
    // Sequence numbers: stream offset o is ISN + 1 + o; the SYN occupies ISN.
    let (seq, ack) = if to_receiver {
        let seq = if seg.flags.contains(Flags::SYN) {
            fw.isn
        } else if seg.window_probe {
            // Linux-style probe: an already acknowledged sequence number (o - 1).
            fw.isn.wrapping_add(seg.seq as u32)
        } else {
            fw.isn.wrapping_add(1).wrapping_add(seg.seq as u32)
        };
        (seq, fw.irs.wrapping_add(1))
    } else {
        let seq = if seg.flags.contains(Flags::SYN) {
            fw.irs
        } else {
            fw.irs.wrapping_add(1)
        };
        (seq, fw.isn.wrapping_add(1).wrapping_add(seg.ack as u32))
    };
    // Every segment but the opening SYN acknowledges something (RFC 9293 §3.4: the
    // SYN-ACK included). The opening SYN has no ACK flag, and then its acknowledgment
    // number is zero: a non-zero one without the flag is what tshark calls "ACK
    // number non-zero but ACK flag not set".
    let opening_syn = to_receiver && seg.flags.contains(Flags::SYN);
    let mut flags = seg.flags;
    if !opening_syn {
        flags = flags | Flags::ACK;
    }
    let ack = if flags.contains(Flags::ACK) { ack } else { 0 };
    let window = if seg.flags.contains(Flags::SYN) {
        // RFC 7323 §2.2: the window of a SYN is never scaled.
        seg.wnd.min(65_535) as u16
    } else if to_receiver {
        seg.wnd.min(65_535) as u16
    } else {
        (seg.wnd >> fw.rcv_wscale).min(65_535) as u16
    };

    // TCP options.
    let mut opts = [0u8; 40];
    let mut n = 0;
    let mut put = |bytes: &[u8], n: &mut usize| {
        if *n + bytes.len() <= 40 {
            opts[*n..*n + bytes.len()].copy_from_slice(bytes);
            *n += bytes.len();
        }
    };
    if let Some(mss) = seg.mss {
        let m = mss.to_be_bytes();
        put(&[2, 4, m[0], m[1]], &mut n);
    }
    if seg.sack_permitted {
        put(&[4, 2], &mut n);
    }
    if let Some(ws) = seg.wscale {
        put(&[1, 3, 3, ws], &mut n);
    }
    if let Some(ts) = seg.ts {
        let v = ts.tsval.to_be_bytes();
        let e = ts.tsecr.to_be_bytes();
        put(
            &[1, 1, 8, 10, v[0], v[1], v[2], v[3], e[0], e[1], e[2], e[3]],
            &mut n,
        );
    }
    if !seg.sack.is_empty() {
        let base = fw.isn.wrapping_add(1);
        // As many blocks as the option space left holds (RFC 2018 §3: 4, or 3 beside
        // timestamps), so that the option's length always matches what is written.
        let k = seg
            .sack
            .len()
            .min(if seg.ts.is_some() { 3 } else { 4 })
            .min(40usize.saturating_sub(n + 4) / 8);
        if k > 0 {
            put(&[1, 1, 5, 2 + 8 * k as u8], &mut n);
        }
        for (l, r) in seg.sack.iter().take(k) {
            let l = base.wrapping_add(l as u32).to_be_bytes();
            let r = base.wrapping_add(r as u32).to_be_bytes();
            put(&[l[0], l[1], l[2], l[3], r[0], r[1], r[2], r[3]], &mut n);
        }
    }
    if let Some(v) = seg.exp.afc_rate {
        put(&[253, 5, 0x41, 0x46, v], &mut n);
    }
    while n % 4 != 0 {
        put(&[0], &mut n); // end-of-option-list padding
    }
    let tcp_hdr = 20 + n;
    let payload = seg.len as usize;
    let ip_len = 20 + tcp_hdr + payload;

    push_eth_ipv4(buf, src, dst, 6, ip_len, ip_id);
    // TCP (RFC 9293 §3.1).
    let tcp_start = buf.len();
    buf.extend_from_slice(&sport.to_be_bytes());
    buf.extend_from_slice(&dport.to_be_bytes());
    buf.extend_from_slice(&seq.to_be_bytes());
    buf.extend_from_slice(&ack.to_be_bytes());
    buf.push(((tcp_hdr / 4) as u8) << 4);
    buf.push(flags.0);
    buf.extend_from_slice(&window.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    buf.extend_from_slice(&opts[..n]);
    // Checksum over the pseudo-header, the header and the (all-zero) payload.
    let pseudo = pseudo_header_sum(src, dst, 6, (tcp_hdr + payload) as u32);
    let c = checksum(pseudo, &buf[tcp_start..]).to_be_bytes();
    buf[tcp_start + 16] = c[0];
    buf[tcp_start + 17] = c[1];
    14 + ip_len
}

/// A TFRC packet to encode.
#[derive(Copy, Clone, Debug)]
pub enum TfrcPacket {
    Data(TfrcData),
    Feedback(TfrcFeedback),
}

/// `ceil(1/p)`, or 0xFFFFFFFF when there is no loss (RFC 4342 §8.5).
fn inv_p(p: f64) -> u32 {
    if p > 0.0 {
        (1.0 / p).ceil().min(u32::MAX as f64 - 1.0) as u32
    } else {
        u32::MAX
    }
}

fn us(t: Instant) -> u32 {
    (t.as_nanos() / 1000) as u32
}

/// Encode a TFRC packet of a flow as an Ethernet frame into `buf` (cleared first);
/// returns the frame's full length. Over UDP (RFC 5348 §3.2 puts no format on the
/// wire; mobiflow writes the fields it names): a data packet carries sequence
/// number, timestamp and RTT (µs, 32 bits each) before its zero payload, a feedback
/// packet the echoed timestamp, t_delay (µs), X_recv (bytes/s) and ceil(1/p). As DCCP
/// (RFC 4340 §5.1, 48-bit sequence numbers): DCCP-Data with CCVal, and DCCP-Ack with
/// the acknowledgment number and the CCID 3 options Loss Event Rate (192) and Receive
/// Rate (194) (RFC 4342 §8) and Timestamp Echo (42, RFC 4340 §13.3, 10 µs units);
/// Freeze-DCCP signals as the authors' options (FREEZE 120, UNFREEZE 121, RESTORING
/// 129, PROBING 130, UNFROZEN 195), each two bytes long.
pub fn encode_tfrc(
    buf: &mut Vec<u8>,
    fw: &FlowWire,
    pkt: &TfrcPacket,
    dccp: bool,
    ip_id: u16,
) -> usize {
    buf.clear();
    let to_receiver = matches!(pkt, TfrcPacket::Data(_));
    let (src, dst, sport, dport) = if to_receiver {
        (fw.src_node, fw.dst_node, fw.src_port, fw.dst_port)
    } else {
        (fw.dst_node, fw.src_node, fw.dst_port, fw.src_port)
    };
    // Transport header into `th`, then IP in front.
    let mut th: Vec<u8> = Vec::with_capacity(48);
    let payload = match pkt {
        TfrcPacket::Data(d) => d.len as usize,
        TfrcPacket::Feedback(_) => 0,
    };
    let proto: u8 = if dccp { 33 } else { 17 };
    let signals = match pkt {
        TfrcPacket::Data(d) => d.freeze,
        TfrcPacket::Feedback(f) => f.freeze,
    };
    if dccp {
        let (ty, ccval, seq) = match pkt {
            TfrcPacket::Data(d) => (2u8, d.ccval & 0x0f, d.seq),
            TfrcPacket::Feedback(_) => (3u8, 0, ip_id as u64),
        };
        th.extend_from_slice(&sport.to_be_bytes());
        th.extend_from_slice(&dport.to_be_bytes());
        th.extend_from_slice(&[0, ccval << 4, 0, 0, (ty << 1) | 1, 0]);
        th.extend_from_slice(&seq.to_be_bytes()[2..]);
        if let TfrcPacket::Feedback(f) = pkt {
            th.extend_from_slice(&[0, 0]);
            th.extend_from_slice(&f.highest_seq.to_be_bytes()[2..]);
            th.extend_from_slice(&[192, 6]);
            th.extend_from_slice(&inv_p(f.p).to_be_bytes());
            th.extend_from_slice(&[194, 6]);
            th.extend_from_slice(&(f.x_recv_bytes_per_s.max(0.0) as u32).to_be_bytes());
            th.extend_from_slice(&[42, 10]);
            th.extend_from_slice(&(us(f.echo_sent_at) / 10).to_be_bytes());
            th.extend_from_slice(&((f.elapsed.as_nanos() / 10_000) as u32).to_be_bytes());
        }
        for (flag, opt) in [
            (wire::FreezeSignals::FREEZE, 120u8),
            (wire::FreezeSignals::UNFREEZE, 121),
            (wire::FreezeSignals::RESTORING, 129),
            (wire::FreezeSignals::PROBING, 130),
            (wire::FreezeSignals::UNFROZEN, 195),
        ] {
            if signals.contains(flag) {
                th.extend_from_slice(&[opt, 2]);
            }
        }
        while th.len() % 4 != 0 {
            th.push(0); // Padding option
        }
        th[4] = (th.len() / 4) as u8;
    } else {
        th.extend_from_slice(&sport.to_be_bytes());
        th.extend_from_slice(&dport.to_be_bytes());
        th.extend_from_slice(&[0, 0, 0, 0]); // length, checksum
        match pkt {
            TfrcPacket::Data(d) => {
                th.extend_from_slice(&(d.seq as u32).to_be_bytes());
                th.extend_from_slice(&us(d.sent_at).to_be_bytes());
                th.extend_from_slice(&((d.rtt.as_nanos() / 1000) as u32).to_be_bytes());
            }
            TfrcPacket::Feedback(f) => {
                th.extend_from_slice(&us(f.echo_sent_at).to_be_bytes());
                th.extend_from_slice(&((f.elapsed.as_nanos() / 1000) as u32).to_be_bytes());
                th.extend_from_slice(&(f.x_recv_bytes_per_s.max(0.0) as u32).to_be_bytes());
                th.extend_from_slice(&inv_p(f.p).to_be_bytes());
            }
        }
        let l = ((th.len() + payload) as u16).to_be_bytes();
        th[4] = l[0];
        th[5] = l[1];
    }
    let t_len = (th.len() + payload) as u32;
    let ip_len = 20 + t_len as usize;
    // Checksum over the pseudo-header, the header and the (all-zero) payload.
    let mut c = checksum(pseudo_header_sum(src, dst, proto, t_len), &th);
    if !dccp && c == 0 {
        c = 0xffff;
    }
    // The checksum field is at offset 6 in both UDP and DCCP headers.
    th[6..8].copy_from_slice(&c.to_be_bytes());

    push_eth_ipv4(buf, src, dst, proto, ip_len, ip_id);
    buf.extend_from_slice(&th);
    14 + ip_len
}

/// One pcap file.
pub struct PcapWriter {
    out: BufWriter<File>,
    snaplen: u32,
    zeros: Vec<u8>,
}

impl PcapWriter {
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        // Global header: nanosecond-resolution magic, version 2.4, link type 1.
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&snaplen.to_le_bytes())?;
        out.write_all(&1u32.to_le_bytes())?;
        Ok(PcapWriter {
            out,
            snaplen,
            zeros: vec![0; snaplen as usize],
        })
    }

    /// Record a frame whose first bytes are `headers` and whose full length is
    /// `full_len` (the rest is zero payload).
    pub fn record(&mut self, t: Instant, headers: &[u8], full_len: usize) -> io::Result<()> {
        let ns = t.as_nanos();
        let incl = full_len.min(self.snaplen as usize);
        self.out
            .write_all(&((ns / 1_000_000_000) as u32).to_le_bytes())?;
        self.out
            .write_all(&((ns % 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&(incl as u32).to_le_bytes())?;
        self.out.write_all(&(full_len as u32).to_le_bytes())?;
        let h = headers.len().min(incl);
        self.out.write_all(&headers[..h])?;
        if incl > h {
            self.out.write_all(&self.zeros[..incl - h])?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiflow_proto::wire::Timestamps;

    /// Found by the pcap fuzz target (tests/fuzz.rs): with MSS, window-scale and
    /// timestamp options in front, a SACK option's header announced 3 blocks (26
    /// bytes) but only the blocks that fitted in the 40 bytes of option space were
    /// written, so the option ran past the header. Now it holds the blocks that fit.
    #[test]
    fn sack_option_holds_only_the_blocks_that_fit() {
        let fw = FlowWire::new(0, 0, 1, 1, 0);
        let mut sack = mobiflow_proto::wire::SackBlocks::new();
        for k in 0..3 {
            sack.push(1000 * k + 500, 1000 * k + 900);
        }
        let seg = Segment {
            ts: Some(Timestamps { tsval: 5, tsecr: 6 }),
            mss: Some(1460),
            wscale: Some(7),
            sack,
            ..Segment::default()
        };
        let mut buf = Vec::new();
        encode_tcp(&mut buf, &fw, &seg, false, 1);
        let tcp = &buf[34..];
        let hdr = (tcp[12] >> 4) as usize * 4;
        assert_eq!(hdr, tcp.len());
        let mut i = 20;
        let mut sack_len = None;
        while i < hdr {
            match tcp[i] {
                0 | 1 => i += 1,
                kind => {
                    let l = tcp[i + 1] as usize;
                    assert!(l >= 2 && i + l <= hdr, "option {kind} ({l} B) overruns");
                    if kind == 5 {
                        sack_len = Some(l);
                    }
                    i += l;
                }
            }
        }
        // 4 (MSS) + 4 (wscale) + 12 (timestamps) leave 20 bytes: two NOPs and a SACK
        // option of two blocks (18 bytes).
        assert_eq!(sack_len, Some(18));
    }

    #[test]
    fn ipv4_header_checksum_verifies_to_zero() {
        let fw = FlowWire::new(0, 0, 1, 1, 7);
        let seg = Segment {
            seq: 1000,
            len: 1460,
            flags: Flags::ACK,
            ts: Some(Timestamps { tsval: 5, tsecr: 6 }),
            ..Segment::default()
        };
        let mut buf = Vec::new();
        let full = encode_tcp(&mut buf, &fw, &seg, true, 1);
        assert_eq!(full, 14 + 20 + 32 + 1460);
        assert_eq!(checksum(0, &buf[14..34]), 0, "IPv4 header checksum");
        assert_eq!(buf[14 + 9], 6, "protocol TCP");
        let seq = u32::from_be_bytes(buf[38..42].try_into().unwrap());
        assert_eq!(seq, fw.isn.wrapping_add(1001));
    }

    #[test]
    fn receiver_window_is_scaled_but_syn_window_is_not() {
        let fw = FlowWire::new(0, 0, 1, 1, 3);
        let ack = Segment {
            ack: 5000,
            wnd: 80_000,
            flags: Flags::ACK,
            ..Segment::default()
        };
        let mut buf = Vec::new();
        encode_tcp(&mut buf, &fw, &ack, false, 1);
        assert_eq!(u16::from_be_bytes([buf[48], buf[49]]), 10_000);
        let ackno = u32::from_be_bytes(buf[42..46].try_into().unwrap());
        assert_eq!(ackno, fw.isn.wrapping_add(5001));
        let syn = Segment {
            flags: Flags::SYN | Flags::ACK,
            wnd: 80_000,
            wscale: Some(3),
            ..Segment::default()
        };
        encode_tcp(&mut buf, &fw, &syn, false, 2);
        assert_eq!(u16::from_be_bytes([buf[48], buf[49]]), 65_535);
    }
}
