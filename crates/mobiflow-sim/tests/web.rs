//! The web page-load application (`app = "web"`, engine/app/web.rs): page load times on
//! worlds small enough to compute by hand, the companion channels, and what a
//! concurrent upload does to a page.

mod common;

use common::{flow, run_text, HSPA};
use mobiflow_sim::model::AppSpec;
use mobiflow_sim::results::Summary;
use mobiflow_sim::scenario::load_str;

/// 8 Mb/s both ways (one byte per µs), 10 ms each way, no handshake, no delayed ACKs,
/// 40-byte headers and no option bytes counted: every time below is exact.
const BASE: &str = r#"
[run]
duration = "10s"

[tcp]
handshake = false
delayed_ack = false
count_option_bytes = false
header_bytes = 40

[[links]]
name = "l"
a = "server"
b = "phone"
rate = "8Mbps"
delay = "10ms"
"#;

/// A run of BASE with the web flow "web" from the server to the phone, `keys` its own
/// keys and its `[flows.web]` table.
fn run(keys: &str) -> Summary {
    run_text(&web(BASE, keys), &[])
}

fn web(links: &str, keys: &str) -> String {
    format!("{links}\n{}{keys}", flow("web", "server", "phone", "web"))
}

/// One connection fetching `objects` objects of 1000 bytes per page with 100-byte
/// requests; `keys` the flow's other keys and the start of its `[flows.web]` table.
fn one_connection(keys: &str, objects: u32) -> Summary {
    run(&format!(
        "{keys}objects = {objects}\nobject_size = \"1000B\"\nrequest_size = \"100B\"\n\
         connections = 1\n"
    ))
}

/// One request-response exchange on BASE: the request (100 + 40 bytes, 140 µs) and
/// 10 ms up, then the response (1000 + 40 bytes, 1040 µs) and 10 ms down.
const EXCHANGE: f64 = 0.010 + 140e-6 + 0.010 + 1040e-6;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn one_connection_page_load_time_is_the_sum_of_request_response_exchanges() {
    let s = one_connection("[flows.web]\npages = 2\nthink = \"500ms\"\n", 2);
    let web = &s.flows[0];
    // Per object one EXCHANGE: the request of the next object leaves the phone before
    // the ACK of the response, the response before the ACK of the request, so nothing
    // else waits in between.
    let per_object = EXCHANGE;
    assert_eq!(web.pages_started, 2);
    assert_eq!(
        web.page_load_times_s.len(),
        2,
        "{:?}",
        web.page_load_times_s
    );
    for &t in &web.page_load_times_s {
        assert!(close(t, 2.0 * per_object), "{t} vs {}", 2.0 * per_object);
    }
    // The request channel is a flow of its own, phone to server, after the declared ones.
    assert_eq!(s.flows.len(), 2);
    let req = &s.flows[1];
    assert_eq!(
        (req.name.as_str(), req.src.as_str(), req.dst.as_str()),
        ("web.req", "phone", "server")
    );
    assert_eq!(req.bytes_delivered, 4 * 100);
    assert_eq!(web.bytes_delivered, 4 * 1000);
    assert!(req.page_load_times_s.is_empty());
}

#[test]
fn main_document_first_then_the_rest_in_parallel_over_two_connections() {
    let page = |main_first: bool, conns: u32| {
        let s = run(&format!(
            "[flows.web]
pages = 1
objects = 3
object_size = [\"1000B\", \"2000B\"]
request_size = \"100B\"
connections = {conns}
main_first = {main_first}
"
        ));
        assert_eq!(
            s.flows.len(),
            2 * conns as usize,
            "response + request flow per connection"
        );
        (s.flows[0].page_load_times_s[0], s)
    };
    let (t, s) = page(true, 2);
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["web", "web.req", "web.c1", "web.c1.req"]);
    // Sizes cycle: objects 0, 1, 2 are 1000, 2000, 1000 bytes.
    let resp: u64 = s.flows.iter().map(|f| f.bytes_delivered).sum::<u64>() - 300;
    assert_eq!(resp, 4000);
    // Object 0 alone: 140 µs + 10 ms + 1040 µs + 10 ms = 21.18 ms. Then requests 1
    // and 2 leave together on the two connections, one after the other (140 µs each),
    // and reach the server at +10.14 ms and +10.28 ms. Response 1 (2000 bytes: 1460 +
    // 540 in two segments, 1500 + 580 µs) goes out at once, then the server's ACK of
    // request 1 (40 µs); response 2 (1040 µs) queues behind them and reaches the phone
    // 10.14 + 2.12 + 1.04 + 10 = 23.30 ms after the requests left.
    let obj0 = EXCHANGE;
    let want = obj0 + 0.010 + 140e-6 + (1500.0 + 580.0 + 40.0 + 1040.0) * 1e-6 + 0.010;
    assert!(close(t, want), "{t} vs {want}");
    // One connection, no main-first: three exchanges in a row (21.18, 22.22, 21.18 ms).
    let (t_seq, _) = page(false, 1);
    let seq = 3.0 * (0.020 + 140e-6) + (1040.0 + 1500.0 + 580.0 + 1040.0) * 1e-6;
    assert!(close(t_seq, seq), "{t_seq} vs {seq}");
}

#[test]
fn pages_stop_at_the_flows_stop_and_unfinished_pages_are_counted() {
    let s = one_connection("stop = \"1s\"\n[flows.web]\nthink = \"1ms\"\n", 1);
    let f = &s.flows[0];
    // A page takes 21.18 ms: pages start at k × 22.18 ms while that is before 1 s.
    let page = EXCHANGE;
    let want = (1.0 / (page + 0.001)).ceil() as u64;
    assert_eq!(f.pages_started, want);
    assert_eq!(f.page_load_times_s.len() as u64, want);
    assert!(f.page_load_times_s.iter().all(|&t| close(t, page)));
}

#[test]
fn an_upload_in_a_deep_uplink_buffer_stretches_page_loads() {
    let page = web(HSPA, "[flows.web]\nthink = \"1s\"\n");
    let alone = run_text(&page, &[]);
    let upload = run_text(
        &format!("{page}\n{}", flow("upload", "phone", "server", "bulk")),
        &[],
    );
    // Pages finished and the mean load time of those; with the upload, pages that
    // never finish (requests dropped at the full uplink buffer wait out backed-off
    // retransmission timeouts of a multi-second RTT) count as unfinished.
    let stats = |s: &Summary| {
        let v = &s.flows[0].page_load_times_s;
        assert!(!v.is_empty());
        (v.len(), v.iter().sum::<f64>() / v.len() as f64)
    };
    let ((na, a), (nu, u)) = (stats(&alone), stats(&upload));
    eprintln!(
        "page load: alone {a:.2} s ({na} pages), with upload {u:.2} s ({nu} of {} pages)",
        upload.flows[0].pages_started
    );
    assert!(a < 2.0, "alone {a} s");
    assert!(nu * 5 < na, "pages: alone {na}, with upload {nu}");
    assert!(u > 2.0 * a, "alone {a} s, with upload {u} s");
}

#[test]
fn web_keys_are_checked_and_unset_guesses_are_assumed() {
    let text = web(BASE, "");
    let sc = load_str(&text, None, &[]).unwrap();
    match &sc.flows[0].app {
        AppSpec::Web { spec: w } => {
            assert_eq!((w.objects, w.object_sizes.as_slice()), (44, &[7475u64][..]));
            assert_eq!(
                (w.connections, w.request_size, w.main_first),
                (6, 700, true)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sc.flows.len(), 12);
    for k in ["request_size", "connections", "think", "main_first"] {
        assert!(
            sc.assumed
                .iter()
                .any(|(key, _)| key == &format!("flows.0.web.{k}")),
            "{k} assumed"
        );
    }
    let err = |extra: &str| {
        load_str(&format!("{text}{extra}"), None, &[])
            .unwrap_err()
            .to_string()
    };
    assert!(err("[flows.web]\nobjects = 0\n").contains("flows.0.web.objects: must be at least 1"));
    let e = err("[flows.web]\nconections = 2\n");
    assert!(e.contains("flows.0.web.conections: unknown key"), "{e}");
    assert!(err("reader = { kind = \"constant\", rate = \"1Mbps\" }\n")
        .contains("flows.0.reader: a web flow's reader must be greedy"));
    let bulk =
        format!("{BASE}\n[[flows]]\nfrom = \"server\"\nto = \"phone\"\n[flows.web]\npages = 1\n");
    let e = load_str(&bulk, None, &[]).unwrap_err().to_string();
    assert!(
        e.contains("flows.0.web: only used with app = \"web\""),
        "{e}"
    );
}
