//! What the host and the user decide about introspection: whether memory is on, the mode, the
//! scope, what the root is called, and the budgets.
//!
//! Most settings come from the `[introspect]` table of the home's `config.toml`
//! ([`IntrospectConfig::apply_toml`]); whether memory is used at all is the write path's
//! `[memories] use_memories`, which the caller passes as [`IntrospectConfig::enabled`].

use memory_protocol::introspect::{MemoryMode, MemoryScope};

use crate::error::{Error, Result};

/// Token budget of the summary when nothing says otherwise (the write path's default).
pub const DEFAULT_SUMMARY_BUDGET_TOKENS: u64 = 2_500;
/// Largest note, in bytes, when nothing says otherwise.
pub const DEFAULT_NOTE_MAX_BYTES: u32 = 2_000;
/// Most notes a day (UTC) when nothing says otherwise.
pub const DEFAULT_NOTES_PER_DAY: u32 = 20;
/// Tokens of not-yet-consolidated notes the block shows, when nothing says otherwise.
pub const DEFAULT_PENDING_NOTES_TOKENS: u64 = 600;

/// Introspection settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntrospectConfig {
    /// Memory is used (`[memories] use_memories`); `false` is the disabled state.
    pub enabled: bool,
    /// When disabled, inject one neutral line instead of nothing (`disabled_line`).
    pub disabled_line: bool,
    /// Whether the model may add notes (`mode = "writable"` or `"read-only"`).
    pub mode: MemoryMode,
    /// Whether the host offers the memory tools to the model (`tools`).
    pub tools: bool,
    /// How far this memory reaches (`scope = "global"` or `"project"`).
    pub scope: MemoryScope,
    /// What to call the root instead of its absolute path (`root_alias`, e.g. `~/.agent-memory`).
    pub root_alias: Option<String>,
    /// Token budget of the always-on summary (`summary_budget_tokens`).
    pub summary_budget_tokens: u64,
    /// Largest note in bytes (`note_max_bytes`).
    pub note_max_bytes: u32,
    /// Most notes a day, UTC (`notes_per_day`).
    pub notes_per_day: u32,
    /// Tokens of pending notes shown in the block (`pending_notes_tokens`).
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

    /// Applies the `[introspect]` table of a config file's text. Other tables are ignored; an
    /// unknown key or a value of the wrong type is an error naming the key.
    pub fn apply_toml(&mut self, text: &str) -> Result<()> {
        let document: toml::Table = text
            .parse()
            .map_err(|error: toml::de::Error| Error::Config(error.message().to_owned()))?;
        let Some(table) = document.get("introspect") else {
            return Ok(());
        };
        let table = table
            .as_table()
            .ok_or_else(|| Error::Config("`introspect` must be a table".to_owned()))?;
        for (key, value) in table {
            match key.as_str() {
                "disabled_line" => self.disabled_line = boolean(key, value)?,
                "tools" => self.tools = boolean(key, value)?,
                "mode" => {
                    self.mode = match string(key, value)? {
                        "writable" => MemoryMode::Writable,
                        "read-only" | "read_only" => MemoryMode::ReadOnly,
                        other => return Err(one_of(key, other, "writable, read-only")),
                    }
                }
                "scope" => {
                    self.scope = match string(key, value)? {
                        "global" => MemoryScope::Global,
                        "project" => MemoryScope::Project,
                        other => return Err(one_of(key, other, "global, project")),
                    }
                }
                "root_alias" => {
                    let alias = string(key, value)?.trim();
                    self.root_alias = (!alias.is_empty()).then(|| alias.to_owned());
                }
                "summary_budget_tokens" => {
                    self.summary_budget_tokens = positive(key, value, 1_000_000)?;
                }
                "note_max_bytes" => {
                    self.note_max_bytes = u32::try_from(positive(key, value, 100_000)?)
                        .unwrap_or(DEFAULT_NOTE_MAX_BYTES);
                }
                "notes_per_day" => {
                    self.notes_per_day = u32::try_from(positive(key, value, 10_000)?)
                        .unwrap_or(DEFAULT_NOTES_PER_DAY);
                }
                "pending_notes_tokens" => {
                    self.pending_notes_tokens = positive(key, value, 100_000)?;
                }
                other => {
                    return Err(Error::Config(format!(
                        "unknown key `{other}` (known: disabled_line, tools, mode, scope, \
                         root_alias, summary_budget_tokens, note_max_bytes, notes_per_day, \
                         pending_notes_tokens)"
                    )));
                }
            }
        }
        Ok(())
    }
}

fn boolean(key: &str, value: &toml::Value) -> Result<bool> {
    value
        .as_bool()
        .ok_or_else(|| Error::Config(format!("`{key}` must be true or false")))
}

fn string<'a>(key: &str, value: &'a toml::Value) -> Result<&'a str> {
    value
        .as_str()
        .ok_or_else(|| Error::Config(format!("`{key}` must be a string")))
}

fn positive(key: &str, value: &toml::Value, max: u64) -> Result<u64> {
    value
        .as_integer()
        .and_then(|number| u64::try_from(number).ok())
        .filter(|number| (1..=max).contains(number))
        .ok_or_else(|| Error::Config(format!("`{key}` must be an integer from 1 to {max}")))
}

fn one_of(key: &str, found: &str, known: &str) -> Error {
    Error::Config(format!("`{key}` is `{found}`; expected one of {known}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sets_each_key_and_names_bad_ones() {
        let mut config = IntrospectConfig::default();
        config
            .apply_toml(
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

        for (text, needle) in [
            (
                "[introspect]\nmode = \"sometimes\"",
                "`mode` is `sometimes`",
            ),
            ("[introspect]\nnotes_per_day = 0", "`notes_per_day` must be"),
            ("[introspect]\ncolour = 1", "unknown key `colour`"),
            (
                "[introspect]\ntools = \"yes\"",
                "`tools` must be true or false",
            ),
            ("introspect = 3", "must be a table"),
            ("[introspect\n", "config [introspect]"),
        ] {
            let error = IntrospectConfig::default().apply_toml(text).unwrap_err();
            assert!(error.to_string().contains(needle), "{text}: {error}");
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
