//! The model settings of `config.toml`: top-level keys, as codex writes them beside its own
//! (`model = "gpt-5"` and the rest are codex's and left alone).
//!
//! ```toml
//! model_context_window = 128000          # tokens; at least 1
//! model_reasoning_effort = "low"         # minimal, low, medium or high, in any case
//! model_request_timeout_seconds = 300    # one HTTP request; at least 1
//! model_request_max_retries = 4          # retries of one call after a rate limit or 5xx
//! model_structured_output = "json_object" # json_schema (default), json_object or instructions
//! ```

use memory_config::{Place, Ranges, Section};
use memory_protocol::StructuredOutputMode;
use memory_protocol::model::ReasoningEffort;
use serde::{Deserialize, Deserializer};

/// The top-level model keys. Every key is optional: a missing one leaves the choice to the
/// command-line flag, the server or the client's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// `model_context_window`: the model's context window in tokens, at least 1 (default: what
    /// the server reports, else the table of known models).
    #[serde(rename = "model_context_window")]
    pub context_window: Option<u64>,
    /// `model_reasoning_effort`: `minimal`, `low`, `medium` or `high` (default: none sent).
    #[serde(rename = "model_reasoning_effort", deserialize_with = "effort")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `model_request_timeout_seconds`: limit on one HTTP request, at least 1 (default 300).
    #[serde(rename = "model_request_timeout_seconds")]
    pub request_timeout_seconds: Option<u64>,
    /// `model_request_max_retries`: retries of one call after a rate limit or server error,
    /// 0 or more (default: the client's).
    #[serde(rename = "model_request_max_retries")]
    pub request_max_retries: Option<u32>,
    /// `model_structured_output`: how requests first ask for JSON, `json_schema`,
    /// `json_object` or `instructions` (default `json_schema`; the client steps down by itself
    /// when a server refuses a mode, so this only saves the first refused request).
    #[serde(rename = "model_structured_output")]
    pub structured_output: Option<StructuredOutputMode>,
}

impl Section for ModelConfig {
    const PLACE: Place = Place::TopLevel(&[
        "model_context_window",
        "model_reasoning_effort",
        "model_request_timeout_seconds",
        "model_request_max_retries",
        "model_structured_output",
    ]);

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> memory_config::Result<()> {
        if let Some(window) = self.context_window {
            ranges.require_at_least("model_context_window", window, 1)?;
        }
        if let Some(seconds) = self.request_timeout_seconds {
            ranges.require_at_least("model_request_timeout_seconds", seconds, 1)?;
        }
        Ok(())
    }
}

/// The effort words, as they are written.
const EFFORTS: &[&str] = &["minimal", "low", "medium", "high"];

/// `minimal`, `low`, `medium` or `high`, in any case.
pub fn parse_reasoning_effort(text: &str) -> Option<ReasoningEffort> {
    match text.trim().to_ascii_lowercase().as_str() {
        "minimal" => Some(ReasoningEffort::Minimal),
        "low" => Some(ReasoningEffort::Low),
        "medium" => Some(ReasoningEffort::Medium),
        "high" => Some(ReasoningEffort::High),
        _ => None,
    }
}

fn effort<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<ReasoningEffort>, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_reasoning_effort(&text)
        .map(Some)
        .ok_or_else(|| serde::de::Error::unknown_variant(&text, EFFORTS))
}

#[cfg(test)]
mod tests {
    use memory_config::{Config, Origin};

    use super::*;

    fn parse(text: &str) -> memory_config::Result<ModelConfig> {
        let no_env: [(&str, &str); 0] = [];
        Config::parse(text, Origin::Text)?
            .with_environment(no_env)
            .section::<ModelConfig>()
            .map(|loaded| loaded.value)
    }

    #[test]
    fn model_settings_are_top_level_keys_as_codex_writes_them() {
        let text = "model = \"gpt-5\"\nmodel_context_window = 128000\n\
                    model_reasoning_effort = \"Low\"\nmodel_request_timeout_seconds = 30\n\
                    model_request_max_retries = 2\n[memories]\nextract_model = \"gpt-5-mini\"\n";
        assert_eq!(
            parse(text).unwrap(),
            ModelConfig {
                context_window: Some(128_000),
                reasoning_effort: Some(ReasoningEffort::Low),
                request_timeout_seconds: Some(30),
                request_max_retries: Some(2),
                structured_output: None,
            }
        );
        assert_eq!(
            parse("model_structured_output = \"json_object\"")
                .unwrap()
                .structured_output,
            Some(StructuredOutputMode::JsonObject)
        );
        assert_eq!(parse("").unwrap(), ModelConfig::default());
        for (bad, expected) in [
            (
                "model_context_window = 0",
                "config text: `model_context_window` must be at least 1, found 0",
            ),
            (
                "model_context_window = \"big\"",
                "config text: `model_context_window` must be an integer, found string",
            ),
            (
                "model_reasoning_effort = \"max\"",
                "config text: `model_reasoning_effort` must be one of minimal, low, medium, \
                 high, found `max`",
            ),
            (
                "model_structured_output = \"xml\"",
                "config text: `model_structured_output` must be one of json_schema, \
                 json_object, instructions, found `xml`",
            ),
            (
                "model_request_max_retries = -1",
                "config text: `model_request_max_retries` must be between 0 and 4294967295, \
                 found -1",
            ),
        ] {
            assert_eq!(parse(bad).unwrap_err().to_string(), expected, "{bad}");
        }
    }
}
