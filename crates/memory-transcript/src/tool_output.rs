//! What a tool's output says about how the command ended.
//!
//! Codex records an exit code in several ways: object metadata, a JSON string
//! `{"output", "metadata": {"exit_code"}}`, `{"success": bool}`, or a text header such as
//! `Process exited with code 1` or `Exit code: 1`. The offline engine (which tells passing
//! commands from failing ones) and the compactor's rollout converter (which flags failed tool
//! results) read it the same way, from here.

use memory_protocol::rollout::ToolOutput;
use serde_json::Value;

/// The exit code (when the output records one) and the output text. Codex writes it in several
/// ways: object metadata, a JSON string `{"output", "metadata": {"exit_code"}}`, or a text
/// header such as `Process exited with code 1` or `Exit code: 1`.
pub fn exit_code_and_text(output: &ToolOutput) -> (Option<i64>, String) {
    let from_object = |map: &serde_json::Map<String, Value>| {
        let code = map
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64)
            .or_else(|| match map.get("success") {
                Some(Value::Bool(true)) => Some(0),
                Some(Value::Bool(false)) => Some(1),
                _ => None,
            });
        let text = map
            .get("output")
            .or(map.get("content"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        (code, text)
    };
    match output {
        ToolOutput::Object(map) => {
            let (code, text) = from_object(map);
            (code, text.unwrap_or_else(|| output.text().into_owned()))
        }
        other => {
            let text = other.text().into_owned();
            if text.trim_start().starts_with('{')
                && let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text)
                && let (code @ Some(_), inner) = from_object(&map)
            {
                return (code, inner.unwrap_or(text));
            }
            (exit_code_in_text(&text), text)
        }
    }
}

/// An exit code written in the text, such as `Process exited with code 101`.
pub fn exit_code_in_text(text: &str) -> Option<i64> {
    const MARKERS: [&str; 4] = [
        "exited with code ",
        "exit code: ",
        "exit code ",
        "exit status: ",
    ];
    let lower = text.to_ascii_lowercase();
    MARKERS.iter().find_map(|marker| {
        let (_, rest) = lower.split_once(marker)?;
        let number: String = rest
            .chars()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .map(|(_, c)| c)
            .take(12)
            .collect();
        number.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_read_from_every_format() {
        let text = |s: &str| ToolOutput::Text(s.to_owned());
        assert_eq!(
            exit_code_and_text(&text("Process exited with code 101\nboom")).0,
            Some(101)
        );
        assert_eq!(
            exit_code_and_text(&text("Exit code: 0\nWall time: 1s")).0,
            Some(0)
        );
        let json = r#"{"output":"x","metadata":{"exit_code":2,"duration_seconds":0.1}}"#;
        assert_eq!(exit_code_and_text(&text(json)), (Some(2), "x".to_owned()));
        let object: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"content":"done","success":false}"#).unwrap();
        assert_eq!(
            exit_code_and_text(&ToolOutput::Object(object)),
            (Some(1), "done".to_owned())
        );
        assert_eq!(exit_code_and_text(&text("exit code -1")).0, Some(-1));
        assert_eq!(exit_code_and_text(&text("no code here")).0, None);
    }
}
