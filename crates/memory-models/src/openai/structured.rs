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
