//! Structured output across servers: recognising a server that refuses the output-format
//! parameter, and checking an answer against the schema it was asked for.

use reqwest::StatusCode;
use serde_json::Value;

/// Words a server's refusal of the output-format parameter names: the parameter itself
/// (`response_format`, the Responses API's `text.format`) or the format types.
const OUTPUT_FORMAT_WORDS: [&str; 5] = [
    "response_format",
    "text.format",
    "json_schema",
    "json_object",
    "structured output",
];

/// True when a failed response refuses the output-format parameter the request carried: a
/// 4xx, or a 5xx (llama-cpp-python answers a validation error with 500), whose body names
/// the parameter. Authentication, missing routes, timeouts and rate limits are never read as
/// a refusal, whatever their body says.
pub(super) fn refuses_output_format(status: StatusCode, body: &[u8]) -> bool {
    let code = status.as_u16();
    if !(400..=599).contains(&code) || matches!(code, 401 | 403 | 404 | 408 | 429) {
        return false;
    }
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    OUTPUT_FORMAT_WORDS.iter().any(|word| text.contains(word))
}

/// The answer's JSON text when it validates against `schema`, else why not. A code fence
/// around the object (which models add when no format is enforced) is taken off.
pub(super) fn check_answer(schema: &Value, text: &str) -> Result<String, String> {
    let json_text = escape_raw_control_characters(without_code_fence(text));
    let value: Value =
        serde_json::from_str(&json_text).map_err(|e| format!("the answer is not JSON: {e}"))?;
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        // The schemas are the crate user's; one the validator cannot compile still gets JSON.
        Err(error) => {
            tracing::warn!(%error, "the output schema does not compile; the answer is checked as JSON only");
            return Ok(json_text);
        }
    };
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .take(5)
        .map(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("{at}: {error}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(json_text)
    } else {
        Err(format!(
            "the answer does not match the output schema: {}",
            problems.join("; ")
        ))
    }
}

/// Items an array may hold in a grammar-bound schema when the schema sets no `maxItems`.
const GRAMMAR_MAX_ITEMS: u64 = 8;
/// The least room a string gets in a grammar-bound schema, in characters.
const GRAMMAR_MIN_STRING_CHARS: u64 = 64;
/// The most: llama.cpp builds `maxLength` as that many nested optional characters and refuses
/// a grammar past about 2,000 of them (llama-cpp-python's server 0.3.36 then exits); 1,000 was
/// measured to work.
const GRAMMAR_MAX_STRING_CHARS: u64 = 1_000;

/// `schema` with every unbounded string given a `maxLength` and every unbounded array a
/// `maxItems`, so that an answer generated under the grammar a server compiles from it (llama.cpp's
/// `json_object` with a schema) ends within `max_chars`. A model that never closes its string
/// would otherwise fill the context window and be cut off mid-answer. The room is shared
/// evenly among the strings the answer can hold, within what a grammar engine accepts; bounds
/// the schema sets are kept.
pub(super) fn bounded_for_grammar(schema: &Value, max_chars: u64) -> Value {
    let slots = string_slots(schema).max(1);
    let per_string = (max_chars / slots).clamp(GRAMMAR_MIN_STRING_CHARS, GRAMMAR_MAX_STRING_CHARS);
    let mut bounded = schema.clone();
    bound(&mut bounded, per_string);
    bounded
}

/// How many strings an answer to `schema` can hold, arrays counted at their item limit.
fn string_slots(schema: &Value) -> u64 {
    let mut slots = 0u64;
    if has_type(schema, "string") {
        slots = slots.saturating_add(1);
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for property in properties.values() {
            slots = slots.saturating_add(string_slots(property));
        }
    }
    if let Some(items) = schema.get("items") {
        let limit = schema
            .get("maxItems")
            .and_then(Value::as_u64)
            .unwrap_or(GRAMMAR_MAX_ITEMS);
        slots = slots.saturating_add(limit.saturating_mul(string_slots(items)));
    }
    slots
}

fn bound(schema: &mut Value, per_string: u64) {
    if has_type(schema, "string") && schema.get("maxLength").is_none() {
        schema["maxLength"] = Value::from(per_string);
    }
    if has_type(schema, "array") && schema.get("maxItems").is_none() {
        schema["maxItems"] = Value::from(GRAMMAR_MAX_ITEMS);
    }
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for property in properties.values_mut() {
            bound(property, per_string);
        }
    }
    if let Some(items) = schema.get_mut("items") {
        bound(items, per_string);
    }
}

/// True when the schema's `type` is `name` or a list holding it.
fn has_type(schema: &Value, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == name,
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == name),
        _ => false,
    }
}

/// The request input for one repair attempt: the original input, the rejected answer and why.
pub(super) fn repair_input(input: &str, answer: &str, problem: &str) -> String {
    format!(
        "{input}\n\nYour previous answer was rejected ({problem}). The rejected answer:\n{}\n\n\
         Answer again with one corrected JSON object that matches the schema, and nothing else.",
        super::errors::cap_chars(answer)
    )
}

/// `text` with every raw control character inside a JSON string escaped. Small models under
/// a grammar (llama.cpp's `json_object`) write line breaks inside strings as they are, which
/// JSON forbids; valid JSON has none there, so it comes back unchanged.
fn escape_raw_control_characters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for ch in text.chars() {
        if in_string && !escaped && ch.is_ascii_control() {
            match ch {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                other => out.push_str(&format!("\\u{:04x}", u32::from(other))),
            }
            continue;
        }
        out.push(ch);
        if escaped {
            escaped = false;
        } else if in_string && ch == '\\' {
            escaped = true;
        } else if ch == '"' {
            in_string = !in_string;
        }
    }
    out
}

/// `text` without a surrounding ```` ``` ```` or ```` ```json ```` fence.
fn without_code_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    let body = body.strip_prefix("json").unwrap_or(body);
    body.trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "title": { "type": "string" }, "count": { "type": "integer" } },
            "required": ["title", "count"],
            "additionalProperties": false
        })
    }

    #[test]
    fn llama_cpp_python_validation_errors_are_refusals_of_the_format() {
        // llama-cpp-python answers a json_schema response_format with 500 and a pydantic error.
        let body = br#"{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}]","type":"internal_server_error"}}"#;
        assert!(refuses_output_format(
            StatusCode::INTERNAL_SERVER_ERROR,
            body
        ));
        let unsupported = br#"{"error":{"message":"Unsupported parameter: text.format"}}"#;
        assert!(refuses_output_format(StatusCode::BAD_REQUEST, unsupported));
        assert!(!refuses_output_format(
            StatusCode::BAD_GATEWAY,
            b"<html>bad gateway</html>"
        ));
        assert!(!refuses_output_format(StatusCode::UNAUTHORIZED, body));
        assert!(!refuses_output_format(StatusCode::TOO_MANY_REQUESTS, body));
        assert!(!refuses_output_format(StatusCode::OK, body));
        let overflow = br#"{"error":{"message":"maximum context length is 8192 tokens"}}"#;
        assert!(!refuses_output_format(StatusCode::BAD_REQUEST, overflow));
    }

    #[test]
    fn a_grammar_bound_schema_ends_every_string_and_array_within_the_room() {
        let schema = json!({
            "type": "object",
            "properties": {
                "memory_md": { "type": "string" },
                "slug": { "type": ["string", "null"], "maxLength": 60 },
                "obsolete": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["memory_md", "slug", "obsolete"],
            "additionalProperties": false
        });
        let bounded = bounded_for_grammar(&schema, 5_000);
        // Ten strings share the room: memory_md, slug and eight array items.
        assert_eq!(bounded["properties"]["memory_md"]["maxLength"], 500);
        assert_eq!(bounded["properties"]["slug"]["maxLength"], 60);
        assert_eq!(bounded["properties"]["obsolete"]["maxItems"], 8);
        assert_eq!(bounded["properties"]["obsolete"]["items"]["maxLength"], 500);
        assert_eq!(bounded["required"], schema["required"]);
        // No room left still leaves every string a little.
        let tight = bounded_for_grammar(&schema, 0);
        assert_eq!(tight["properties"]["memory_md"]["maxLength"], 64);
        // A grammar engine refuses very long strings: the room is capped.
        let wide = bounded_for_grammar(&schema, 1_000_000);
        assert_eq!(wide["properties"]["memory_md"]["maxLength"], 1_000);
    }

    #[test]
    fn answers_are_checked_against_the_schema() {
        assert_eq!(
            check_answer(&schema(), r#"{"title":"a","count":2}"#).as_deref(),
            Ok(r#"{"title":"a","count":2}"#)
        );
        assert_eq!(
            check_answer(&schema(), "```json\n{\"title\":\"a\",\"count\":2}\n```").as_deref(),
            Ok(r#"{"title":"a","count":2}"#)
        );
        let missing = check_answer(&schema(), r#"{"title":"a"}"#).unwrap_err();
        assert!(missing.contains("count"), "{missing}");
        let wrong_type = check_answer(&schema(), r#"{"title":"a","count":"two"}"#).unwrap_err();
        assert!(wrong_type.contains("/count"), "{wrong_type}");
        // A grammar-constrained small model writes line breaks inside strings as they are.
        assert_eq!(
            check_answer(
                &schema(),
                "{\"title\":\"line one\nline\ttwo\",\n \"count\":2}"
            )
            .as_deref(),
            Ok("{\"title\":\"line one\\nline\\ttwo\",\n \"count\":2}")
        );
        let prose = check_answer(&schema(), "Sure! Here it is.").unwrap_err();
        assert!(prose.contains("not JSON"), "{prose}");
    }

    proptest! {
        #[test]
        fn a_grammar_bound_schema_bounds_every_string(room in 0u64..1_000_000, depth in 0usize..4) {
            let mut schema = json!({ "type": "string" });
            for _ in 0..depth {
                schema = json!({ "type": "object", "properties": { "a": schema.clone(), "b": { "type": "array", "items": schema } } });
            }
            let bounded = bounded_for_grammar(&schema, room);
            fn every_string_bounded(schema: &Value) -> bool {
                let own = !has_type(schema, "string") || schema.get("maxLength").is_some();
                let array = !has_type(schema, "array") || schema.get("maxItems").is_some();
                let inner = schema.get("properties").and_then(Value::as_object).is_none_or(|p| p.values().all(every_string_bounded))
                    && schema.get("items").is_none_or(every_string_bounded);
                own && array && inner
            }
            prop_assert!(every_string_bounded(&bounded));
            prop_assert_eq!(string_slots(&bounded), string_slots(&schema));
        }

        #[test]
        fn any_answer_is_checked_without_panicking(text in "\\PC{0,200}") {
            if let Ok(json_text) = check_answer(&schema(), &text) {
                let value: Value = serde_json::from_str(&json_text).unwrap();
                prop_assert!(value["title"].is_string() && value["count"].is_i64());
            }
        }

        #[test]
        fn valid_json_is_never_changed_by_the_escaping(value in any::<Vec<(String, u8)>>()) {
            let text = serde_json::to_string(&value).unwrap();
            prop_assert_eq!(escape_raw_control_characters(&text), text);
        }

        #[test]
        fn escaped_text_parses_whenever_only_raw_controls_were_wrong(parts in proptest::collection::vec("[a-z \n\t\r\u{1}\"]{0,8}", 1..4)) {
            // A JSON array of strings whose line breaks and tabs were written without escaping
            // (no backslash in the contents, so every `\n` pair is an escape).
            let loose: Vec<String> = parts
                .iter()
                .map(|part| serde_json::to_string(part).unwrap()
                    .replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r"))
                .collect();
            let text = format!("[{}]", loose.join(","));
            let fixed = escape_raw_control_characters(&text);
            let parsed: Vec<String> = serde_json::from_str(&fixed).unwrap();
            prop_assert_eq!(parsed, parts);
        }

        #[test]
        fn any_failed_body_is_classified_without_panicking(
            status in 100u16..600,
            body in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let status = StatusCode::from_u16(status).unwrap();
            let refused = refuses_output_format(status, &body);
            prop_assert!(!refused || status.is_client_error() || status.is_server_error());
        }
    }
}
