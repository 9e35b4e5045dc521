//! The analytical model of TFRC under disconnection of the Freeze-DCCP paper (Mehani,
//! Boreli and Ernst, "Analysis of TFRC in Disconnected Scenarios and Performance
//! Improvements with Freeze-DCCP", ACM MobiArch 2009), for Python: the table
//! "Analytically-Derived Possible Performance Improvements" beside the slides'
//! numbers, the (R, X_d) each row of its losses table implies, and the model
//! for one handover with R and X_d given (to compare with a simulation).

use mobiflow_proto::tfrc::model::{
    fit_losses_table, handover_at, improvement_table, improvement_table_at, seed_links,
    Assumptions, Handover, ImprovementTable, Link, PAPER_LOSSES, PAPER_UNUSED, TECHNOLOGIES,
};
use pyo3::prelude::*;
use serde_json::{json, Value};

fn handover_json(h: &Handover) -> Value {
    json!({
        "r_s": h.r, "r_new_s": h.r_new, "x_d_bps": h.x_d * 8.0, "x_max_bps": h.x_max * 8.0,
        "t_d_s": h.t_d, "i_t": h.i_t, "i_x": h.i_x, "i_d": h.i_d, "x_c_bps": h.x_c * 8.0,
        "t_idle_s": h.t_idle, "n_ss": h.n_ss, "t_ss_s": h.t_ss, "n_grow": h.n_grow,
        "n_lost": h.n_lost, "n_wasted": h.n_wasted, "n_wasted_bigger": h.n_wasted_bigger,
        "unused": h.unused(),
    })
}

fn table_json(t: &ImprovementTable) -> Value {
    let cells = |c: &[[mobiflow_proto::tfrc::model::Cell; 4]; 4]| -> Vec<Vec<f64>> {
        c.iter()
            .map(|r| r.iter().map(|x| x.computed).collect())
            .collect()
    };
    json!({
        "losses": cells(&t.losses),
        "unused": cells(&t.unused),
        "matching_cells": t.matching_cells(),
        "handovers": t.handovers.iter().map(|r| r.iter().map(handover_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "text": t.to_string(),
    })
}

fn assumptions(s: f64, t_mbi: f64, rtt_wired: f64, handoff_base: f64) -> Assumptions {
    Assumptions {
        s,
        t_mbi,
        rtt_wired,
        handoff_base,
    }
}

/// The model's table from the slides' inputs, the per-row fits and the table at the
/// fitted (R, X_d), as JSON.
#[pyfunction]
#[pyo3(signature = (s = 500.0, t_mbi = 64.0, rtt_wired = 0.1, handoff_base = 2.5))]
pub fn freeze_dccp_model(s: f64, t_mbi: f64, rtt_wired: f64, handoff_base: f64) -> String {
    let a = assumptions(s, t_mbi, rtt_wired, handoff_base);
    let links = seed_links();
    let fits = fit_losses_table(&a);
    let fitted = improvement_table_at(&fits.map(|f| (f.r, f.x_d)), &a);
    json!({
        "technologies": TECHNOLOGIES,
        "links": links.iter().map(|l| json!({"name": l.name, "bandwidth_bps": l.bandwidth_bps, "delay_s": l.delay_s, "rtt_s": a.rtt(l), "t_handoff_s": a.handoff_time(l)})).collect::<Vec<_>>(),
        "assumptions": {"s": a.s, "t_mbi": a.t_mbi, "rtt_wired": a.rtt_wired, "handoff_base": a.handoff_base},
        "paper": {"losses": PAPER_LOSSES, "unused": PAPER_UNUSED},
        "slides": table_json(&improvement_table(&a)),
        "fits": fits.iter().map(|f| json!({"r_s": f.r, "x_d_bps": f.x_d * 8.0, "values": f.values, "error": f.error})).collect::<Vec<_>>(),
        "fitted": table_json(&fitted),
    })
    .to_string()
}

/// The model for one handover: a sender at `x_d_bps` with RTT `r_s` on the old path,
/// a disconnection of `t_d_s`, a new path of `to_bandwidth_bps` and one-way wireless
/// delay `to_delay_s` (its RTT per the seed: 2·delay + rtt_wired), as JSON.
#[pyfunction]
#[pyo3(signature = (r_s, x_d_bps, t_d_s, to_bandwidth_bps, to_delay_s, s = 500.0, t_mbi = 64.0, rtt_wired = 0.1))]
#[allow(clippy::too_many_arguments)]
pub fn freeze_dccp_handover(
    r_s: f64,
    x_d_bps: f64,
    t_d_s: f64,
    to_bandwidth_bps: f64,
    to_delay_s: f64,
    s: f64,
    t_mbi: f64,
    rtt_wired: f64,
) -> String {
    // handover_at takes t_D from the destination's handoff time: choose the base so
    // that it equals t_d_s.
    let to = Link {
        name: "to",
        bandwidth_bps: to_bandwidth_bps,
        delay_s: to_delay_s,
    };
    let base = t_d_s - 2.0 * to_delay_s - rtt_wired;
    let a = assumptions(s, t_mbi, rtt_wired, base);
    handover_json(&handover_at(r_s, x_d_bps / 8.0, &to, &a)).to_string()
}
