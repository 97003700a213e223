//! Redacting a stream line by line: multi-line secrets are followed across lines with a bounded
//! reach, and a line of any length is redacted in bounded pieces.

use memory_sanitize::{LineRedactor, redact_bytes, redact_secrets};
use proptest::prelude::*;

fn by_lines(input: &str) -> String {
    let mut redactor = LineRedactor::new();
    let out: Vec<u8> = input
        .split_inclusive('\n')
        .flat_map(|line| redactor.redact_line(line.as_bytes()).into_owned())
        .collect();
    String::from_utf8(out).unwrap()
}

#[test]
fn line_redactor_redacts_a_private_key_spread_over_lines() {
    let input = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd+/==\n-----END RSA PRIVATE KEY----- tail\nafter\n";
    assert_eq!(
        by_lines(input),
        "before\n[REDACTED_SECRET]\n[REDACTED_SECRET]\n[REDACTED_SECRET]\n[REDACTED_SECRET] tail\nafter\n"
    );
    assert_eq!(
        redact_secrets(input),
        "before\n[REDACTED_SECRET] tail\nafter\n"
    );
}

#[test]
fn a_private_key_without_end_does_not_swallow_the_log() {
    let mut input = String::from(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx\n",
    );
    for i in 0..1000 {
        input.push_str(&format!(
            "2026-05-01T10:00:{:02}Z INFO request {i} served in 3 ms\n",
            i % 60
        ));
    }
    for out in [by_lines(&input), redact_secrets(&input).into_owned()] {
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            !out.contains("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
            "{out:.300}"
        );
        assert!(!out.contains("QyNTUxOQAAACDx"));
        // Whole: not even the timestamp (base64-like up to its `:`) is taken for key material.
        let kept = lines
            .iter()
            .filter(|l| l.starts_with("2026-05-01T10:00:") && l.contains("INFO request"))
            .count();
        assert_eq!(
            kept, 1000,
            "every log line after the key must survive whole"
        );
    }
}

#[test]
fn a_cut_off_key_in_a_json_string_ends_with_the_string() {
    let line = r#"{"output":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7","next":"the build passed"}"#;
    let out = redact_secrets(line);
    assert_eq!(
        out,
        r#"{"output":"[REDACTED_SECRET]","next":"the build passed"}"#
    );
}

#[test]
fn streamed_and_whole_text_find_the_same_secrets() {
    let input = concat!(
        "db:\n  password: |\n    line-one-secret\n    line-two-secret\n  user: bob\n",
        "token:\n  abcdefgh12345678\n",
        "PRIVATE_TOKEN=\"first part\nsecond part\" done\n",
        "kind: Secret\ndata:\n  username: YWRtaW4=\n---\n",
        "Private-Lines: 2\nAAAAgQDlongbase64bodyline0123456789\nAAAAgQDsecondbody+/==\nPrivate-MAC: 0a1b2c\n",
    );
    let streamed = by_lines(input);
    let whole = redact_secrets(input);
    for secret in [
        "line-one-secret",
        "line-two-secret",
        "abcdefgh12345678",
        "first part",
        "second part",
        "YWRtaW4=",
        "AAAAgQDlongbase64bodyline0123456789",
        "AAAAgQDsecondbody",
    ] {
        assert!(!streamed.contains(secret), "{secret} in {streamed}");
        assert!(!whole.contains(secret), "{secret} in {whole}");
    }
    assert!(streamed.contains("user: bob") && whole.contains("user: bob"));
    assert!(streamed.contains("\" done") && whole.contains("\" done"));
}

#[test]
fn a_long_line_is_redacted_in_bounded_pieces() {
    // 3 MiB of one JSON line with secrets all along it, fed in pieces of at most 64 KiB.
    let mut line = String::from("{\"output\":\"");
    let mut planted = 0;
    while line.len() < 3 << 20 {
        line.push_str("log entry with nothing in it\\n");
        if line.len() % 7 == 0 {
            line.push_str("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\\n");
            planted += 1;
        }
    }
    line.push_str("\"}\n");
    assert!(planted > 10);
    let mut redactor = LineRedactor::new();
    let mut out = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut largest_pending = 0;
    for piece in line.as_bytes().chunks(64 << 10) {
        pending.extend_from_slice(piece);
        largest_pending = largest_pending.max(pending.len());
        if pending.len() >= 256 << 10 {
            let (consumed, redacted) = redactor.redact_partial(&pending);
            assert!(consumed > 0);
            out.extend_from_slice(&redacted);
            pending.drain(..consumed);
        }
    }
    out.extend_from_slice(&redactor.redact_line(&pending));
    assert!(largest_pending < 512 << 10, "{largest_pending}");
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("ghp_"));
    assert_eq!(
        text.matches("GITHUB_TOKEN=[REDACTED_SECRET]").count(),
        planted
    );
    assert_eq!(
        text.matches("log entry with nothing in it").count(),
        line.matches("log entry with nothing in it").count()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the lines, line-by-line redaction never panics and never lets through a token
    /// that whole-text redaction removes.
    #[test]
    fn line_by_line_never_keeps_a_token_whole_text_removes(
        lines in prop::collection::vec(
            prop_oneof![
                "[a-z =:|\"-]{0,30}",
                Just("password: |".to_owned()),
                Just("  indented-secret-line".to_owned()),
                Just("-----BEGIN RSA PRIVATE KEY-----".to_owned()),
                Just("MIIEpAIBAAKCAQEAabcdefgh".to_owned()),
                Just("token=ghp_abcdefghijklmnopqrstuvwxyz0123456789".to_owned()),
                Just("kind: Secret".to_owned()),
                Just("data:".to_owned()),
                Just("  k: dmFsdWUx".to_owned()),
            ],
            0..12,
        )
    ) {
        let input = lines.join("\n");
        let streamed = by_lines(&input);
        let whole = String::from_utf8(redact_bytes(input.as_bytes()).into_owned()).unwrap();
        for token in ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "MIIEpAIBAAKCAQEAabcdefgh"] {
            if !whole.contains(token) {
                prop_assert!(!streamed.contains(token), "{token} kept in {streamed:?}");
            }
        }
    }
}
