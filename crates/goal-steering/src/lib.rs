//! Thread goals: long tasks that continue across turns.
//!
//! This crate owns the goal store, token and time accounting against a budget, the goal
//! status machine (`active`, `paused`, `blocked`, `usageLimited`, `budgetLimited`,
//! `complete`), handling of the `update_goal` tool, and the hidden continuation, budget-limit
//! and objective-updated prompts. The blocked exit is audited in code: the same blocker must be
//! reported on three consecutive goal turns.
//!
//! The wire types ([`memory_protocol::goal`]) live in `memory-protocol`. The store and the
//! steering logic arrive with the goal-steering issue; until then this crate only fixes its
//! place in the layer graph.
