//! `agent-memory status`, `search`, `list`, `read`, `note` and `block`: the memory tools from a
//! shell, their exit codes (0, 1 for errors, 3 for disabled or unavailable memory), and
//! `show --injection` printing exactly what `block` prints.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use super::mcp_cli::harness::listed_paths;

const HANDBOOK: &str = "# Handbook\n\n## Build\n\nThe project builds with `cargo xtask dist`.\n\n\
                        ## Tests\n\nRun the suite with cargo nextest; the flaky one is `sync_retry`.\n";

const SUMMARY: &str =
    "v1\n- The user works on a Rust workspace and prefers short commit messages.\n";

/// A home whose memory root holds a summary and a handbook.
fn home_with_memory() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("memories");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("MEMORY.md"), HANDBOOK).unwrap();
    std::fs::write(root.join("memory_summary.md"), SUMMARY).unwrap();
    home
}

fn agent_memory(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(args)
        .arg("--home")
        .arg(home)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The JSON on stdout of a command that exited with `code`.
fn json_exit(output: &Output, code: i32) -> Value {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        stdout(output),
        stderr(output)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn a_note_is_found_by_search_read_list_status_and_the_block_at_once() {
    let home = home_with_memory();
    let note = json_exit(
        &agent_memory(
            home.path(),
            &[
                "note",
                "The staging database is called hornbeam.",
                "--topic",
                "staging",
                "--json",
            ],
        ),
        0,
    );
    let path = note["path"].as_str().unwrap().to_owned();
    assert!(
        path.starts_with("notes/") && path.ends_with(".md"),
        "{note}"
    );
    assert_eq!(note["notes_today"], 1);

    let search = json_exit(
        &agent_memory(home.path(), &["search", "hornbeam", "--json"]),
        0,
    );
    let hits = search["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{search}");
    assert_eq!(hits[0]["path"], path.as_str());
    assert!(hits[0]["snippet"].as_str().unwrap().contains("hornbeam"));

    let read = json_exit(&agent_memory(home.path(), &["read", &path, "--json"]), 0);
    assert!(
        read["content"]
            .as_str()
            .unwrap()
            .contains("The staging database is called hornbeam.")
    );

    let list = json_exit(&agent_memory(home.path(), &["list", "notes", "--json"]), 0);
    assert_eq!(listed_paths(&list), [path.as_str()]);

    let status = json_exit(&agent_memory(home.path(), &["status", "--json"]), 0);
    assert_eq!(status["state"], "ready");
    assert_eq!(status["notes"]["pending"], 1);
    assert_eq!(status["index"]["state"], "fresh");

    let block = agent_memory(home.path(), &["block"]);
    assert!(block.status.success(), "{}", stderr(&block));
    assert!(stdout(&block).contains("The staging database is called hornbeam."));
}

#[test]
fn show_injection_prints_exactly_what_block_prints() {
    let home = home_with_memory();
    // The block names the minute its numbers were taken: bracketing `show` between two `block`
    // runs makes the comparison exact even across a minute boundary.
    let before = agent_memory(home.path(), &["block"]);
    let show = agent_memory(home.path(), &["show", "--injection"]);
    let after = agent_memory(home.path(), &["block"]);
    for output in [&before, &show, &after] {
        assert!(output.status.success(), "{}", stderr(output));
    }
    let show = stdout(&show);
    assert!(show.contains("<memory source=\"agent-memory\">"), "{show}");
    assert!(show.contains("prefers short commit messages"), "{show}");
    assert!(show == stdout(&before) || show == stdout(&after), "{show}");
}

#[test]
fn block_json_adds_state_placement_and_tokens_and_names_the_status_root() {
    let home = home_with_memory();
    let block = json_exit(&agent_memory(home.path(), &["block", "--json"]), 0);
    assert_eq!(block["state"], "ready");
    assert_eq!(block["placement"], "system");
    let tokens = block["tokens"].as_u64().unwrap();
    assert!(tokens > 0 && tokens < 2_000, "{tokens}");

    let plain = agent_memory(home.path(), &["block"]);
    let text = block["text"].as_str().unwrap();
    // Issue 29: the block shows memory's last write, not the clock, so two runs give the same
    // text and the same content hash.
    assert_eq!(text, stdout(&plain));
    let again = json_exit(&agent_memory(home.path(), &["block", "--json"]), 0);
    let hash = block["content_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert_eq!(again["content_hash"], hash);

    let status = json_exit(&agent_memory(home.path(), &["status", "--json"]), 0);
    let root = std::path::absolute(home.path().join("memories")).unwrap();
    assert_eq!(status["root"], root.to_str().unwrap());
    assert!(
        text.contains(&format!("Root: {}", root.display())),
        "the block and status name the same root: {text}"
    );
}

#[test]
fn read_takes_a_line_range_or_a_heading() {
    let home = home_with_memory();
    let lines = agent_memory(home.path(), &["read", "MEMORY.md", "--lines", "3:5"]);
    assert!(lines.status.success(), "{}", stderr(&lines));
    assert_eq!(
        stdout(&lines),
        "## Build\n\nThe project builds with `cargo xtask dist`.\n"
    );

    let section = json_exit(
        &agent_memory(
            home.path(),
            &["read", "MEMORY.md", "--heading", "Tests", "--json"],
        ),
        0,
    );
    let content = section["content"].as_str().unwrap();
    assert!(content.contains("sync_retry"), "{content}");
    assert!(!content.contains("xtask dist"), "{content}");

    let both = agent_memory(
        home.path(),
        &["read", "MEMORY.md", "--lines", "1:2", "--heading", "Tests"],
    );
    assert_eq!(both.status.code(), Some(2), "a bad command line is exit 2");
    let bad = agent_memory(home.path(), &["read", "MEMORY.md", "--lines", "x:2"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("`x` is not a line number"));
}

#[test]
fn a_heading_that_matches_several_sections_says_which_one_it_read() {
    let home = home_with_memory();
    std::fs::write(
        home.path().join("memories/projects.md"),
        "# Projects\n## `/a`\n### Tests\n- nextest\n## `/b`\n### tests\n- cargo test\n",
    )
    .unwrap();
    let read = json_exit(
        &agent_memory(
            home.path(),
            &["read", "projects.md", "--heading", "TESTS", "--json"],
        ),
        0,
    );
    assert_eq!(read["content"], "### Tests\n- nextest", "{read}");
    assert_eq!(
        read["other_sections"],
        serde_json::json!([{"start_line": 6, "end_line": 7}]),
        "{read}"
    );

    let text = agent_memory(home.path(), &["read", "projects.md", "--heading", "tests"]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert_eq!(stdout(&text), "### Tests\n- nextest\n");
    assert!(
        stderr(&text).contains(
            "heading `tests` matches 2 sections; this is the first, at line 3; the others: \
             --lines 6:7"
        ),
        "{}",
        stderr(&text)
    );
    let other = agent_memory(home.path(), &["read", "projects.md", "--lines", "6:7"]);
    assert_eq!(stdout(&other), "### tests\n- cargo test\n");

    let unique = json_exit(
        &agent_memory(
            home.path(),
            &["read", "MEMORY.md", "--heading", "Tests", "--json"],
        ),
        0,
    );
    assert_eq!(unique["other_sections"], serde_json::json!([]), "{unique}");
    let unique = agent_memory(home.path(), &["read", "MEMORY.md", "--heading", "Tests"]);
    assert!(stderr(&unique).is_empty(), "{}", stderr(&unique));
}

#[test]
fn errors_exit_1_and_are_never_empty_results() {
    let home = home_with_memory();
    for (args, message) in [
        (&["read", "../config.toml"][..], "`..` is refused"),
        (&["read", "/etc/passwd"][..], "refused"),
        (&["read", "nothing_here.md"][..], "does not exist"),
        (&["list", "nothing_here"][..], "does not exist"),
        (&["search", "   "][..], ""),
    ] {
        let output = agent_memory(home.path(), args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}");
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let failure = json_exit(
        &agent_memory(home.path(), &["read", "../config.toml", "--json"]),
        1,
    );
    assert_eq!(failure["error"]["code"], "path_refused");
    assert!(
        failure["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`..` is refused")
    );
}

#[test]
fn disabled_memory_exits_3_everywhere_and_injects_nothing() {
    let home = home_with_memory();
    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nuse_memories = false\n",
    )
    .unwrap();
    let status = json_exit(&agent_memory(home.path(), &["status", "--json"]), 3);
    assert_eq!(status["state"], "disabled");

    let block = agent_memory(home.path(), &["block"]);
    assert_eq!(block.status.code(), Some(3));
    assert_eq!(stdout(&block), "", "disabled injects nothing by default");

    for args in [
        &["search", "nextest", "--json"][..],
        &["read", "MEMORY.md", "--json"][..],
        &["list", "--json"][..],
        &["note", "remember this", "--json"][..],
    ] {
        let failure = json_exit(&agent_memory(home.path(), args), 3);
        assert_eq!(failure["error"]["code"], "disabled", "{args:?}: {failure}");
        assert!(
            failure["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Tell the user"),
            "{failure}"
        );
    }
    assert!(
        !home.path().join("memories/notes").exists(),
        "no note is written while memory is off"
    );
}

#[test]
fn an_unreadable_summary_is_unavailable_never_empty() {
    let home = home_with_memory();
    std::fs::write(
        home.path().join("memories/memory_summary.md"),
        b"v1\n\xff\xfe not text\n",
    )
    .unwrap();
    let status = json_exit(&agent_memory(home.path(), &["status", "--json"]), 3);
    assert_eq!(status["state"], "unavailable");
    assert!(
        status["problem"]
            .as_str()
            .unwrap()
            .contains("memory_summary.md: not valid UTF-8"),
        "{status}"
    );

    let block = json_exit(&agent_memory(home.path(), &["block", "--json"]), 3);
    assert_eq!(block["state"], "unavailable");
    let text = block["text"].as_str().unwrap();
    assert!(text.contains("[memory: unavailable]"), "{text}");
    assert!(
        text.contains("Do not conclude the user never said"),
        "{text}"
    );
    assert!(!text.contains("empty"), "{text}");

    let search = json_exit(
        &agent_memory(home.path(), &["search", "nextest", "--json"]),
        3,
    );
    assert_eq!(search["error"]["code"], "unavailable", "{search}");
    assert!(
        search.get("hits").is_none(),
        "a failure, not an empty result"
    );
}

/// A mistyped `--home` is memory that cannot be read (exit 3), never an empty memory (exit 0),
/// and nothing is created there.
#[test]
fn a_home_that_does_not_exist_exits_3_and_is_never_empty() {
    let parent = tempfile::tempdir().unwrap();
    let missing = parent.path().join("hmoe");
    let named = format!("the home {} does not exist", missing.display());
    let status = agent_memory(&missing, &["status"]);
    assert_eq!(status.status.code(), Some(3));
    assert!(
        stdout(&status).contains("state: unavailable"),
        "{}",
        stdout(&status)
    );
    assert!(stdout(&status).contains(&named), "{}", stdout(&status));
    for args in [
        &["status", "--json"][..],
        &["search", "cargo", "--json"][..],
        &["list", "--json"][..],
        &["read", "MEMORY.md", "--json"][..],
    ] {
        let value = json_exit(&agent_memory(&missing, args), 3);
        assert!(value.to_string().contains(&named), "{args:?}: {value}");
        assert_ne!(value["state"], "empty", "{args:?}: {value}");
    }
    let search = agent_memory(&missing, &["search", "cargo"]);
    assert_eq!(search.status.code(), Some(3));
    assert!(stdout(&search).is_empty(), "{}", stdout(&search));
    assert!(!missing.exists(), "nothing is created at a mistyped home");
}

#[test]
fn search_takes_several_words_without_quotes() {
    let home = home_with_memory();
    let unquoted = json_exit(
        &agent_memory(home.path(), &["search", "cargo", "nextest", "--json"]),
        0,
    );
    let quoted = json_exit(
        &agent_memory(home.path(), &["search", "cargo nextest", "--json"]),
        0,
    );
    assert_eq!(unquoted["hits"], quoted["hits"]);
    let all_terms = unquoted["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|hit| hit["all_terms"] == true)
        .count();
    assert_eq!(all_terms, 1, "{unquoted}");
    assert_eq!(unquoted["hits"][0]["all_terms"], true, "{unquoted}");
    assert!(
        unquoted["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("nextest")
    );
}

#[test]
fn an_empty_search_says_whether_the_index_is_fresh() {
    let home = home_with_memory();
    let output = agent_memory(home.path(), &["search", "zebra"]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "no matches (memory: ready, index: fresh)\n"
    );
}

#[test]
fn errors_name_the_cli_commands_and_ranges_in_words() {
    let home = home_with_memory();
    std::fs::create_dir_all(home.path().join("memories/notes")).unwrap();
    for (args, expected) in [
        (
            &["read", "nope.md"][..],
            "`agent-memory list` shows what exists",
        ),
        (&["read", "notes"][..], "list it with `agent-memory list`"),
        (
            &["list", "MEMORY.md"][..],
            "read it with `agent-memory read`",
        ),
    ] {
        let output = agent_memory(home.path(), args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let text = stderr(&output);
        assert!(text.contains(expected), "{args:?}: {text}");
        assert!(!text.contains("memory_"), "{args:?} names a tool: {text}");
        let failure = json_exit(&agent_memory(home.path(), &[args, &["--json"]].concat()), 1);
        let shown = failure.to_string();
        assert!(!shown.contains("memory_"), "{args:?} names a tool: {shown}");
    }
    let zero = agent_memory(home.path(), &["search", "cargo", "--max-results", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        stderr(&zero).contains("give a whole number from 1 to 50"),
        "{}",
        stderr(&zero)
    );
    let deep = agent_memory(home.path(), &["list", "--depth", "7"]);
    assert_eq!(deep.status.code(), Some(2));
    assert!(
        stderr(&deep).contains("give a whole number from 1 to 6"),
        "{}",
        stderr(&deep)
    );
    assert!(!stderr(&deep).contains("..="), "{}", stderr(&deep));
}

/// Issue 29 (codex #17496): `block --cwd DIR` holds the global profile and the memories of
/// the project DIR is in; another project's rule is left out of it and found by search.
#[test]
fn block_for_a_working_directory_leaves_other_projects_to_search() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("memories");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("memory_summary.md"),
        "v1\n## User Profile\nWorks on alpha and beta.\n\n## User preferences\n\
         - Squash before merging.\n- Tag releases by hand. (alpha)\n\n## What's in Memory\n\
         ### alpha (`/work/alpha`)\n- Release tooling (success)\n\n### beta (`/work/beta`)\n\
         - Flaky timer test (success)\n",
    )
    .unwrap();
    let beta = agent_memory(home.path(), &["block", "--cwd", "/work/beta/src"]);
    let text = stdout(&beta);
    assert!(beta.status.success(), "{}", stderr(&beta));
    assert!(text.contains("Squash before merging."), "{text}");
    assert!(text.contains("Flaky timer test"), "{text}");
    assert!(!text.contains("Tag releases by hand"), "{text}");
    assert!(!text.contains("Release tooling"), "{text}");
    assert!(
        text.contains("lines about 1 other project(s) left out"),
        "{text}"
    );
    let found = agent_memory(home.path(), &["search", "tag", "releases"]);
    assert!(
        stdout(&found).contains("Tag releases by hand. (alpha)"),
        "{}",
        stdout(&found)
    );
    let whole = stdout(&agent_memory(home.path(), &["block"]));
    assert!(whole.contains("Tag releases by hand"), "{whole}");
}

/// Issue 29 (basic-memory #625): `note --replace` and `--delete` need the version `read`
/// showed; an older one is refused and the note is left as it is.
#[test]
fn a_note_is_replaced_or_deleted_only_with_the_version_read() {
    let home = tempfile::tempdir().unwrap();
    let saved = json_exit(
        &agent_memory(
            home.path(),
            &["note", "Deploys go out on Tuesdays", "--json"],
        ),
        0,
    );
    let path = saved["path"].as_str().unwrap().to_owned();
    let read = json_exit(&agent_memory(home.path(), &["read", &path, "--json"]), 0);
    let version = read["version"].as_str().unwrap().to_owned();
    let replaced = agent_memory(
        home.path(),
        &[
            "note",
            "--replace",
            &path,
            "--version",
            &version,
            "Deploys go out on Fridays",
        ],
    );
    assert!(stdout(&replaced).starts_with(&format!("replaced {path} (now version ")));
    let stale = agent_memory(
        home.path(),
        &["note", "--delete", &path, "--version", &version],
    );
    assert_eq!(stale.status.code(), Some(1), "{}", stderr(&stale));
    assert!(
        stderr(&stale).contains("changed since version"),
        "{}",
        stderr(&stale)
    );
    let text = std::fs::read_to_string(home.path().join("memories").join(&path)).unwrap();
    assert!(text.contains("Fridays"), "{text}");
    let read = json_exit(&agent_memory(home.path(), &["read", &path, "--json"]), 0);
    let deleted = agent_memory(
        home.path(),
        &[
            "note",
            "--delete",
            &path,
            "--version",
            read["version"].as_str().unwrap(),
        ],
    );
    assert_eq!(stdout(&deleted), format!("deleted {path}\n"));
    assert!(!home.path().join("memories").join(&path).exists());
}

/// A config.toml that is not TOML is each memory command's error, said once: not also a
/// warning about syncing with a shared store, which the command never reaches.
#[test]
fn a_broken_config_is_reported_once_by_every_memory_command() {
    let home = home_with_memory();
    std::fs::write(home.path().join("config.toml"), "[introspect]\nmode = \n").unwrap();
    for args in [
        &["search", "commit"][..],
        &["list"],
        &["read", "MEMORY.md"],
        &["note", "the user likes tea"],
        &["status"],
    ] {
        let output = agent_memory(home.path(), args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.matches("invalid toml").count(), 1, "{args:?}: {err}");
        assert!(!err.contains("cannot sync"), "{args:?}: {err}");
        assert!(err.contains("line 2, column 8"), "{args:?}: {err}");
    }
}
