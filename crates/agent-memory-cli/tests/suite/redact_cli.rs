//! `agent-memory redact` over a real pipe: each line comes out as soon as it is complete, while
//! the input stays open, and a private key with no end does not swallow what follows.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Only a guard against a hang: each line is expected long before it.
const HANG_GUARD: Duration = Duration::from_secs(120);

#[test]
fn each_line_comes_out_before_the_next_is_written() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("redact")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let cases = [
        ("starting the server", "starting the server"),
        (
            "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "GITHUB_TOKEN=[REDACTED_SECRET]",
        ),
        ("-----BEGIN RSA PRIVATE KEY-----", "[REDACTED_SECRET]"),
        (
            "MIIEpAIBAAKCAQEA7bq0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
            "[REDACTED_SECRET]",
        ),
        // No END line: the key ends where a line cannot belong to it.
        (
            "2026-05-01T10:00:09Z INFO listening on :8080",
            "2026-05-01T10:00:09Z INFO listening on :8080",
        ),
        (
            r#"{"cmd":"curl -H \"Authorization: Bearer abcdefghijklmnopqrstuv\" https://api"}"#,
            r#"{"cmd":"curl -H \"Authorization: Bearer [REDACTED_SECRET]\" https://api"}"#,
        ),
        ("done", "done"),
    ];
    for (input, expected) in cases {
        writeln!(stdin, "{input}").unwrap();
        stdin.flush().unwrap();
        let got = received
            .recv_timeout(HANG_GUARD)
            .expect("the line did not come out while the input stayed open");
        assert_eq!(got, expected);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}

/// Random values after a credential name in YAML's colon form are redacted whatever their
/// letters (issue 32: the first four were kept because they looked like camel-case names).
#[test]
fn yaml_colon_values_are_redacted_whatever_their_letters() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("redact")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = "password: JlE9qPdwy7BYbhKJGrUw\n  api_key: RzuqmNjB6NHDhsycm0mQzpSF\ntoken: M2FbPiO3AOriRcyWcAkw\nsecret: NrFt5P4dYaUfUo\npassword: Xk2pLm9QrT4vWz8N\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "password: [REDACTED_SECRET]\n  api_key: [REDACTED_SECRET]\ntoken: [REDACTED_SECRET]\nsecret: [REDACTED_SECRET]\npassword: [REDACTED_SECRET]\n"
    );
}

#[test]
fn files_named_on_the_command_line_are_redacted_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.log");
    let second = dir.path().join("second.log");
    std::fs::write(
        &first,
        "one GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
    )
    .unwrap();
    std::fs::write(&second, "two\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("redact")
        .arg(&first)
        .arg(&second)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "one GITHUB_TOKEN=[REDACTED_SECRET]\ntwo\n"
    );
    let missing = dir.path().join("missing.log");
    let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("redact")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("error: cannot read {}: ", missing.display())),
        "{stderr}"
    );
}
