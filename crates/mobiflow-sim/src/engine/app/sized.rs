//! `size = ...`: one transfer of `size` bytes at the flow's start; the flow is complete
//! when the receiving application has read them.

use super::App;
use crate::engine::endpoint::{Endpoints, FlowEnds};

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
