//! Packet captures: pcap files at hosts and link directions (`[measure.capture]`,
//! `--pcap`), in the formats of `crate::pcap`.

use super::ids::NodeId;
use super::net::{Body, Pkt};
use super::RunError;
use crate::model::Scenario;
use crate::pcap::{self, TfrcPacket};
use mobiflow_proto::time::Instant;

/// Open pcap writers and the per-flow wire constants of a run.
pub(super) struct Capture {
    writers: Vec<(String, pcap::PcapWriter)>,
    pub(super) host: Vec<Option<usize>>,
    pub(super) dir: Vec<Option<usize>>,
    flows: Vec<pcap::FlowWire>,
    /// Per flow: TFRC captured as DCCP (else UDP).
    dccp: Vec<bool>,
    ip_id: Vec<u16>,
    buf: Vec<u8>,
    error: Option<(String, std::io::Error)>,
}

impl Capture {
    pub(super) fn open(
        sc: &Scenario,
        out: &std::path::Path,
        all_hosts: bool,
    ) -> Result<Option<Capture>, RunError> {
        let cs = &sc.measure.capture;
        let hosts: Vec<usize> = if all_hosts {
            (0..sc.nodes.len()).collect()
        } else {
            cs.hosts.clone()
        };
        if hosts.is_empty() && cs.dirs.is_empty() {
            return Ok(None);
        }
        let io = |p: &std::path::Path, e: std::io::Error| RunError::Io {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
        let mut writers = Vec::new();
        let mut host = vec![None; sc.nodes.len()];
        let mut dir = vec![None; sc.links.len() * 2];
        for &h in &hosts {
            let path = out.join(format!("{}.pcap", sc.nodes[h]));
            let w = pcap::PcapWriter::create(&path, cs.snaplen).map_err(|e| io(&path, e))?;
            host[h] = Some(writers.len());
            writers.push((path.display().to_string(), w));
        }
        for &d in &cs.dirs {
            let l = &sc.links[d / 2];
            let name = format!("{}.{}", l.name, if d % 2 == 0 { "ab" } else { "ba" });
            let path = out.join(format!("{name}.pcap"));
            let w = pcap::PcapWriter::create(&path, cs.snaplen).map_err(|e| io(&path, e))?;
            dir[d] = Some(writers.len());
            writers.push((path.display().to_string(), w));
        }
        let flows = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let ws = f.transport.tcp().map_or(0, |cfg| {
                    cfg.wscale
                        .unwrap_or_else(|| mobiflow_proto::tcp::receiver::auto_wscale(cfg.rcv_buf))
                });
                pcap::FlowWire::new(i, f.src, f.dst, sc.seed, ws)
            })
            .collect();
        Ok(Some(Capture {
            writers,
            host,
            dir,
            flows,
            dccp: sc
                .flows
                .iter()
                .map(|f| f.transport.tfrc().is_some_and(|t| t.dccp))
                .collect(),
            ip_id: vec![0; sc.nodes.len()],
            buf: Vec::with_capacity(128),
            error: None,
        }))
    }

    /// Record `pkt` in writer `w` at `t` (the first write error is kept).
    pub(super) fn record(&mut self, w: usize, t: Instant, pkt: &Pkt) {
        if self.error.is_some() {
            return;
        }
        let fw = self.flows[pkt.flow.index()];
        let src = if pkt.to_receiver {
            fw.src_node
        } else {
            fw.dst_node
        };
        let id = self.ip_id[src];
        let dccp = self.dccp[pkt.flow.index()];
        let buf = &mut self.buf;
        let full = match &pkt.body {
            Body::Tcp(seg) => pcap::encode_tcp(buf, &fw, seg, pkt.to_receiver, id),
            Body::TfrcData(d) => pcap::encode_tfrc(buf, &fw, &TfrcPacket::Data(*d), dccp, id),
            Body::TfrcFeedback(f) => {
                pcap::encode_tfrc(buf, &fw, &TfrcPacket::Feedback(*f), dccp, id)
            }
        };
        let (name, writer) = &mut self.writers[w];
        if let Err(e) = writer.record(t, &self.buf, full) {
            self.error = Some((name.clone(), e));
        }
    }

    /// A host sent a packet: also advances the host's IP identification counter.
    pub(super) fn sent(&mut self, node: NodeId, t: Instant, pkt: &Pkt) {
        let node = node.index();
        if let Some(w) = self.host[node] {
            self.record(w, t, pkt);
        }
        self.ip_id[node] = self.ip_id[node].wrapping_add(1);
    }

    pub(super) fn finish(self) -> Result<(), RunError> {
        if let Some((path, e)) = self.error {
            return Err(RunError::Io {
                path,
                message: e.to_string(),
            });
        }
        for (path, w) in self.writers {
            w.finish().map_err(|e| RunError::Io {
                path,
                message: e.to_string(),
            })?;
        }
        Ok(())
    }
}
