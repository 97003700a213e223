//! The blocked audit, counted in code: `update_goal` with status `blocked` is accepted only on
//! the third consecutive goal turn that reports the same blocker.
//!
//! Turns are delimited by recorded turns (`record_turn`): every report made between two
//! recorded turns belongs to the one open turn, so retrying the call inside a turn counts once.
//! A recorded goal turn that carried no report resets the count; so do resuming and editing the
//! objective. Blockers are compared after [`normalize_blocker`], so rewording the case,
//! spacing or punctuation of the same blocker still counts.

/// Consecutive goal turns that must report the same blocker before `blocked` is accepted.
pub const BLOCKER_REPORTS_REQUIRED: u32 = 3;

/// Most characters a blocked or complete reason may have, counted after trimming.
pub const MAX_REASON_CHARS: usize = 2_000;

/// The form blockers are compared in: lower-cased, punctuation and symbols removed, every run
/// of whitespace collapsed to one space, no leading or trailing space.
pub fn normalize_blocker(reason: &str) -> String {
    let kept: String = reason
        .chars()
        .filter(|ch| ch.is_alphanumeric() || ch.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The audit's memory of the blocker being reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BlockerAuditState {
    /// The normalized blocker of the current streak.
    pub(crate) key: Option<String>,
    /// The blocker as last reported (redacted).
    pub(crate) reason: Option<String>,
    /// Consecutive goal turns that reported it, this one included when `reported_this_turn`.
    pub(crate) reports: u32,
    /// Whether the open turn already reported a blocker.
    pub(crate) reported_this_turn: bool,
}

/// What one blocked report comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockedReport {
    /// The third consecutive report: the goal becomes blocked.
    Accepted,
    /// Counted; `reports` so far.
    Counted { reports: u32 },
    /// This turn already reported this blocker; nothing changed.
    AlreadyReported { reports: u32 },
}

impl BlockerAuditState {
    /// Counts a report of `key` (normalized) in the open turn.
    pub(crate) fn report(&mut self, key: String, reason: String) -> BlockedReport {
        let same = self.key.as_deref() == Some(key.as_str());
        if self.reported_this_turn && same {
            return BlockedReport::AlreadyReported {
                reports: self.reports,
            };
        }
        // A different blocker starts a new streak, even within the turn that reported another.
        self.reports = if same {
            self.reports.saturating_add(1)
        } else {
            1
        };
        self.key = Some(key);
        self.reason = Some(reason);
        self.reported_this_turn = true;
        if self.reports >= BLOCKER_REPORTS_REQUIRED {
            BlockedReport::Accepted
        } else {
            BlockedReport::Counted {
                reports: self.reports,
            }
        }
    }

    /// Closes the open goal turn: a turn without a report breaks the streak.
    pub(crate) fn close_turn(&mut self) {
        if !self.reported_this_turn {
            *self = BlockerAuditState::default();
        }
        self.reported_this_turn = false;
    }

    /// Forgets the streak (resume, edit, acceptance, completion).
    pub(crate) fn reset(&mut self) {
        *self = BlockerAuditState::default();
    }
}
