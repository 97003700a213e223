//! Choosing a model from a spec string such as `offline` or `openai:gpt-5-mini`.

use std::sync::Arc;

use anyhow::{Context, bail};
use memory_protocol::ModelClient;

use crate::offline::OfflineEngine;
use crate::openai::{ApiFlavour, OpenAiClient, OpenAiConfig};

/// The spec used when none is given: the built-in offline engine.
pub const DEFAULT_MODEL_SPEC: &str = "offline";

/// Builds the model a spec names:
///
/// - `offline` (the default, also for an empty spec): the built-in engine, no network;
/// - `openai:NAME`: an OpenAI-compatible server, Responses API;
/// - `openai-chat:NAME`: an OpenAI-compatible server, Chat Completions API.
///
/// `base_url` overrides the server (default `https://api.openai.com/v1`); it is rejected for
/// `offline`, which has no server. The API key is read from `OPENAI_API_KEY` when a request is
/// sent, so building a client never fails for a missing key.
pub fn model_from_spec(spec: &str, base_url: Option<&str>) -> anyhow::Result<Arc<dyn ModelClient>> {
    let spec = spec.trim();
    if spec.is_empty() || spec == DEFAULT_MODEL_SPEC {
        if let Some(url) = base_url {
            bail!("--base-url {url} does not apply to the offline model; use openai:NAME");
        }
        return Ok(Arc::new(OfflineEngine::new()));
    }
    let (flavour, name) = match spec.split_once(':') {
        Some(("openai", name)) => (ApiFlavour::Responses, name.trim()),
        Some(("openai-chat", name)) => (ApiFlavour::ChatCompletions, name.trim()),
        _ => bail!(
            "unknown model spec `{spec}`: expected `offline`, `openai:NAME` or `openai-chat:NAME`"
        ),
    };
    if name.is_empty() {
        bail!("model spec `{spec}` has no model name: write it as `openai:NAME`");
    }
    let mut config = OpenAiConfig::new(name);
    config.flavour = flavour;
    if let Some(url) = base_url {
        config.base_url = url.trim().to_owned();
    }
    let client = OpenAiClient::new(config)
        .with_context(|| format!("cannot build the HTTP client for model `{spec}`"))?;
    Ok(Arc::new(client))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn openai_specs_pick_the_flavour() {
        let responses = model_from_spec("openai:gpt-5-mini", None).unwrap();
        assert_eq!(responses.name(), "openai:gpt-5-mini");
        let chat = model_from_spec("openai-chat:llama3", Some("http://127.0.0.1:1/v1")).unwrap();
        assert_eq!(chat.name(), "openai-chat:llama3");
    }

    #[test]
    fn bad_specs_are_clear_errors() {
        for spec in ["gpt-5", "anthropic:claude", "openai:", "openai-chat:  "] {
            let Err(err) = model_from_spec(spec, None) else {
                panic!("spec `{spec}` must be rejected");
            };
            let err = err.to_string();
            assert!(err.contains(spec.trim()), "{spec}: {err}");
        }
    }
}
