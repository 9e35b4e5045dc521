//! `app = "bulk"`: always has data (a greedy FTP).

use super::App;
use crate::engine::endpoint::{Endpoints, FlowEnds};

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
