//! Web page loads over persistent HTTP/1.1-like connections (`app = "web"`).
//!
//! A web flow (server to phone) and its companion channels (`channels`, appended
//! after the declared flows) form `connections` connections; connection `k`
//! is a response flow (server to phone: the web flow itself for k = 0) and a request
//! flow (phone to server). A page is `objects` objects. For each object the phone
//! writes a request of `request_size` bytes on a free connection's request flow, so
//! the request queues behind whatever else the phone sends (a concurrent upload in
//! the deep uplink buffer, as in Xu, Leong, Leong and Razeen, "Dynamic Regulation of
//! Mobile 3G/HSPA Uplink Buffer with Receiver-side Flow Control", IEEE ICNP 2012);
//! once the server has *read* the whole request it
//! writes the response (the object's size) on the connection's response flow; the
//! object is done when the phone has read its last byte. A connection carries one
//! request at a time (no pipelining, as browsers of the time). With `main_first`, the
//! main document (object 0) is fetched alone, on connection 0, and the others are
//! requested once it has arrived.
//!
//! Page load time: from the page's first request to the last byte of its last object
//! read by the phone. The next page starts `think` after the previous one ends, until
//! `pages` pages have been loaded or the flow's `stop`.
//!
//! The application lives in the web flow's [`Apps`](super::Apps) entry; its channels
//! are [`Channel`](super::Channel)s whose reads the engine hands to it (`on_read`), and
//! each page starts as an `Ev::App(main, 0)` of its own.

use super::{App, AppKind, AppSpec, FlowCx, Io};
use crate::engine::ids::FlowId;
use crate::engine::Ev;
use crate::model::{FlowSpec, ReaderSpec, Transport, WebSpec};
use crate::results::FlowSummary;
use crate::scenario::flow_control::web;
use crate::scenario::walk::{key_err, Tbl, R};
use mobiflow_proto::flow::FlowControl;
use mobiflow_proto::time::Instant;
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum ConnState {
    Idle,
    /// Request of `object` written; the response starts once the server has read
    /// request bytes up to `req_end`.
    AwaitRequest { object: u32, req_end: u64 },
    /// Response written; done when the phone has read up to `resp_end`.
    AwaitResponse { resp_end: u64 },
}

/// One connection: its response and request flows (`None` until the engine hands the
/// channel over, `adopt`).
#[derive(Clone, Debug)]
struct Conn {
    resp: Option<FlowId>,
    req: Option<FlowId>,
    state: ConnState,
}

/// One web application: the web flow and its channels.
pub(in crate::engine) struct WebApp {
    spec: Arc<WebSpec>,
    main: FlowId,
    stop: Option<Instant>,
    conns: Vec<Conn>,
    /// Objects of the current page not yet requested.
    pending: VecDeque<u32>,
    /// Objects of the current page not yet complete.
    remaining: u32,
    page_start: Instant,
    pages_started: u64,
    load_times_s: Vec<f64>,
}

/// The event that starts a page.
const PAGE: u32 = 0;

impl WebApp {
    /// The application of web flow `f` (`flow`); its channels come with `adopt`.
    pub(super) fn new(f: FlowId, flow: &FlowSpec, spec: &Arc<WebSpec>) -> WebApp {
        let mut conns: Vec<Conn> = (0..spec.connections)
            .map(|_| Conn {
                resp: None,
                req: None,
                state: ConnState::Idle,
            })
            .collect();
        conns[0].resp = Some(f);
        WebApp {
            spec: spec.clone(),
            main: f,
            stop: flow.stop.map(|s| Instant::ZERO + s),
            conns,
            pending: VecDeque::new(),
            remaining: 0,
            page_start: Instant::ZERO,
            pages_started: 0,
            load_times_s: Vec::new(),
        }
    }

    /// The connection of flow `f` and whether `f` is its request flow.
    fn conn_of(&self, f: FlowId) -> Option<(usize, bool)> {
        self.conns.iter().enumerate().find_map(|(c, conn)| {
            if conn.req == Some(f) {
                Some((c, true))
            } else if conn.resp == Some(f) {
                Some((c, false))
            } else {
                None
            }
        })
    }

    /// Start the next page (its `Ev::App(main, PAGE)`).
    fn page(&mut self, io: &mut Io) {
        let now = io.now;
        if self.stop.is_some_and(|s| now >= s)
            || self
                .spec
                .pages
                .is_some_and(|n| self.pages_started >= n as u64)
        {
            return;
        }
        self.pages_started += 1;
        self.page_start = now;
        self.pending = (0..self.spec.objects).collect();
        self.remaining = self.spec.objects;
        if self.spec.main_first && self.spec.objects > 1 {
            let obj = self.pending.pop_front().expect("objects >= 1");
            self.request(0, obj, io);
        } else {
            self.dispatch(io);
        }
    }

    /// Give pending objects to idle connections, lowest connection first.
    fn dispatch(&mut self, io: &mut Io) {
        for c in 0..self.conns.len() {
            if !matches!(self.conns[c].state, ConnState::Idle) {
                continue;
            }
            let Some(obj) = self.pending.pop_front() else {
                return;
            };
            self.request(c, obj, io);
        }
    }

    /// The phone writes the request for `obj` on connection `c`.
    fn request(&mut self, c: usize, obj: u32, io: &mut Io) {
        let req = self.conns[c].req.expect("every connection has its request flow");
        let req_end = io.write(req, self.spec.request_size);
        self.conns[c].state = ConnState::AwaitRequest {
            object: obj,
            req_end,
        };
    }
}

impl App for WebApp {
    fn stops_at_flow_stop(&self) -> bool {
        // It starts no page at or after the stop itself.
        false
    }
    fn schedule(&self, f: FlowId, start: Instant, at: &mut impl FnMut(Instant, Ev)) {
        at(start, Ev::App(f, PAGE));
    }
    fn adopt(&mut self, f: FlowId, spec: &AppSpec) {
        if let AppSpec::WebChannel { conn, request, .. } = *spec {
            let c = &mut self.conns[conn as usize];
            if request {
                c.req = Some(f);
            } else {
                c.resp = Some(f);
            }
        }
    }
    fn hears_reads(&self) -> bool {
        true
    }
    fn on_event(&mut self, _: u32, io: &mut Io) {
        self.page(io);
    }
    fn on_read(&mut self, f: FlowId, read: u64, io: &mut Io) {
        let Some((c, request)) = self.conn_of(f) else {
            return;
        };
        let conn = &mut self.conns[c];
        match conn.state {
            ConnState::AwaitRequest { object, req_end } if request && read >= req_end => {
                let sizes = &self.spec.object_sizes;
                let bytes = sizes[object as usize % sizes.len()];
                let resp = conn.resp.expect("every connection has its response flow");
                conn.state = ConnState::AwaitResponse {
                    resp_end: io.write(resp, bytes),
                };
            }
            ConnState::AwaitResponse { resp_end } if !request && read >= resp_end => {
                conn.state = ConnState::Idle;
                self.remaining -= 1;
                if self.remaining == 0 {
                    let now = io.now;
                    self.load_times_s
                        .push((now - self.page_start).as_secs_f64());
                    io.at(now + self.spec.think, Ev::App(self.main, PAGE));
                } else {
                    self.dispatch(io);
                }
            }
            _ => {}
        }
    }
    fn report(&self, s: &mut FlowSummary) {
        s.page_load_times_s = self.load_times_s.clone();
        s.pages_started = self.pages_started;
    }
}

impl AppKind for WebApp {
    /// Its parameters are the flow's `[flows.web]` (`scenario::flow_control::WEB`).
    fn parse(_: Option<&Tbl>, cx: &mut FlowCx, at: &str) -> R<AppSpec> {
        if !cx.tcp {
            return Err(key_err(
                at,
                "a web app needs TCP (requests and responses on reliable connections); this flow's transport is TFRC/DCCP",
            ));
        }
        Ok(AppSpec::Web {
            spec: Arc::new(web(cx.flow, cx.ctx)?),
        })
    }

    /// For connection `k`, a request flow (phone to server) named `NAME.req` (k = 0)
    /// or `NAME.cK.req`, and for k >= 1 a response flow `NAME.cK`. They use the web
    /// flow's TCP settings with classic flow control and a greedy reader.
    fn channels(main: &FlowSpec, m: usize) -> Vec<FlowSpec> {
        let (AppSpec::Web { spec }, Some(cfg)) = (&main.app, main.transport.tcp()) else {
            return Vec::new(); // a web flow is TCP (`parse`)
        };
        let mut cfg = cfg.clone();
        cfg.flow_control = FlowControl::Classic;
        let mut chans = Vec::new();
        for conn in 0..spec.connections {
            let base = if conn == 0 {
                main.name.clone()
            } else {
                format!("{}.c{conn}", main.name)
            };
            if conn > 0 {
                chans.push((base.clone(), main.src, main.dst, conn, false));
            }
            chans.push((format!("{base}.req"), main.dst, main.src, conn, true));
        }
        let cfg = Arc::new(cfg);
        chans
            .into_iter()
            .map(|(name, src, dst, conn, request)| FlowSpec {
                name,
                src,
                dst,
                start: main.start,
                stop: None,
                transport: Transport::Tcp(Arc::clone(&cfg)),
                app: AppSpec::WebChannel {
                    main: m,
                    conn,
                    request,
                },
                reader: ReaderSpec::Greedy,
            })
            .collect()
    }
}
