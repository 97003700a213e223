//! Choosing a model from a spec string such as `offline`, `openai:gpt-5-mini` or `gpt-5-mini`.

use std::sync::Arc;
use std::time::Duration;

use memory_protocol::model::ReasoningEffort;
use memory_protocol::{ContextWindow, ContextWindowSource, ModelClient, StructuredOutputMode};

use crate::error::{Error, Result};

/// The spec of the built-in offline engine (the `memory-offline` crate), which the caller
/// supplies to [`build_model`] and [`model_from_spec`].
pub const OFFLINE_SPEC: &str = "offline";

/// The spec used when none is given: the built-in offline engine.
pub const DEFAULT_MODEL_SPEC: &str = OFFLINE_SPEC;

/// Which OpenAI-compatible API to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiFlavour {
    /// `POST {base}/responses`.
    Responses,
    /// `POST {base}/chat/completions`.
    ChatCompletions,
}

/// Provider prefixes of APIs this crate does not speak; refused rather than sent to an
/// OpenAI-compatible server as a model name.
const OTHER_PROVIDERS: [&str; 7] = [
    "anthropic",
    "azure",
    "bedrock",
    "claude",
    "gemini",
    "google",
    "vertex",
];

/// The provider of the Responses API.
const OPENAI: &str = "openai";
/// The provider of the Chat Completions API.
const OPENAI_CHAT: &str = "openai-chat";

/// The entry of `known` that `text` misses by one or two edits (and is not equal to), if any.
fn closest<'a>(text: &str, known: &[&'a str]) -> Option<&'a str> {
    let text = text.to_ascii_lowercase();
    known
        .iter()
        .map(|candidate| (edit_distance(&text, candidate), *candidate))
        .filter(|(distance, _)| (1..=2).contains(distance))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
        .or_else(|| known.iter().find(|candidate| **candidate == text).copied())
}

/// Levenshtein distance between two short strings, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            let deletion = previous[j + 1] + 1;
            let insertion = current[j] + 1;
            current.push(substitution.min(deletion).min(insertion));
        }
        previous = current;
    }
    previous[b.len()]
}

/// A parsed model spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// The built-in offline engine (`offline`, or an empty spec).
    Offline,
    /// A model on the configured OpenAI-compatible server.
    OpenAi {
        /// Which API to call.
        flavour: ApiFlavour,
        /// The model name sent to the server.
        name: String,
    },
}

impl ModelSpec {
    /// Parses a spec:
    ///
    /// - `offline` (also an empty spec): the built-in engine, no network;
    /// - `openai:NAME`: an OpenAI-compatible server, Responses API;
    /// - `openai-chat:NAME`: an OpenAI-compatible server, Chat Completions API;
    /// - a bare `NAME` (as codex writes `extract_model = "gpt-5-mini"`): the configured
    ///   OpenAI-compatible server, Responses API. A colon inside it is part of the name when
    ///   what comes before it carries a digit or a dot (Ollama tags: `qwen2.5-coder:7b`);
    ///   otherwise that part is a provider (`foo:bar`), and one this crate does not speak is
    ///   refused (`openai:mistral:latest` names such a tagged model).
    ///
    /// A spec one letter or two away from `offline` or a provider (`offlin`, `opnai:gpt-5`) is
    /// refused with the spec it is closest to.
    pub fn parse(spec: &str) -> Result<ModelSpec> {
        let spec = spec.trim();
        if spec.is_empty() || spec == OFFLINE_SPEC {
            return Ok(ModelSpec::Offline);
        }
        let (flavour, name) = match spec.split_once(':') {
            Some((OPENAI, name)) => (ApiFlavour::Responses, name.trim()),
            Some((OPENAI_CHAT, name)) => (ApiFlavour::ChatCompletions, name.trim()),
            // A colon inside a bare name is part of it (Ollama tags: `qwen2.5-coder:7b`).
            Some((model, _)) if model.contains(|ch: char| ch.is_ascii_digit() || ch == '.') => {
                (ApiFlavour::Responses, spec)
            }
            Some((provider, name)) => {
                let hint = match closest(provider, &[OPENAI, OPENAI_CHAT]) {
                    Some(near) => format!("; did you mean `{near}:{name}`?"),
                    None if OTHER_PROVIDERS.contains(&provider) => String::new(),
                    None => format!(" (a model whose name has a colon: `{OPENAI}:{spec}`)"),
                };
                return Err(Error::UnknownProvider {
                    provider: provider.to_owned(),
                    spec: spec.to_owned(),
                    hint,
                });
            }
            None => match closest(spec, &[OFFLINE_SPEC]) {
                Some(near) => {
                    return Err(Error::NearMiss {
                        spec: spec.to_owned(),
                        suggestion: near.to_owned(),
                    });
                }
                None => (ApiFlavour::Responses, spec),
            },
        };
        if name.is_empty() {
            return Err(Error::MissingModelName {
                spec: spec.to_owned(),
            });
        }
        if name.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
            return Err(Error::UnknownSpec {
                spec: spec.to_owned(),
            });
        }
        Ok(ModelSpec::OpenAi {
            flavour,
            name: name.to_owned(),
        })
    }
}

/// How to build an HTTP model; every field is optional and the offline engine ignores all
/// but `base_url` (which it refuses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOptions {
    /// Base URL of the OpenAI-compatible server (default `https://api.openai.com/v1`).
    pub base_url: Option<String>,
    /// The model's context window in tokens, when the user knows it better than the server.
    pub context_window: Option<u64>,
    /// Reasoning effort to send; `None` sends none (many models refuse the field).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Limit on one HTTP request, response included.
    pub request_timeout: Option<Duration>,
    /// Tries per call for rate limits and server errors, the first included.
    pub max_tries: Option<u32>,
    /// Ask the server for its context window when none is configured.
    pub discover_context_window: bool,
    /// The structured-output mode to start with (default `json_schema`); the client steps
    /// down from it when the server refuses it.
    pub structured_output: Option<StructuredOutputMode>,
}

/// A model ready to use, and the context window it will report.
#[derive(Clone)]
pub struct BuiltModel {
    /// The model.
    pub client: Arc<dyn ModelClient>,
    /// Its context window and where the figure came from.
    pub context_window: ContextWindow,
}

impl std::fmt::Debug for BuiltModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltModel")
            .field("client", &self.client.name())
            .field("context_window", &self.context_window)
            .finish()
    }
}

/// Builds the model a spec names with `options`, settling its context window (the configured
/// figure, else the server's report when `discover_context_window` is set, else the known-model
/// table, else unknown). The `offline` spec gives `offline`, the built-in engine the caller
/// constructed (`memory_offline::OfflineEngine`), with no context window.
pub async fn build_model(
    spec: &str,
    options: &ModelOptions,
    offline: Arc<dyn ModelClient>,
) -> Result<BuiltModel> {
    match ModelSpec::parse(spec)? {
        ModelSpec::Offline => {
            if let Some(url) = &options.base_url {
                return Err(Error::NotForOffline {
                    setting: format!("--base-url {url}"),
                });
            }
            Ok(BuiltModel {
                client: offline,
                context_window: ContextWindow {
                    tokens: None,
                    source: ContextWindowSource::Default,
                },
            })
        }
        ModelSpec::OpenAi { flavour, name } => {
            build_open_ai(spec.trim(), flavour, name, options).await
        }
    }
}

#[cfg(feature = "openai")]
async fn build_open_ai(
    spec: &str,
    flavour: ApiFlavour,
    name: String,
    options: &ModelOptions,
) -> Result<BuiltModel> {
    use crate::openai::OpenAiClient;

    let mut client =
        OpenAiClient::new(open_ai_config(flavour, name, options)).map_err(|source| {
            Error::Client {
                spec: spec.to_owned(),
                source,
            }
        })?;
    let context_window = if options.discover_context_window {
        client.resolve_context_window().await
    } else {
        client.window()
    };
    Ok(BuiltModel {
        client: Arc::new(client),
        context_window,
    })
}

#[cfg(not(feature = "openai"))]
async fn build_open_ai(
    spec: &str,
    _flavour: ApiFlavour,
    _name: String,
    _options: &ModelOptions,
) -> Result<BuiltModel> {
    Err(Error::FeatureDisabled {
        spec: spec.to_owned(),
    })
}

#[cfg(feature = "openai")]
fn open_ai_config(
    flavour: ApiFlavour,
    name: String,
    options: &ModelOptions,
) -> crate::openai::OpenAiConfig {
    let mut config = crate::openai::OpenAiConfig::new(name);
    config.flavour = flavour;
    if let Some(url) = &options.base_url {
        config.base_url = url.trim().to_owned();
    }
    config.context_window = options.context_window;
    config.reasoning_effort = options.reasoning_effort;
    if let Some(timeout) = options.request_timeout {
        config.request_timeout = timeout;
    }
    if let Some(tries) = options.max_tries {
        config.retry.max_tries = tries.max(1);
    }
    if let Some(mode) = options.structured_output {
        config.structured_output = mode;
    }
    config
}

/// Builds the model a spec names (see [`ModelSpec::parse`]); the `offline` spec gives
/// `offline`, the built-in engine the caller constructed (`memory_offline::OfflineEngine`).
///
/// `base_url` overrides the server (default `https://api.openai.com/v1`); it is rejected for
/// `offline`, which has no server. The API key is read from `OPENAI_API_KEY` when a request is
/// sent, so building a client never fails for a missing key.
pub fn model_from_spec(
    spec: &str,
    base_url: Option<&str>,
    offline: Arc<dyn ModelClient>,
) -> Result<Arc<dyn ModelClient>> {
    match ModelSpec::parse(spec)? {
        ModelSpec::Offline => {
            if let Some(url) = base_url {
                return Err(Error::NotForOffline {
                    setting: format!("--base-url {url}"),
                });
            }
            Ok(offline)
        }
        ModelSpec::OpenAi { flavour, name } => open_ai(spec.trim(), flavour, name, base_url),
    }
}

#[cfg(feature = "openai")]
fn open_ai(
    spec: &str,
    flavour: ApiFlavour,
    name: String,
    base_url: Option<&str>,
) -> Result<Arc<dyn ModelClient>> {
    let options = ModelOptions {
        base_url: base_url.map(str::to_owned),
        ..ModelOptions::default()
    };
    let client = crate::openai::OpenAiClient::new(open_ai_config(flavour, name, &options))
        .map_err(|source| Error::Client {
            spec: spec.to_owned(),
            source,
        })?;
    Ok(Arc::new(client))
}

#[cfg(not(feature = "openai"))]
fn open_ai(
    spec: &str,
    _flavour: ApiFlavour,
    _name: String,
    _base_url: Option<&str>,
) -> Result<Arc<dyn ModelClient>> {
    Err(Error::FeatureDisabled {
        spec: spec.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use memory_protocol::{ModelError, ModelRequest, ModelResponse};

    use super::*;

    /// Stands in for the offline engine, which lives in `memory-offline`.
    struct Offline;

    #[async_trait::async_trait]
    impl ModelClient for Offline {
        fn name(&self) -> String {
            OFFLINE_SPEC.to_owned()
        }

        fn context_window(&self) -> Option<u64> {
            None
        }

        async fn complete(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
            Err(ModelError::Other {
                message: "not called".to_owned(),
            })
        }
    }

    fn model_from_spec(spec: &str, base_url: Option<&str>) -> crate::Result<Arc<dyn ModelClient>> {
        super::model_from_spec(spec, base_url, Arc::new(Offline))
    }

    #[test]
    fn offline_is_the_default_and_takes_no_base_url() {
        assert_eq!(model_from_spec("", None).unwrap().name(), "offline");
        assert_eq!(model_from_spec("offline", None).unwrap().name(), "offline");
        let Err(err) = model_from_spec("offline", Some("http://x")) else {
            panic!("a base url for the offline model must be rejected");
        };
        assert!(err.to_string().contains("does not apply"), "{err}");
    }

    #[test]
    fn specs_pick_the_flavour_and_a_bare_name_means_the_configured_server() {
        let parse = |spec| ModelSpec::parse(spec).unwrap();
        assert_eq!(parse(" offline "), ModelSpec::Offline);
        for (spec, flavour, name) in [
            ("openai:gpt-5-mini", ApiFlavour::Responses, "gpt-5-mini"),
            ("openai-chat:llama3", ApiFlavour::ChatCompletions, "llama3"),
            ("gpt-5-mini", ApiFlavour::Responses, "gpt-5-mini"),
            (
                "qwen2.5-coder:7b",
                ApiFlavour::Responses,
                "qwen2.5-coder:7b",
            ),
        ] {
            let expected = ModelSpec::OpenAi {
                flavour,
                name: name.to_owned(),
            };
            assert_eq!(parse(spec), expected, "{spec}");
        }
    }

    #[cfg(feature = "openai")]
    #[test]
    fn openai_specs_build_named_clients() {
        let responses = model_from_spec("openai:gpt-5-mini", None).unwrap();
        assert_eq!(responses.name(), "openai:gpt-5-mini");
        let chat = model_from_spec("openai-chat:llama3", Some("http://127.0.0.1:1/v1")).unwrap();
        assert_eq!(chat.name(), "openai-chat:llama3");
        let bare = model_from_spec("gpt-5-mini", None).unwrap();
        assert_eq!(bare.name(), "openai:gpt-5-mini");
    }

    #[test]
    fn near_misses_and_unknown_providers_are_refused_with_a_suggestion() {
        let message = |spec| ModelSpec::parse(spec).unwrap_err().to_string();
        assert_eq!(
            message("offlin"),
            "unknown model `offlin`: did you mean `offline`?"
        );
        assert_eq!(
            message("Ofline"),
            "unknown model `Ofline`: did you mean `offline`?"
        );
        let unknown = message("foo:bar");
        assert!(
            unknown.starts_with("unknown provider `foo` in model spec `foo:bar`"),
            "{unknown}"
        );
        assert!(unknown.contains("`openai:foo:bar`"), "{unknown}");
        assert!(message("opnai:gpt-5").contains("did you mean `openai:gpt-5`?"));
        assert!(message("openai_chat:llama3").contains("did you mean `openai-chat:llama3`?"));
        // Far from every known spec: a model name as it is.
        assert!(matches!(
            ModelSpec::parse("llama3"),
            Ok(ModelSpec::OpenAi { .. })
        ));
        assert!(matches!(
            ModelSpec::parse("openai:mistral:latest"),
            Ok(ModelSpec::OpenAi { name, .. }) if name == "mistral:latest"
        ));
    }

    proptest::proptest! {
        #[test]
        fn any_spec_parses_or_is_refused_without_a_panic(spec in "\\PC{0,40}") {
            let _ = ModelSpec::parse(&spec);
        }
    }

    #[test]
    fn bad_specs_are_clear_errors() {
        for spec in ["anthropic:claude", "openai:", "openai-chat:  ", "gpt 5"] {
            let Err(err) = model_from_spec(spec, None) else {
                panic!("spec `{spec}` must be rejected");
            };
            let err = err.to_string();
            assert!(err.contains(spec.trim()), "{spec}: {err}");
        }
    }
}
