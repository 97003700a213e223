use std::borrow::Cow;

use memory_protocol::REDACTED_SECRET;
use memory_sanitize::redact::{self, RuleInfo};
use memory_sanitize::{LineRedactor, redact_bytes, redact_json_strings, redact_secrets};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::string::string_regex;
use regex::bytes::RegexBuilder;

fn rule_regex(rule: &RuleInfo) -> regex::bytes::Regex {
    RegexBuilder::new(rule.pattern)
        .unicode(false)
        .build()
        .unwrap()
}

/// The text a rule would replace in `sample`.
fn secret_of(rule: &RuleInfo, sample: &str) -> Option<String> {
    let caps = rule_regex(rule).captures(sample.as_bytes())?;
    let secret = caps.get(rule.secret_group)?;
    Some(String::from_utf8(secret.as_bytes().to_vec()).unwrap())
}

#[test]
fn every_rule_compiles_and_there_are_at_least_forty() {
    assert!(
        redact::rule_errors().is_empty(),
        "{:?}",
        redact::rule_errors()
    );
    assert!(redact::rules().count() >= 40);
}

#[test]
fn every_rule_sample_is_matched_by_its_rule() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for rule in redact::rules() {
        let strategy = string_regex(rule.sample).unwrap();
        for _ in 0..16 {
            let sample = strategy.new_tree(&mut runner).unwrap().current();
            let secret = secret_of(&rule, &sample)
                .unwrap_or_else(|| panic!("{}: sample {sample:?} does not match", rule.id));
            assert!(
                secret.len() >= 8,
                "{}: secret {secret:?} too short",
                rule.id
            );
        }
    }
}

#[test]
fn docs_list_every_rule() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/secrets.md"
    ))
    .unwrap();
    for rule in redact::rules() {
        assert!(
            docs.contains(&format!("`{}`", rule.id)),
            "docs/secrets.md misses {}",
            rule.id
        );
    }
}

fn surrounding() -> impl Strategy<Value = String> {
    prop_oneof!["\\PC{0,40}", "[a-z =:\"'{}\n]{0,40}", Just(String::new()),]
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![" ", "\n", "\t", " \"", "\" ", ", ", "\\n"])
}

fn planted() -> impl Strategy<Value = (RuleInfo, String, String, String, &'static str, &'static str)>
{
    let rules: Vec<RuleInfo> = redact::rules().collect();
    prop::sample::select(rules).prop_flat_map(|rule| {
        (
            Just(rule),
            string_regex(rule.sample).unwrap(),
            surrounding(),
            surrounding(),
            separator(),
            separator(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn a_planted_secret_of_every_kind_is_removed(
        (rule, sample, before, after, sep_before, sep_after) in planted()
    ) {
        let secret = secret_of(&rule, &sample).unwrap();
        let text = format!("{before}{sep_before}{sample}{sep_after}{after}");
        let out = redact_secrets(&text);
        prop_assert!(!out.contains(&secret), "{}: {secret:?} survived in {out:?}", rule.id);
        prop_assert!(out.contains(REDACTED_SECRET));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn redaction_is_idempotent(
        parts in prop::collection::vec(
            prop_oneof![
                "\\PC{0,12}",
                "[A-Za-z0-9_=:\"' .\\\\/-]{0,20}",
                prop::sample::select(vec![
                    "password", "token", "api_key", "Bearer ", "Authorization: ", "sk-",
                    "ghp_", "://", "@", ":", "=", "\"", "\\\"", "[REDACTED_SECRET]",
                    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
                    "eyJ", ".", "--token ", ";Password=", "AKIA",
                ]).prop_map(str::to_owned),
            ],
            0..16,
        )
    ) {
        let text = parts.concat();
        let once = redact_secrets(&text);
        let twice = redact_secrets(&once);
        prop_assert_eq!(&once, &twice);
    }

    #[test]
    fn secrets_planted_anywhere_are_idempotently_removed(
        (rule, sample, before, after, sep_before, sep_after) in planted()
    ) {
        let text = format!("{before}{sep_before}{sample}{sep_after}{after}");
        let once = redact_secrets(&text);
        prop_assert_eq!(redact_secrets(&once), once.clone(), "{}", rule.id);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = redact_bytes(&bytes);
    }
}

#[test]
fn secret_kinds_from_the_issue_are_redacted() {
    let cases = [
        (
            "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
            "key [REDACTED_SECRET]",
        ),
        (
            "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "GITHUB_TOKEN=[REDACTED_SECRET]",
        ),
        (
            "curl -H 'Authorization: Bearer abcdef0123456789abcdef'",
            "curl -H 'Authorization: Bearer [REDACTED_SECRET]'",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "Authorization: Basic [REDACTED_SECRET]",
        ),
        (
            "X-API-Key: live4f9a8b7c6d5e4f3a",
            "X-API-Key: [REDACTED_SECRET]",
        ),
        (
            "postgres://app:s3cr3t-pass@db:5432/app",
            "postgres://app:[REDACTED_SECRET]@db:5432/app",
        ),
        (
            "mysql --password=hunter22 -u root",
            "mysql --password=[REDACTED_SECRET] -u root",
        ),
        (
            "gh auth login --token ab12cd34ef56",
            "gh auth login --token [REDACTED_SECRET]",
        ),
        (
            "export API_KEY=abcd1234efgh5678",
            "export API_KEY=[REDACTED_SECRET]",
        ),
        ("db_password: Xy7#kq9Lm2", "db_password: [REDACTED_SECRET]"),
        (
            "secret_key = 'django-insecure-abc123'",
            "secret_key = '[REDACTED_SECRET]'",
        ),
        (
            r#"{"token":"abcdefghijkl"}"#,
            r#"{"token":"[REDACTED_SECRET]"}"#,
        ),
        (
            r#"{\"client_secret\": \"A1b2C3d4E5f6\"}"#,
            r#"{\"client_secret\": \"[REDACTED_SECRET]\"}"#,
        ),
        (
            "access_token=ya29.a0AfH6SMBx1234567890abcdefghij",
            "access_token=[REDACTED_SECRET]",
        ),
        ("AKIAIOSFODNN7EXAMPLE", "[REDACTED_SECRET]"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED_SECRET]",
        ),
        (
            "Server=db;User Id=app;Password=Pa55word!;",
            "Server=db;User Id=app;Password=[REDACTED_SECRET];",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(redact_secrets(input), expected, "input: {input}");
    }
}

#[test]
fn json_escaped_private_key_inside_a_rollout_line_is_redacted_whole() {
    let line = r#"{"output":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAB\n-----END OPENSSH PRIVATE KEY-----\nok"}"#;
    assert_eq!(
        redact_secrets(line),
        r#"{"output":"[REDACTED_SECRET]\nok"}"#
    );
}

#[test]
fn ordinary_text_is_untouched() {
    let clean = [
        "let token = lexer.next_token();",
        "let password = prompt_password()?;",
        "token: Token,",
        "fn api_key(&self) -> &str { &self.api_key }",
        "if token == expected_token { return; }",
        "self.secret = secret;",
        "let token = self.tokens.next().unwrap();",
        "max_tokens: 4096, input_tokens = 1234567890",
        "password: String,",
        "const TOKEN_LIMIT: usize = 100;",
        "export GITHUB_TOKEN=$(cat ~/.token)",
        "API_KEY=${API_KEY}",
        "--token <TOKEN>",
        "session 0196a1b2-0000-7000-8000-000000000001 at commit 3f2c9a1e5b7d9f0a1c3e5b7d9f0a1c3e5b7d9f0a",
        "/home/alice/.ssh/id_rsa and /usr/lib/x86_64-linux-gnu/libssl.so.3",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "Bearer of good news",
        "see https://example.com:8080/path?x=1 and git@github.com:owner/repo.git",
        "the task-management system and risk-assessment framework",
        "The tokenizer splits text into tokens; secrets are redacted.",
        "token = os.environ[\"TOKEN\"]",
        "password = getpass.getpass()",
    ];
    for text in clean {
        assert!(
            matches!(redact_secrets(text), Cow::Borrowed(_)),
            "changed: {text} -> {}",
            redact_secrets(text)
        );
    }
}

#[test]
fn json_members_named_like_secrets_are_redacted() {
    let mut value = serde_json::json!({
        "password": "hunter2",
        "max_tokens": 100,
        "token_count": "12345678",
        "nested": [{"GITHUB_TOKEN": "anything-goes"}, "note sk-abcdefghijklmnopqrstuvwx"],
        "env_ref": {"api_key": "$API_KEY"},
    });
    redact_json_strings(&mut value);
    assert_eq!(
        value,
        serde_json::json!({
            "password": REDACTED_SECRET,
            "max_tokens": 100,
            "token_count": "12345678",
            "nested": [{"GITHUB_TOKEN": REDACTED_SECRET}, "note [REDACTED_SECRET]"],
            "env_ref": {"api_key": "$API_KEY"},
        })
    );
    assert!(redact::is_secret_key_name("client-secret"));
    assert!(!redact::is_secret_key_name("tokenizer"));
}

#[test]
fn line_redactor_redacts_a_private_key_spread_over_lines() {
    let input = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd+/==\n-----END RSA PRIVATE KEY----- tail\nafter\n";
    let mut redactor = LineRedactor::new();
    let out: Vec<u8> = input
        .split_inclusive('\n')
        .flat_map(|line| redactor.redact_line(line.as_bytes()).into_owned())
        .collect();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "before\n[REDACTED_SECRET]\n[REDACTED_SECRET]\n[REDACTED_SECRET]\n[REDACTED_SECRET] tail\nafter\n"
    );
}

#[test]
fn invalid_utf8_is_redacted_as_bytes() {
    let input = b"\xff\xfe token=ab12cd34ef56gh \xc3";
    assert_eq!(
        &*redact_bytes(input),
        b"\xff\xfe token=[REDACTED_SECRET] \xc3"
    );
}
