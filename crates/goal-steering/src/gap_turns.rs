//! Goal turns for hosts that report none: quiet gaps between goal-tool calls delimit them.
//!
//! A host that owns its loop records each turn (`record_turn`), and that closes the blocked
//! audit's turn. An MCP client cannot: the server sees only the tool calls. [`GapTurns`] reads
//! a turn boundary from time instead: a goal-tool call that arrives at least the configured gap
//! (`[goals] mcp_turn_gap_seconds`) after the previous one, or the first call of a connection,
//! starts a new turn. The model cannot move the boundary: calling `get_goal` or any other tool
//! in between does not end a turn, so three reports in one busy turn still count once.

use std::time::Duration;

use crate::error::Result;
use crate::store::GoalStore;

/// The turn boundaries of one connection's goal-tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapTurns {
    gap_ms: i64,
    last_call_ms: Option<i64>,
}

impl GapTurns {
    /// Boundaries at quiet gaps of at least `gap`.
    pub fn new(gap: Duration) -> GapTurns {
        GapTurns {
            gap_ms: i64::try_from(gap.as_millis()).unwrap_or(i64::MAX),
            last_call_ms: None,
        }
    }

    /// Called before each goal-tool call on `thread_id`: ends the open turn (see
    /// [`GoalStore::end_open_turn`]) when this call starts a new one, reading the time from the
    /// store's clock. Returns whether it did.
    pub fn before_call(&mut self, store: &mut GoalStore, thread_id: &str) -> Result<bool> {
        let now = store.now_ms();
        let new_turn = self
            .last_call_ms
            .is_none_or(|last| now.saturating_sub(last) >= self.gap_ms);
        if new_turn {
            store.end_open_turn(thread_id)?;
        }
        self.last_call_ms = Some(now);
        Ok(new_turn)
    }
}
