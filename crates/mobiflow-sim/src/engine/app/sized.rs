//! `size = ...`: one transfer of `size` bytes at the flow's start; the flow is complete
//! when the receiving application has read them.

use super::{App, AppKind, AppSpec, FlowCx};
use crate::engine::endpoint::{Endpoints, FlowEnds};
use crate::scenario::walk::{positive_size, Tbl, R};

pub(in crate::engine) struct Transfer {
    pub size: u64,
}

impl App for Transfer {
    fn total(&self) -> Option<u64> {
        Some(self.size)
    }
    fn start(&self, ep: &mut Endpoints) -> u64 {
        ep.write(self.size);
        self.size
    }
}

impl AppKind for Transfer {
    const KEYS: &'static [&'static str] = &["size"];
    const EXAMPLE: Option<&'static str> = Some("{ kind = \"sized\", size = \"1MB\" }");
    fn parse(t: Option<&Tbl>, _: &mut FlowCx, _: &str) -> R<AppSpec> {
        let t = t.expect("sized needs its table");
        Ok(AppSpec::Sized {
            size: t.req("size", positive_size)?,
        })
    }
}
