//! What the host and the user decide about introspection: whether memory is on, the mode, the
//! scope, what the root is called, and the budgets.
//!
//! Most settings are the `[introspect]` table of `config.toml`, read by
//! `memory_config::Config::section`; whether memory is used at all is the write path's
//! `[memories] use_memories`, which the caller passes as [`IntrospectConfig::enabled`].

use memory_config::{Place, Ranges, Section};
use memory_protocol::introspect::{MemoryMode, MemoryScope};
use serde::{Deserialize, Deserializer};

/// Token budget of the summary when nothing says otherwise (the write path's default).
pub(crate) const DEFAULT_SUMMARY_BUDGET_TOKENS: u64 = 2_500;
/// Largest note, in bytes, when nothing says otherwise.
pub(crate) const DEFAULT_NOTE_MAX_BYTES: u32 = 2_000;
/// Most notes a day (UTC) when nothing says otherwise.
pub(crate) const DEFAULT_NOTES_PER_DAY: u32 = 20;
/// Tokens of not-yet-consolidated notes the block shows, when nothing says otherwise.
pub(crate) const DEFAULT_PENDING_NOTES_TOKENS: u64 = 600;

/// Introspection settings: the `[introspect]` table, plus [`IntrospectConfig::enabled`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IntrospectConfig {
    /// Memory is used (`[memories] use_memories`, set by the caller); `false` is the disabled
    /// state. Default true.
    #[serde(skip)]
    pub enabled: bool,
    /// `disabled_line`: when disabled, inject one neutral line instead of nothing. Default
    /// false.
    pub disabled_line: bool,
    /// `mode`: whether the model may add notes, `"writable"` or `"read-only"` (also
    /// `"read_only"`). Default writable.
    #[serde(deserialize_with = "mode")]
    pub mode: MemoryMode,
    /// `tools`: whether the host offers the memory tools to the model. Default true.
    pub tools: bool,
    /// `scope`: how far this memory reaches, `"global"` or `"project"`. Default global.
    pub scope: MemoryScope,
    /// `root_alias`: what to call the root instead of its absolute path (e.g.
    /// `~/.agent-memory`); blank means none. Default none.
    pub root_alias: Option<String>,
    /// `summary_budget_tokens`: token budget of the always-on summary. Default 2,500, range 1
    /// to 1,000,000.
    pub summary_budget_tokens: u64,
    /// `note_max_bytes`: largest note in bytes. Default 2,000, range 1 to 100,000.
    pub note_max_bytes: u32,
    /// `notes_per_day`: most notes a day, UTC. Default 20, range 1 to 10,000.
    pub notes_per_day: u32,
    /// `pending_notes_tokens`: tokens of pending notes shown in the block. Default 600, range
    /// 1 to 100,000.
    pub pending_notes_tokens: u64,
}

impl Default for IntrospectConfig {
    fn default() -> Self {
        IntrospectConfig {
            enabled: true,
            disabled_line: false,
            mode: MemoryMode::Writable,
            tools: true,
            scope: MemoryScope::Global,
            root_alias: None,
            summary_budget_tokens: DEFAULT_SUMMARY_BUDGET_TOKENS,
            note_max_bytes: DEFAULT_NOTE_MAX_BYTES,
            notes_per_day: DEFAULT_NOTES_PER_DAY,
            pending_notes_tokens: DEFAULT_PENDING_NOTES_TOKENS,
        }
    }
}

impl IntrospectConfig {
    /// The mode the model actually gets: writable only when notes are allowed and the host
    /// offers the tools, so the block never promises a `memory_note` the model cannot call.
    pub fn effective_mode(&self) -> MemoryMode {
        if self.tools && self.mode == MemoryMode::Writable {
            MemoryMode::Writable
        } else {
            MemoryMode::ReadOnly
        }
    }
}

impl Section for IntrospectConfig {
    const PLACE: Place = Place::Table("introspect");

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> memory_config::Result<()> {
        ranges.require(
            "summary_budget_tokens",
            self.summary_budget_tokens,
            1..=1_000_000,
        )?;
        ranges.require("note_max_bytes", self.note_max_bytes, 1..=100_000)?;
        ranges.require("notes_per_day", self.notes_per_day, 1..=10_000)?;
        ranges.require(
            "pending_notes_tokens",
            self.pending_notes_tokens,
            1..=100_000,
        )?;
        self.root_alias = self
            .root_alias
            .take()
            .map(|alias| alias.trim().to_owned())
            .filter(|alias| !alias.is_empty());
        Ok(())
    }
}

/// `writable`, `read-only` or `read_only`.
fn mode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<MemoryMode, D::Error> {
    let word = String::deserialize(deserializer)?;
    match word.as_str() {
        "writable" => Ok(MemoryMode::Writable),
        "read-only" | "read_only" => Ok(MemoryMode::ReadOnly),
        _ => Err(serde::de::Error::unknown_variant(
            &word,
            &["writable", "read-only"],
        )),
    }
}

#[cfg(test)]
mod tests {
    use memory_config::{Config, Origin};

    use super::*;

    fn load(text: &str) -> memory_config::Result<IntrospectConfig> {
        let no_env: [(&str, &str); 0] = [];
        Ok(Config::parse(text, Origin::Text)?
            .with_environment(no_env)
            .section::<IntrospectConfig>()?
            .value)
    }

    #[test]
    fn the_table_sets_each_key_and_names_bad_ones() {
        let config = load(
            "[memories]\nuse_memories = true\n[introspect]\nmode = \"read-only\"\n\
             scope = \"project\"\nroot_alias = \"~/.agent-memory/memories\"\n\
             notes_per_day = 3\ndisabled_line = true\n",
        )
        .unwrap();
        assert_eq!(config.mode, MemoryMode::ReadOnly);
        assert_eq!(config.effective_mode(), MemoryMode::ReadOnly);
        assert_eq!(config.scope, MemoryScope::Project);
        assert_eq!(
            config.root_alias.as_deref(),
            Some("~/.agent-memory/memories")
        );
        assert_eq!(config.notes_per_day, 3);
        assert!(config.disabled_line);
        assert_eq!(load("").unwrap(), IntrospectConfig::default());
        assert_eq!(
            load("[introspect]\nmode = \"read_only\"\nroot_alias = \" \"").unwrap(),
            IntrospectConfig {
                mode: MemoryMode::ReadOnly,
                ..IntrospectConfig::default()
            }
        );

        for (text, expected) in [
            (
                "[introspect]\nmode = \"sometimes\"",
                "config text: `introspect.mode` must be one of writable, read-only, found `sometimes`",
            ),
            (
                "[introspect]\nscope = \"world\"",
                "config text: `introspect.scope` must be one of global, project, found `world`",
            ),
            (
                "[introspect]\nnotes_per_day = 0",
                "config text: `introspect.notes_per_day` must be between 1 and 10000, found 0",
            ),
            (
                "[introspect]\nnote_max_bytes = 5000000000",
                "config text: `introspect.note_max_bytes` must be between 0 and 4294967295, found 5000000000",
            ),
            (
                "[introspect]\ntools = \"yes\"",
                "config text: `introspect.tools` must be a boolean, found string",
            ),
            (
                "introspect = 3",
                "config text: `introspect` must be a table, found integer",
            ),
        ] {
            assert_eq!(load(text).unwrap_err().to_string(), expected, "{text}");
        }
        let unknown = load("[introspect]\ncolour = 1").unwrap_err().to_string();
        assert!(
            unknown.starts_with("config text: unknown key `introspect.colour` (known: "),
            "{unknown}"
        );
        let syntax = load("[introspect\n").unwrap_err();
        assert!(
            matches!(syntax, memory_config::Error::Syntax { .. }),
            "{syntax}"
        );
    }

    proptest::proptest! {
        #[test]
        fn loading_any_text_never_panics(text in ".{0,200}") {
            let _ = load(&text);
        }
    }

    #[test]
    fn without_tools_the_mode_is_read_only() {
        let config = IntrospectConfig {
            tools: false,
            ..IntrospectConfig::default()
        };
        assert_eq!(config.mode, MemoryMode::Writable);
        assert_eq!(config.effective_mode(), MemoryMode::ReadOnly);
    }
}
