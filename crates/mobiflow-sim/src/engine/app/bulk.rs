//! `app = "bulk"`: always has data (a greedy FTP).

use super::{App, AppKind, AppSpec, FlowCx};
use crate::engine::endpoint::{Endpoints, FlowEnds};
use crate::scenario::walk::{Tbl, R};

pub(in crate::engine) struct Bulk;

impl App for Bulk {
    fn start(&self, ep: &mut Endpoints) -> u64 {
        ep.set_unlimited();
        0
    }
    fn offers_all_it_sends(&self) -> bool {
        true
    }
}

impl AppKind for Bulk {
    fn parse(_: Option<&Tbl>, _: &mut FlowCx, _: &str) -> R<AppSpec> {
        Ok(AppSpec::Bulk)
    }
}
