use std::path::PathBuf;

use memory_protocol::{ResponseItem, RolloutItem};
use memory_transcript::{ReaderOptions, RolloutReader, read_rollout, read_rollout_path};
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rollouts")
        .join(name)
}

#[test]
fn every_fixture_reads_without_diagnostics() {
    for name in [
        "codex-legacy-format.jsonl",
        "codex-reference-example.jsonl",
        "codex-version-variants.jsonl",
    ] {
        let read = read_rollout_path(&fixture(name), &ReaderOptions::default()).unwrap();
        assert!(
            read.diagnostics.is_empty(),
            "{name}: {:?}",
            read.diagnostics
        );
        let physical = std::fs::read_to_string(fixture(name))
            .unwrap()
            .lines()
            .count();
        assert_eq!(read.lines.len(), physical, "{name}");
    }
}

#[test]
fn malformed_lines_become_diagnostics_and_reading_goes_on() {
    let good = r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;
    let mut input = Vec::new();
    input.extend_from_slice(good.as_bytes());
    input.extend_from_slice(b"\n{not json\n");
    input.extend_from_slice(b"{\"type\":\"x\",\"payload\":\"\xff\xfe\"}\n");
    input.extend_from_slice(
        format!("{{\"type\":\"x\",\"payload\":\"{}\"}}\n", "a".repeat(200)).as_bytes(),
    );
    input.extend_from_slice(b"[1,2]\n");
    input.extend_from_slice(good.as_bytes());
    input.extend_from_slice(b"\n{\"timestamp\":\"t\",\"type\":\"resp");

    let read = read_rollout(
        input.as_slice(),
        &ReaderOptions {
            max_line_bytes: 150,
        },
    );
    assert_eq!(read.lines.len(), 2);
    let numbers: Vec<u64> = read.diagnostics.iter().map(|d| d.line_number).collect();
    assert_eq!(numbers, [2, 3, 4, 5, 7]);
    let messages: Vec<String> = read.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        messages[0].starts_with("line 2: invalid json"),
        "{messages:?}"
    );
    assert!(messages[1].contains("invalid utf-8"), "{messages:?}");
    assert!(
        messages[2].contains("exceeds the limit of 150 bytes"),
        "{messages:?}"
    );
    assert!(
        messages[3].contains("must be a json object"),
        "{messages:?}"
    );
    assert!(messages[4].contains("truncated last line"), "{messages:?}");
}

#[test]
fn unknown_types_are_kept_as_catch_all_variants() {
    let read = read_rollout_path(
        &fixture("codex-version-variants.jsonl"),
        &ReaderOptions::default(),
    )
    .unwrap();
    let other_lines = read
        .lines
        .iter()
        .filter(|l| matches!(l.item, RolloutItem::Other(_)))
        .count();
    let other_items = read
        .lines
        .iter()
        .filter(|l| matches!(l.item, RolloutItem::ResponseItem(ResponseItem::Other(_))))
        .count();
    assert!(other_lines >= 3, "{other_lines}");
    assert!(other_items >= 4, "{other_items}");
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let err =
        read_rollout_path(&fixture("no-such-file.jsonl"), &ReaderOptions::default()).unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("cannot read `"), "{message}");
    assert!(message.contains("no-such-file.jsonl"), "{message}");
}

/// A reader that fails after some bytes.
struct FailingAfter<'a>(&'a [u8]);

impl std::io::Read for FailingAfter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn io_error_keeps_what_was_read_and_is_reported() {
    let input = b"{\"type\":\"x\",\"payload\":{}}\n{\"type\":\"y\",\"payload\":{}}\n";
    let read = read_rollout(FailingAfter(input), &ReaderOptions::default());
    assert_eq!(read.lines.len(), 2);
    assert_eq!(read.diagnostics.len(), 1);
    assert!(read.diagnostics[0].message.contains("disk on fire"));

    let mut reader = RolloutReader::new(
        std::io::BufReader::new(FailingAfter(input)),
        ReaderOptions::default(),
    );
    assert_eq!(reader.by_ref().filter(Result::is_ok).count(), 2);
    assert!(reader.take_io_error().is_some());
}

proptest! {
    #[test]
    fn reader_never_panics_and_accounts_for_every_line(
        bytes in prop::collection::vec(
            prop_oneof![
                any::<u8>(),
                Just(b'\n'),
                Just(b'{'),
                Just(b'}'),
                Just(b'"'),
            ],
            0..400,
        ),
        limit in 0usize..64,
    ) {
        let read = read_rollout(bytes.as_slice(), &ReaderOptions { max_line_bytes: limit });
        let physical = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        prop_assert!(read.lines.len() + read.diagnostics.len() <= physical);
        for pair in read.diagnostics.windows(2) {
            prop_assert!(pair[0].line_number < pair[1].line_number);
        }
    }

    #[test]
    fn valid_lines_survive_garbage_neighbours(garbage in "[^\n]{0,80}") {
        let good = r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}"#;
        let input = format!("{garbage}\n{good}\n{garbage}\n{good}");
        let read = read_rollout(input.as_bytes(), &ReaderOptions::default());
        prop_assert!(read.lines.len() >= 2);
    }
}
