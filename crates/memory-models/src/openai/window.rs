//! Finding a model's context window: what the server says, else a table of known models.

use serde_json::Value;

/// Context windows of well-known models, by name prefix (the longest matching prefix wins).
/// Input windows: for the gpt-5 family that is the 272 k tokens a request may carry, not the
/// 400 k total that includes the reply.
const KNOWN_MODELS: [(&str, u64); 11] = [
    ("gpt-5", 272_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("codex-mini", 200_000),
    ("gpt-oss", 131_072),
    ("gpt-3.5-turbo", 16_385),
    ("chatgpt-4o", 128_000),
];

/// The context window of a well-known model, by name (an `org/` prefix is ignored).
pub fn known_context_window(model: &str) -> Option<u64> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN_MODELS
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, window)| window)
}

/// The serving limit a `GET {base}/models` answer gives for `model`: vLLM's `max_model_len`,
/// or a `context_length` / `context_window` field as some gateways send. Training-time figures
/// (llama.cpp's `meta.n_ctx_train`) are not serving limits and are ignored.
pub fn window_from_models_list(body: &Value, model: &str) -> Option<u64> {
    let entries = body.get("data")?.as_array()?;
    let entry = entries
        .iter()
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (entries.len() == 1).then(|| &entries[0]))?;
    ["max_model_len", "context_length", "context_window"]
        .iter()
        .find_map(|key| entry.get(*key).and_then(Value::as_u64))
        .filter(|&window| window > 0)
}

/// The context size a llama.cpp server runs with, from its `GET /props` answer.
pub fn window_from_llama_props(body: &Value) -> Option<u64> {
    body.pointer("/default_generation_settings/n_ctx")
        .or_else(|| body.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|&window| window > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_models_match_by_longest_prefix() {
        assert_eq!(known_context_window("gpt-5-mini"), Some(272_000));
        assert_eq!(known_context_window("gpt-4.1-nano"), Some(1_047_576));
        assert_eq!(known_context_window("GPT-4o-2024-08-06"), Some(128_000));
        assert_eq!(known_context_window("openai/gpt-oss-20b"), Some(131_072));
        assert_eq!(known_context_window("llama3:8b"), None);
    }

    #[test]
    fn server_reports_are_read() {
        let vllm = json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 4096},
            {"id": "Qwen/Qwen2.5-7B", "max_model_len": 32768}
        ]});
        assert_eq!(
            window_from_models_list(&vllm, "Qwen/Qwen2.5-7B"),
            Some(32_768)
        );
        assert_eq!(window_from_models_list(&vllm, "missing"), None);
        let single = json!({"data": [{"id": "served-name", "context_length": 8192}]});
        assert_eq!(window_from_models_list(&single, "alias"), Some(8_192));
        let llama_models = json!({"data": [{"id": "m", "meta": {"n_ctx_train": 131072}}]});
        assert_eq!(window_from_models_list(&llama_models, "m"), None);
        let props = json!({"default_generation_settings": {"n_ctx": 16384}});
        assert_eq!(window_from_llama_props(&props), Some(16_384));
        assert_eq!(window_from_llama_props(&json!({"n_ctx": 0})), None);
        assert_eq!(window_from_models_list(&json!([1, 2]), "m"), None);
    }
}
