//! File tracking: reading tool calls, merging with the previous lists, bounding, and the block.

use memory_compaction::compaction::{
    FILE_LIST_LIMIT, files_block, merge_details, scan_messages, strip_files_blocks,
};
use memory_protocol::compaction::CompactionDetails;
use memory_transcript::file_ops::FileOps;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::support::call;

fn ops(calls: &[(&str, Value)]) -> FileOps {
    let messages: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| call(&format!("c{i}"), name, args.clone()))
        .collect();
    let mut ops = FileOps::default();
    scan_messages(&mut ops, &messages);
    ops
}

#[test]
fn file_tools_patches_and_plain_shell_commands_are_tracked() {
    let ops = ops(&[
        ("read", json!({"path": "src/lib.rs"})),
        ("read_file", json!({"file_path": "src/main.rs"})),
        ("write", json!({"path": "notes.md", "content": "x"})),
        (
            "edit",
            json!({"path": "src/lib.rs", "old": "a", "new": "b"}),
        ),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: tests/a.rs\n+x\n*** Update File: src/p.rs\n*** End Patch"}),
        ),
        (
            "exec_command",
            json!({"cmd": "sed -n '1,80p' src/table.rs && cat Cargo.toml | head"}),
        ),
        (
            "exec_command",
            json!({"cmd": "sed -i 's/a/b/' src/fmt.rs; echo done > out/log.txt"}),
        ),
        (
            "shell",
            json!({"command": ["bash", "-lc", "head -n 20 README.md"]}),
        ),
        ("local_shell", json!({"command": ["touch", "new.txt"]})),
        (
            "exec_command",
            json!({"cmd": "mv old.rs new_name.rs 2>/dev/null"}),
        ),
        ("read", json!({"path": "https://example.com/doc.md"})),
        ("exec_command", json!({"cmd": "cat $HOME/x src/*.rs -"})),
    ]);
    let mut modified = ops.modified();
    modified.sort();
    assert_eq!(
        modified,
        [
            "new.txt",
            "new_name.rs",
            "notes.md",
            "old.rs",
            "out/log.txt",
            "src/fmt.rs",
            "src/lib.rs",
            "src/p.rs",
            "tests/a.rs"
        ]
    );
    let mut read = ops.read();
    read.sort();
    assert_eq!(
        read,
        ["Cargo.toml", "README.md", "src/main.rs", "src/table.rs"]
    );
}

#[test]
fn lists_merge_with_the_previous_ones_and_stay_bounded() {
    let previous = CompactionDetails {
        read_files: vec!["docs/a.md".to_owned(), "src/shared.rs".to_owned()],
        modified_files: vec!["src/old.rs".to_owned()],
        elided_files: 4,
    };
    let now = ops(&[
        ("read", json!({"path": "src/new.rs"})),
        ("edit", json!({"path": "src/shared.rs"})),
    ]);
    let details = merge_details(&now, Some(&previous));
    assert_eq!(details.modified_files, ["src/old.rs", "src/shared.rs"]);
    assert_eq!(details.read_files, ["docs/a.md", "src/new.rs"]);
    assert_eq!(details.elided_files, 4);

    let calls: Vec<(String, Value)> = (0..30)
        .map(|i| {
            (
                "edit".to_owned(),
                json!({"path": format!("src/f{i:02}.rs")}),
            )
        })
        .collect();
    let many = ops(&calls
        .iter()
        .map(|(n, a)| (n.as_str(), a.clone()))
        .collect::<Vec<_>>());
    let bounded = merge_details(&many, Some(&previous));
    assert_eq!(
        bounded.read_files.len() + bounded.modified_files.len(),
        FILE_LIST_LIMIT
    );
    // The newest files are listed; the rest are counted.
    assert!(bounded.modified_files.contains(&"src/f29.rs".to_owned()));
    assert!(!bounded.modified_files.contains(&"src/f00.rs".to_owned()));
    assert_eq!(bounded.elided_files, 4 + 30 + 3 - 20);
}

#[test]
fn the_block_lists_modified_then_read_then_the_elided_count() {
    let details = CompactionDetails {
        read_files: vec!["src/lib.rs".to_owned()],
        modified_files: vec!["README.md".to_owned(), "src/a.rs".to_owned()],
        elided_files: 3,
    };
    assert_eq!(
        files_block(&details),
        "<files>\nmodified:\n- README.md\n- src/a.rs\nread:\n- src/lib.rs\n(3 more files not listed)\n</files>"
    );
    assert_eq!(files_block(&CompactionDetails::default()), "");
}

/// Twenty files of one folder would repeat its path twenty times in every summary.
#[test]
fn files_of_one_folder_are_one_line_and_the_block_is_still_stripped() {
    let details = CompactionDetails {
        read_files: vec!["docs/a b.md".to_owned()],
        modified_files: vec![
            "a.rs".to_owned(),
            "b.rs".to_owned(),
            "src/billing/part4/module0.rs".to_owned(),
            "src/billing/part4/module1.rs".to_owned(),
            "src/billing/retry.rs".to_owned(),
            "C:\\work\\x.rs".to_owned(),
            "C:\\work\\y.rs".to_owned(),
        ],
        elided_files: 0,
    };
    let block = files_block(&details);
    assert_eq!(
        block,
        "<files>\nmodified:\n- a.rs\n- b.rs\n- src/billing/part4/: module0.rs, module1.rs\n\
         - src/billing/retry.rs\n- C:\\work\\: x.rs, y.rs\nread:\n- docs/a b.md\n</files>"
    );
    assert_eq!(
        strip_files_blocks(&format!("## Goal\nship\n\n{block}")),
        "## Goal\nship"
    );
}

/// oh-my-pi's file-tracking cases, run against our tracking: read selectors made one file
/// count as three, and a file read with a selector then written stayed in both lists.
#[test]
fn read_selectors_are_stripped_so_a_file_is_listed_once() {
    let ops = ops(&[
        ("read", json!({"path": "docs/a.md:100-170"})),
        ("read", json!({"path": "docs/a.md:raw"})),
        ("read", json!({"path": "docs/a.md"})),
        ("read", json!({"path": "src/b.ts#L10"})),
        ("read", json!({"path": "src/c.ts:1-50:raw"})),
        ("read", json!({"path": "src/d.ts:L10+5"})),
        ("read", json!({"path": "src/e.ts:40-200"})),
        ("edit", json!({"path": "src/e.ts"})),
    ]);
    let details = merge_details(&ops, None);
    assert_eq!(
        details.read_files,
        ["docs/a.md", "src/b.ts", "src/c.ts", "src/d.ts"]
    );
    assert_eq!(details.modified_files, ["src/e.ts"]);
}

/// `scheme://` anywhere in a path is not a file, whether seen now or carried in a previous
/// compaction's lists (which are checked again).
#[test]
fn url_like_entries_are_dropped_now_and_from_previous_lists() {
    let ops = ops(&[
        ("read", json!({"path": "src/x.ts:conflict://3"})),
        ("read", json!({"path": "https://example.com/guide.md"})),
        ("write", json!({"path": "artifact://7"})),
        ("read", json!({"path": "src/y.ts"})),
    ]);
    let previous = CompactionDetails {
        read_files: vec![
            "src/x.ts:conflict://3".to_owned(),
            "local://notes".to_owned(),
            "docs/a.md:10-20".to_owned(),
        ],
        modified_files: vec!["https://example.com/x".to_owned(), "src/z.ts".to_owned()],
        elided_files: 0,
    };
    let details = merge_details(&ops, Some(&previous));
    assert_eq!(details.read_files, ["docs/a.md", "src/y.ts"]);
    assert_eq!(details.modified_files, ["src/z.ts"]);
}

#[test]
fn windows_paths_and_paths_with_spaces_are_tracked() {
    let ops = ops(&[
        ("read", json!({"path": "C:\\work\\app\\src\\main.rs"})),
        ("write", json!({"path": "docs/release notes.md"})),
        ("read", json!({"path": "C:\\work\\app\\README.md:1-20"})),
    ]);
    let details = merge_details(&ops, None);
    assert_eq!(
        details.read_files,
        ["C:\\work\\app\\README.md", "C:\\work\\app\\src\\main.rs"]
    );
    assert_eq!(details.modified_files, ["docs/release notes.md"]);
    assert!(files_block(&details).contains("- docs/release notes.md\n"));
}

#[test]
fn the_lists_stay_bounded_with_a_count_of_what_was_elided() {
    let calls: Vec<(&str, Value)> = (0..30)
        .map(|i| ("read", json!({ "path": format!("src/m{i}.rs:1-10") })))
        .collect();
    let details = merge_details(&ops(&calls), None);
    assert_eq!(details.read_files.len(), FILE_LIST_LIMIT);
    assert_eq!(details.elided_files, 10);
    assert!(files_block(&details).contains("(10 more files not listed)"));
}

#[test]
fn only_the_blocks_we_write_are_stripped() {
    let ours = files_block(&CompactionDetails {
        read_files: vec!["src/lib.rs".to_owned()],
        modified_files: vec!["src/a.rs".to_owned()],
        elided_files: 2,
    });
    let text = format!(
        "## Goal\nship\n\n{ours}\n\nmore\n<read-files>\nb.rs\n</read-files>\ntail\n\n{ours}"
    );
    assert_eq!(strip_files_blocks(&text), "## Goal\nship\n\n\nmore\ntail");
    assert_eq!(strip_files_blocks("no block"), "no block");
}

/// The case: a literal `<files>` in a message (a `.nuspec` edit) cut the summary at
/// that point, because an unclosed `<files>` was stripped to the end.
#[test]
fn a_literal_files_tag_in_text_does_not_cut_the_summary() {
    let text = "## Progress\n- added a <files> element to pkg.nuspec\n- ran `nuget pack`\n\n## Next Steps\n- publish";
    assert_eq!(strip_files_blocks(text), text);
    let manifest = "## Critical Context\n<files>\n  <file src=\"bin/**\" target=\"lib\" />\n</files>\n- keep this";
    assert_eq!(strip_files_blocks(manifest), manifest);
    let unclosed = "## Goal\n<files>\n- a.rs\n## Done\n- shipped";
    assert_eq!(strip_files_blocks(unclosed), unclosed);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn stripping_is_idempotent_and_removes_an_appended_block(
        parts in proptest::collection::vec(
            prop_oneof![
                "\\PC{0,20}",
                Just("<files>".to_owned()),
                Just("</files>".to_owned()),
                Just("- a.rs".to_owned()),
                Just("read:".to_owned()),
                Just("\n".to_owned()),
            ],
            0..12,
        ),
        paths in proptest::collection::vec("[a-z/ .:]{1,12}", 0..4),
    ) {
        let text = parts.concat();
        let once = strip_files_blocks(&text);
        prop_assert_eq!(&strip_files_blocks(&once), &once);
        let block = files_block(&CompactionDetails {
            read_files: Vec::new(),
            modified_files: paths.iter().filter(|p| !p.trim().is_empty()).cloned().collect(),
            elided_files: 1,
        });
        let with_block = format!("{text}\n\n{block}");
        prop_assert_eq!(strip_files_blocks(&with_block), once);
    }

    #[test]
    fn shell_commands_of_any_shape_never_panic_and_yield_plausible_paths(
        script in "\\PC{0,200}",
    ) {
        let ops = ops(&[("exec_command", json!({ "cmd": script }))]);
        for path in ops.read().into_iter().chain(ops.modified()) {
            prop_assert!(!path.is_empty() && !path.contains(char::is_whitespace), "{:?}", path);
            prop_assert!(!path.starts_with('-'));
        }
    }
}
