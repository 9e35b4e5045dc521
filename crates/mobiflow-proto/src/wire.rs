//! Segment representations exchanged between endpoints.
//!
//! A [`Segment`] is the parsed form of a TCP header (RFC 9293 §3.1) with the options
//! mobiflow models: timestamps (RFC 7323 §3), SACK blocks (RFC 2018 §3), and the
//! experimental options of the mobile schemes ([`ExpOptions`]). It carries no payload
//! bytes: a simulator only needs the payload's length, and the wire encoder (pcap)
//! fills it with zeros.
//!
//! Sequence numbers are kept as 64-bit *stream offsets*: offset 0 is the first payload
//! byte. The 32-bit wire value is `isn + 1 + offset` modulo 2^32 (the SYN occupies
//! `isn`); conversion happens only at the wire boundary, so the protocol code never
//! meets wrap-around.

/// TCP control flags (RFC 9293 §3.1).
#[derive(Copy, Clone, PartialEq, Eq, Default, Debug)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

/// The RFC 7323 timestamps option: TSval and TSecr, in ticks of the sender's clock.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Timestamps {
    pub tsval: u32,
    pub tsecr: u32,
}

/// Up to four SACK blocks (RFC 2018 §3: at most 4 fit, 3 beside timestamps).
///
/// Blocks are `[left, right)` stream offsets, the most recently changed block first
/// (RFC 2018 §4). Only the first `len` blocks exist: the slots past them may hold
/// blocks of an earlier segment (an ACK written in place over a reused packet slot
/// only sets `len`, see [`SackBlocks::clear`]), so equality and `Debug` look at the
/// live blocks alone. `len` comes first: it is what every reader of a segment looks
/// at, and it then lies beside the segment's other hot fields (see [`Segment`]).
#[derive(Copy, Clone, Default)]
#[repr(C)]
pub struct SackBlocks {
    /// A whole word, not a byte: with no padding before the blocks, building a
    /// segment writes zeros where it used to, instead of copying a padded
    /// temporary.
    len: u64,
    blocks: [(u64, u64); 4],
}

impl PartialEq for SackBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.blocks[..self.len as usize] == other.blocks[..other.len as usize]
    }
}

impl Eq for SackBlocks {}

impl std::fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl SackBlocks {
    pub const MAX: usize = 4;

    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, left: u64, right: u64) -> bool {
        if (self.len as usize) < Self::MAX {
            self.blocks[self.len as usize] = (left, right);
            self.len += 1;
            true
        } else {
            false
        }
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks[..self.len as usize].iter().copied()
    }
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u64);
    }
    /// No blocks (the slots keep what they held: they are not live).
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// The experimental TCP options the mobile schemes exchange, in one place: a scheme
/// that needs a signal on the wire adds a field here (and its size to
/// [`ExpOptions::wire_len`]), not to [`Segment`].
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct ExpOptions {
    /// AFC's 2-byte experimental option: the application read rate, encoded
    /// (see `flow::afc`). `None` when absent.
    pub afc_rate: Option<u8>,
    /// An explicit "interface changed" notification from a mobile receiver
    /// (`tcp::handoff::HandoffSignal::AckOption`; Tsukamoto, Fukuda, Hori and Oie, "New
    /// flow control schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun.
    /// E89-B(6), 2006): an experimental option in a real stack; it is given no size
    /// on the wire and is not written into captures.
    pub handoff_notice: bool,
}

impl ExpOptions {
    /// Bytes these options occupy on the wire, before padding.
    pub fn wire_len(&self) -> u32 {
        if self.afc_rate.is_some() {
            2
        } else {
            0
        }
    }
}

/// A TCP segment as mobiflow models it.
///
/// `repr(C)`, in this order, so that what is read or written for every segment (the
/// sequence and acknowledgment numbers, window, length, timestamps, flags, the small
/// options and the number of SACK blocks) lies in the first 64 bytes and the SACK
/// blocks, read only when there are some, after them: a packet record in the
/// simulator's slab then touches two cache lines instead of three (issue 19).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
#[repr(C)]
pub struct Segment {
    /// Stream offset of the first payload byte (or of the next byte, for a pure ACK).
    pub seq: u64,
    /// Cumulative acknowledgment: stream offset of the next byte expected.
    pub ack: u64,
    /// Advertised receive window in bytes, before window scaling.
    pub wnd: u64,
    /// Payload length in bytes.
    pub len: u32,
    /// Timestamps option, when negotiated.
    pub ts: Option<Timestamps>,
    pub flags: Flags,
    /// True if this segment is a retransmission (for tracing only; not on the wire).
    pub retransmission: bool,
    /// A zero-window probe (RFC 9293 §3.8.6.1). mobiflow probes as Linux does, with a
    /// zero-length segment whose wire sequence number is `seq - 1` (already
    /// acknowledged), which the receiver must answer with an ACK.
    pub window_probe: bool,
    /// SACK-permitted option (SYN and SYN-ACK only).
    pub sack_permitted: bool,
    /// MSS option (SYN and SYN-ACK only).
    pub mss: Option<u16>,
    /// Window-scale shift (SYN and SYN-ACK only).
    pub wscale: Option<u8>,
    /// The experimental options of the mobile schemes (none is in an RFC).
    pub exp: ExpOptions,
    /// SACK blocks, when negotiated.
    pub sack: SackBlocks,
}

impl Segment {
    /// For tests of a machine writing into the simulator's packet slot: a slot last
    /// used by an unrelated segment, every field set, SACK blocks too.
    #[cfg(test)]
    pub(crate) fn used_slot() -> Segment {
        let mut s = Segment {
            seq: 77,
            ack: 99,
            wnd: 5,
            len: 1234,
            ts: Some(Timestamps { tsval: 3, tsecr: 4 }),
            flags: Flags(0xff),
            retransmission: true,
            window_probe: true,
            sack_permitted: true,
            mss: Some(536),
            wscale: Some(7),
            exp: ExpOptions {
                afc_rate: Some(9),
                handoff_notice: true,
            },
            sack: SackBlocks::new(),
        };
        for k in 0..4 {
            s.sack.push(1000 * k, 1000 * k + 500);
        }
        s
    }

    /// Bytes of TCP options this segment carries on the wire, padded to 4 bytes.
    pub fn options_len(&self) -> u32 {
        let mut n = 0u32;
        if self.mss.is_some() {
            n += 4;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.wscale.is_some() {
            n += 3;
        }
        if self.ts.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len() as u32;
        }
        n += self.exp.wire_len();
        n.div_ceil(4) * 4
    }

    /// The sequence space this segment occupies: payload, plus one for SYN and FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64
            + self.flags.contains(Flags::SYN) as u64
            + self.flags.contains(Flags::FIN) as u64
    }

    pub fn is_pure_ack(&self) -> bool {
        self.len == 0 && !self.flags.contains(Flags::SYN) && !self.flags.contains(Flags::FIN)
    }
}
