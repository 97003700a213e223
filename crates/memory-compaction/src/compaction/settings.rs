//! Compaction settings, the token budgets derived from them, and the trigger.
//!
//! Every budget is a pure function of the context window and the settings, so a host can show
//! them, and tests can pin them, without running a compaction.

/// Tokens reserved for the summary and the next turn when the settings name none.
pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
/// The reserve is never less than this share of the window, in percent.
pub const MIN_RESERVE_PERCENT: u64 = 15;
/// Absolute cap on a summary's output, however large the window: a bigger budget invites the
/// summarizer to copy rather than compress.
pub const MAX_SUMMARY_TOKENS: u64 = 16_384;
/// Tokens of recent conversation kept verbatim by default.
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;
/// Context window assumed when neither the model nor the caller knows it.
pub const DEFAULT_WINDOW_TOKENS: u64 = 200_000;
/// Share of the window the summarizer's input may use, in percent: local token estimates and
/// the provider's tokenizer disagree, so a fifth is left as margin.
pub const INPUT_WINDOW_PERCENT: u64 = 80;
/// Cap on the short (display) summary's output.
pub const MAX_SHORT_SUMMARY_TOKENS: u64 = 512;
/// Largest summarizer-input floor: an input window is never planned below
/// `min(16_384, max(1_024, window / 8))` tokens, and overflow recovery gives up below it.
pub const MAX_INPUT_FLOOR_TOKENS: u64 = 16_384;
/// Smallest summarizer-input floor.
pub const MIN_INPUT_FLOOR_TOKENS: u64 = 1_024;
/// Default re-arm point of the trigger, in percent of the threshold (see [`trigger_tokens`]).
pub const DEFAULT_REARM_PERCENT: u8 = 80;

/// How and when to compact.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionSettings {
    /// When false, no plan is ever produced: not at the threshold, not on overflow, not on
    /// request.
    pub enabled: bool,
    /// Tokens reserved for the summary and the next turn; `None` uses
    /// [`DEFAULT_RESERVE_TOKENS`]. The effective reserve is never below
    /// [`MIN_RESERVE_PERCENT`] of the window.
    pub reserve_tokens: Option<u64>,
    /// Tokens of recent conversation kept verbatim (at least this many, ending on a valid cut).
    pub keep_recent_tokens: u64,
    /// Compact when the context exceeds this many tokens. Wins over `threshold_percent`.
    pub threshold_tokens: Option<u64>,
    /// Compact when the context exceeds this share of the window (clamped to 1..=99).
    pub threshold_percent: Option<u8>,
    /// After a compaction, the trigger re-arms once the context has grown by
    /// `(100 - rearm_percent)` percent of the threshold beyond what the compaction left
    /// (clamped to 1..=100), so a compaction that cannot get far below the threshold does not
    /// run again at every step.
    pub rearm_percent: u8,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: None,
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
            threshold_tokens: None,
            threshold_percent: None,
            rearm_percent: DEFAULT_REARM_PERCENT,
        }
    }
}

impl CompactionSettings {
    /// The reserve for `window`: `max(15% of the window, reserve_tokens or 16_384)`, replaced by
    /// the proportional 15% when the defaulted reserve would leave almost nothing of a small
    /// window, or when any reserve would swallow the window whole.
    pub fn reserve_for(&self, window: u64) -> u64 {
        let proportional = (window.saturating_mul(MIN_RESERVE_PERCENT) / 100).max(1);
        let configured = self.reserve_tokens.unwrap_or(DEFAULT_RESERVE_TOKENS);
        let effective = configured.max(proportional);
        let defaulted = self.reserve_tokens.is_none();
        if effective >= window || (defaulted && effective >= window.saturating_sub(proportional)) {
            proportional
        } else {
            effective
        }
    }

    /// The threshold for `window`: `threshold_tokens` (within `1..window`), else
    /// `threshold_percent` of the window, else the window less its reserve.
    pub fn threshold_for(&self, window: u64) -> u64 {
        let below_window = window.saturating_sub(1);
        if let Some(tokens) = self.threshold_tokens.filter(|t| *t > 0) {
            return tokens.max(1).min(below_window);
        }
        if let Some(percent) = self.threshold_percent.filter(|p| *p > 0) {
            let percent = u64::from(percent.clamp(1, 99));
            return window.saturating_mul(percent) / 100;
        }
        window
            .saturating_sub(self.reserve_for(window))
            .min(below_window)
    }

    /// Where [`CompactionSettings::threshold_for`] takes the threshold from.
    pub fn threshold_source(&self, window: u64) -> ThresholdSource {
        if self.threshold_tokens.is_some_and(|t| t > 0) {
            return ThresholdSource::Tokens;
        }
        if let Some(percent) = self.threshold_percent.filter(|p| *p > 0) {
            return ThresholdSource::Percent(percent.clamp(1, 99));
        }
        ThresholdSource::WindowLessReserve(self.reserve_for(window))
    }
}

/// The budgets of one compaction, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// The reserve they derive from.
    pub reserve: u64,
    /// Cap on the main summary: `min(0.8 x reserve, 16_384)`.
    pub output: u64,
    /// Cap on the serialized conversation of one summarizer window: 80% of the window, less
    /// the output cap and the carried summary, floored at [`Budgets::floor`].
    pub input: u64,
    /// The input floor, `min(16_384, max(1_024, window / 8))`.
    pub floor: u64,
    /// Cap on the short summary: `min(512, 0.2 x reserve)`.
    pub short_summary: u64,
    /// Cap on the turn-prefix summary: `min(0.5 x reserve, 16_384)`.
    pub turn_prefix: u64,
}

impl Budgets {
    /// The budgets for a summarizer with a `window`-token context, carrying a previous summary
    /// of `carried_tokens` (the running summary of earlier windows never exceeds the output
    /// cap, so the larger of the two is set aside).
    pub fn new(window: u64, settings: &CompactionSettings, carried_tokens: u64) -> Budgets {
        let reserve = settings.reserve_for(window);
        let output = (reserve.saturating_mul(8) / 10).clamp(1, MAX_SUMMARY_TOKENS);
        let floor = (window / 8).clamp(MIN_INPUT_FLOOR_TOKENS, MAX_INPUT_FLOOR_TOKENS);
        let carried = carried_tokens.max(output);
        let input = (window.saturating_mul(INPUT_WINDOW_PERCENT) / 100)
            .saturating_sub(output)
            .saturating_sub(carried)
            .max(floor);
        Budgets {
            reserve,
            output,
            input,
            floor,
            short_summary: (reserve / 5).clamp(1, MAX_SHORT_SUMMARY_TOKENS),
            turn_prefix: (reserve / 2).clamp(1, MAX_SUMMARY_TOKENS),
        }
    }
}

/// How big the context is now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextSize {
    /// What the provider last reported, when it did.
    pub provider_tokens: Option<u64>,
    /// The local estimate of the stored context (summary plus live messages).
    pub estimated_tokens: u64,
    /// What the latest compaction left (its `tokens_after`), when there was one.
    pub tokens_after_last_compaction: Option<u64>,
}

impl ContextSize {
    /// The size the trigger compares: the larger of the provider's figure and the estimate, so
    /// neither a stale provider figure nor an undercounting estimate hides a full context.
    pub fn tokens(&self) -> u64 {
        self.provider_tokens.unwrap_or(0).max(self.estimated_tokens)
    }
}

/// The context size above which [`should_compact`] says yes, or `None` when compaction is
/// disabled or the window is unknown (zero).
///
/// The threshold applies as long as the latest compaction left the context well below it.
/// When it did not (a kept message as large as the window, say), the trigger waits until the
/// context has grown by the re-arm gap beyond what that compaction left, instead of compacting
/// again at every step: `max(threshold, tokens_after + gap)`, with
/// `gap = threshold x (100 - rearm_percent) / 100`.
pub fn trigger_tokens(
    window: u64,
    tokens_after_last_compaction: Option<u64>,
    settings: &CompactionSettings,
) -> Option<u64> {
    if !settings.enabled || window == 0 {
        return None;
    }
    let threshold = settings.threshold_for(window);
    let rearm = u64::from(settings.rearm_percent.clamp(1, 100));
    let gap = threshold.saturating_mul(100 - rearm) / 100;
    let after = tokens_after_last_compaction.unwrap_or(0);
    Some(threshold.max(after.saturating_add(gap)))
}

/// True when the context should be compacted now. Pure and cheap: call it between tool steps,
/// not only at the end of a turn, so a long tool loop cannot run the context past the window.
pub fn should_compact(window: u64, size: &ContextSize, settings: &CompactionSettings) -> bool {
    trigger_tokens(window, size.tokens_after_last_compaction, settings)
        .is_some_and(|trigger| size.tokens() > trigger)
}

/// Where a compaction threshold comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdSource {
    /// `threshold_tokens`.
    Tokens,
    /// `threshold_percent` of the window.
    Percent(u8),
    /// The window less the reserve (this many tokens).
    WindowLessReserve(u64),
}

/// Whether a conversation is due for compaction, and the figures that say why
/// ([`check_due`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueCheck {
    /// True when the conversation should be compacted now.
    pub due: bool,
    /// Compaction is enabled.
    pub enabled: bool,
    /// The context window.
    pub window: u64,
    /// The size the trigger compares ([`ContextSize::tokens`]).
    pub tokens: u64,
    /// The threshold and where it comes from.
    pub threshold: u64,
    /// Where the threshold comes from.
    pub source: ThresholdSource,
    /// The size above which it is due: the threshold, or higher while the trigger waits to
    /// re-arm after a compaction that left the context near the threshold; `None` when
    /// compaction is disabled or the window is unknown.
    pub trigger: Option<u64>,
    /// What the latest compaction left, when there was one.
    pub tokens_after_last_compaction: Option<u64>,
}

impl DueCheck {
    /// Why, in one sentence.
    pub fn reason(&self) -> String {
        let threshold = match self.source {
            ThresholdSource::Tokens => format!("threshold_tokens {}", self.threshold),
            ThresholdSource::Percent(percent) => format!(
                "{percent}% of the {}-token window: {}",
                self.window, self.threshold
            ),
            ThresholdSource::WindowLessReserve(reserve) => format!(
                "the {}-token window less the {reserve}-token reserve: {}",
                self.window, self.threshold
            ),
        };
        let tokens = self.tokens;
        match self.trigger {
            None if !self.enabled => {
                "compaction is disabled ([compaction] enabled = false)".to_owned()
            }
            None => "the context window is unknown (0 tokens)".to_owned(),
            Some(trigger) if self.due && trigger == self.threshold => {
                format!("the context holds {tokens} tokens, above the threshold ({threshold})")
            }
            Some(trigger) if self.due => format!(
                "the context holds {tokens} tokens, above {trigger}, where the trigger re-arms after the last compaction (threshold: {threshold})"
            ),
            Some(trigger) if trigger > self.threshold && tokens > self.threshold => format!(
                "the context holds {tokens} tokens, above the threshold ({threshold}), but the last compaction left {} tokens: the trigger re-arms at {trigger}",
                self.tokens_after_last_compaction.unwrap_or(0)
            ),
            Some(trigger) => format!(
                "the context holds {tokens} tokens, {} below the threshold ({threshold})",
                trigger.saturating_sub(tokens)
            ),
        }
    }
}

/// Whether a conversation of `size` in a `window`-token context is due for compaction under
/// `settings`, with the figures behind the answer (the same answer as [`should_compact`]).
pub fn check_due(window: u64, size: &ContextSize, settings: &CompactionSettings) -> DueCheck {
    let trigger = trigger_tokens(window, size.tokens_after_last_compaction, settings);
    DueCheck {
        due: should_compact(window, size, settings),
        enabled: settings.enabled,
        window,
        tokens: size.tokens(),
        threshold: settings.threshold_for(window),
        source: settings.threshold_source(window),
        trigger,
        tokens_after_last_compaction: size.tokens_after_last_compaction,
    }
}
