//! Web page loads over persistent HTTP/1.1-like connections (`app = "web"`).
//!
//! A web flow (server to phone) and its companion channels (see
//! `scenario::flow::add_web_channels`) form `connections` connections; connection `k`
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

use super::endpoint::{FlowEnds, Side};
use super::ids::FlowId;
use super::{Ev, World};
use crate::model::{AppSpec, Scenario, WebSpec};
use mobiflow_proto::time::Instant;
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum ConnState {
    Idle,
    /// Request of `object` written; the response starts once the server has read
    /// request bytes up to `req_end`.
    AwaitRequest {
        object: u32,
        req_end: u64,
    },
    /// Response written; done when the phone has read up to `resp_end`.
    AwaitResponse {
        resp_end: u64,
    },
}

#[derive(Clone, Debug)]
struct Conn {
    resp: FlowId,
    req: FlowId,
    state: ConnState,
}

/// One web application (one web flow and its channels).
#[derive(Clone, Debug)]
pub(super) struct WebApp {
    spec: Arc<WebSpec>,
    main: FlowId,
    stop: Option<Instant>,
    conns: Vec<Conn>,
    /// Objects of the current page not yet requested.
    pending: VecDeque<u32>,
    /// Objects of the current page not yet complete.
    remaining: u32,
    page_start: Instant,
    pub(super) pages_started: u64,
    pub(super) load_times_s: Vec<f64>,
}

/// Every web application of a run, and which of them each flow belongs to.
#[derive(Clone, Debug, Default)]
pub(super) struct Web {
    pub(super) apps: Vec<WebApp>,
    /// Flow index -> (app, connection, is the request flow).
    by_flow: Vec<Option<(u32, u32, bool)>>,
}

impl Web {
    pub(super) fn build(sc: &Scenario) -> Web {
        let mut web = Web {
            apps: Vec::new(),
            by_flow: vec![None; sc.flows.len()],
        };
        let mut app_of = vec![None; sc.flows.len()];
        for (i, f) in sc.flows.iter().enumerate() {
            if let AppSpec::Web(spec) = &f.app {
                app_of[i] = Some(web.apps.len() as u32);
                let conns = (0..spec.connections)
                    .map(|_| Conn {
                        resp: FlowId(u32::MAX),
                        req: FlowId(u32::MAX),
                        state: ConnState::Idle,
                    })
                    .collect();
                web.apps.push(WebApp {
                    spec: spec.clone(),
                    main: FlowId::new(i),
                    stop: f.stop.map(|s| Instant::ZERO + s),
                    conns,
                    pending: VecDeque::new(),
                    remaining: 0,
                    page_start: Instant::ZERO,
                    pages_started: 0,
                    load_times_s: Vec::new(),
                });
                let a = web.apps.last_mut().expect("pushed");
                a.conns[0].resp = FlowId::new(i);
                web.by_flow[i] = Some((app_of[i].unwrap(), 0, false));
            }
        }
        for (i, f) in sc.flows.iter().enumerate() {
            if let AppSpec::WebChannel {
                main,
                conn,
                request,
            } = f.app
            {
                let a = app_of[main].expect("a channel follows its web flow");
                let c = &mut web.apps[a as usize].conns[conn as usize];
                if request {
                    c.req = FlowId::new(i);
                } else {
                    c.resp = FlowId::new(i);
                }
                web.by_flow[i] = Some((a, conn, request));
            }
        }
        web
    }

    /// The app whose main flow is `f`, if any.
    pub(super) fn app_of_main(&self, f: FlowId) -> Option<&WebApp> {
        match self.by_flow.get(f.index()) {
            Some(Some((a, 0, false))) => Some(&self.apps[*a as usize]),
            _ => None,
        }
    }
}

impl World<'_> {
    /// Start the next page of the web flow `f` (its `Ev::WebPage`).
    pub(super) fn web_page(&mut self, f: FlowId) {
        let now = self.net.now;
        let Some(Some((a, _, _))) = self.web.by_flow.get(f.index()).copied() else {
            return;
        };
        let app = &mut self.web.apps[a as usize];
        if app.stop.is_some_and(|s| now >= s)
            || app
                .spec
                .pages
                .is_some_and(|n| app.pages_started >= n as u64)
        {
            return;
        }
        app.pages_started += 1;
        app.page_start = now;
        app.pending = (0..app.spec.objects).collect();
        app.remaining = app.spec.objects;
        if app.spec.main_first && app.spec.objects > 1 {
            let obj = app.pending.pop_front().expect("objects >= 1");
            self.web_request(a, 0, obj);
        } else {
            self.web_dispatch(a);
        }
    }

    /// Give pending objects to idle connections, lowest connection first.
    fn web_dispatch(&mut self, a: u32) {
        for c in 0..self.web.apps[a as usize].conns.len() {
            let app = &mut self.web.apps[a as usize];
            if !matches!(app.conns[c].state, ConnState::Idle) {
                continue;
            }
            let Some(obj) = app.pending.pop_front() else {
                return;
            };
            self.web_request(a, c, obj);
        }
    }

    /// The phone writes the request for `obj` on connection `c`.
    fn web_request(&mut self, a: u32, c: usize, obj: u32) {
        let app = &mut self.web.apps[a as usize];
        let bytes = app.spec.request_size;
        let req = app.conns[c].req;
        let fr = &mut self.flows[req];
        fr.ep.write(bytes);
        fr.written += bytes;
        app.conns[c].state = ConnState::AwaitRequest {
            object: obj,
            req_end: fr.written,
        };
        self.flush(req, Side::Sender);
    }

    /// The application at the receiving end of flow `f` read data.
    pub(super) fn web_read(&mut self, f: FlowId) {
        let now = self.net.now;
        let Some(Some((a, c, request))) = self.web.by_flow.get(f.index()).copied() else {
            return;
        };
        let read = self.flows[f].ep.bytes_read();
        let app = &mut self.web.apps[a as usize];
        let conn = &mut app.conns[c as usize];
        match conn.state {
            ConnState::AwaitRequest { object, req_end } if request && read >= req_end => {
                let sizes = &app.spec.object_sizes;
                let bytes = sizes[object as usize % sizes.len()];
                let resp = conn.resp;
                let fr = &mut self.flows[resp];
                fr.ep.write(bytes);
                fr.written += bytes;
                conn.state = ConnState::AwaitResponse {
                    resp_end: fr.written,
                };
                self.flush(resp, Side::Sender);
            }
            ConnState::AwaitResponse { resp_end } if !request && read >= resp_end => {
                conn.state = ConnState::Idle;
                app.remaining -= 1;
                if app.remaining == 0 {
                    let t = now - app.page_start;
                    app.load_times_s.push(t.as_secs_f64());
                    let next = now + app.spec.think;
                    let main = app.main;
                    self.net.at(next, Ev::WebPage(main));
                } else {
                    self.web_dispatch(a);
                }
            }
            _ => {}
        }
    }
}
