//! Each hook event's answer, from a home with memory and a goal.

use std::path::{Path, PathBuf};

use goal_steering::{GoalConfig, GoalStore, NewGoal};
use memory_hooks::claude_code::{HookContext, MAX_OUTPUT_CHARS, answer};
use memory_introspect::{IntrospectConfig, Introspector};
use memory_transcript::claude_code::ended::{ENDED_SESSIONS_FILE, read_ended};
use proptest::prelude::*;
use serde_json::{Value, json};

const SESSION: &str = "0b6f6a1e-0000-4000-8000-000000000001";
const OBJECTIVE: &str = "Make parse_ledger return errors instead of panicking";

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let home = Home {
            dir: tempfile::tempdir().unwrap(),
        };
        home.write(
            "memories/memory_summary.md",
            "v1\n## User\nKeeps a ledger in Rust; prefers strict parsers.\n",
        );
        home.write(
            "memories/MEMORY.md",
            "# Memory\n\n## Project `/src/ledger`\n\n- [pitfall] the bank writes midnight as 24:00; normalize it in `parse_timestamp`\n- run `cargo test -p ledger-import` after touching the importer\n",
        );
        std::fs::create_dir_all(home.project()).unwrap();
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn project(&self) -> PathBuf {
        self.path().join("project")
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn goals(&self) -> GoalStore {
        GoalStore::open_home(self.path(), GoalConfig::default()).unwrap()
    }

    fn set_goal(&self) {
        self.goals()
            .set_goal(
                SESSION,
                &NewGoal {
                    objective: OBJECTIVE.to_owned(),
                    token_budget: None,
                    replace: false,
                    expected_goal_id: None,
                },
            )
            .unwrap();
    }

    /// Answers `payload` (with the session id, transcript and cwd filled in).
    fn hook(&self, mut payload: Value) -> String {
        let transcript = self.path().join("transcript.jsonl");
        if !transcript.exists() {
            std::fs::write(
                &transcript,
                "{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"content\":\"go\"}}\n\
                 {\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[],\"usage\":{\"output_tokens\":3}}}\n",
            )
            .unwrap();
        }
        payload["session_id"] = json!(SESSION);
        payload["transcript_path"] = json!(transcript);
        payload["cwd"] = json!(self.project());
        let memory = Introspector::open(self.path(), IntrospectConfig::default()).unwrap();
        let mut goals = self.goals();
        let mut ctx = HookContext {
            memory: &memory,
            goals: Some(&mut goals),
            state_dir: self.path().join("hooks/claude-code"),
            claude_config_dir: Some(self.path().join("claude-config")),
        };
        let output = answer(&payload.to_string(), &mut ctx).unwrap();
        assert!(
            output.chars().count() < MAX_OUTPUT_CHARS,
            "{} chars",
            output.len()
        );
        output
    }
}

/// The added context of a JSON answer.
fn context(output: &str, event: &str) -> String {
    let value: Value = serde_json::from_str(output).unwrap();
    assert_eq!(value["hookSpecificOutput"]["hookEventName"], event);
    value["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn session_start_gives_the_block_once_per_session() {
    let home = Home::new();
    let startup = home.hook(json!({"hook_event_name": "SessionStart", "source": "startup"}));
    let text = context(&startup, "SessionStart");
    assert!(text.contains("<memory source=\"agent-memory\">"), "{text}");
    assert!(text.contains("prefers strict parsers"), "{text}");
    // Resumed with the same memory: the session holds the block already.
    let resume = home.hook(json!({"hook_event_name": "SessionStart", "source": "resume"}));
    assert_eq!(resume, "");
    // Memory changed: the new block is given.
    home.write(
        "memories/memory_summary.md",
        "v1\n## User\nKeeps a ledger in Rust; prefers tabs.\n",
    );
    let resume = home.hook(json!({"hook_event_name": "SessionStart", "source": "resume"}));
    assert!(context(&resume, "SessionStart").contains("prefers tabs"));
}

#[test]
fn recall_never_repeats_a_passage_until_a_compaction() {
    let home = Home::new();
    let prompt = json!({"hook_event_name": "UserPromptSubmit",
        "prompt": "the importer breaks on midnight timestamps, normalize parse_timestamp"});
    let first = home.hook(prompt.clone());
    let text = context(&first, "UserPromptSubmit");
    assert!(text.starts_with("<memory-recall>"), "{text}");
    assert!(text.contains("24:00"), "{text}");
    assert_eq!(home.hook(prompt.clone()), "", "the same passage again");

    // A compaction drops what was injected: the passage may come back, with the reminder,
    // the goal and the pinned CLAUDE.md rules.
    home.set_goal();
    home.write("project/CLAUDE.md", "Never push to the main branch.\n");
    let compact = home.hook(json!({"hook_event_name": "SessionStart", "source": "compact"}));
    let text = context(&compact, "SessionStart");
    assert!(text.contains("summarized by a compaction"), "{text}");
    assert!(text.contains(OBJECTIVE), "the goal is restated: {text}");
    assert!(
        text.contains("Never push to the main branch."),
        "CLAUDE.md: {text}"
    );
    assert!(text.contains("prefers strict parsers"), "the block: {text}");
    assert!(context(&home.hook(prompt), "UserPromptSubmit").contains("24:00"));
}

#[test]
fn pre_compact_asks_to_keep_the_rules_and_the_goal() {
    let home = Home::new();
    let without = home.hook(json!({"hook_event_name": "PreCompact", "trigger": "auto"}));
    assert!(without.contains("CLAUDE.md"), "{without}");
    assert!(!without.contains("untrusted_objective"), "{without}");
    home.set_goal();
    let with = home.hook(json!({"hook_event_name": "PreCompact", "trigger": "manual"}));
    assert!(with.contains(OBJECTIVE), "{with}");
}

#[test]
fn stop_continues_an_active_goal_and_nothing_else() {
    let home = Home::new();
    assert_eq!(home.hook(json!({"hook_event_name": "Stop"})), "");
    home.set_goal();
    let block: Value =
        serde_json::from_str(&home.hook(json!({"hook_event_name": "Stop"}))).unwrap();
    assert_eq!(block["decision"], "block");
    assert!(block["reason"].as_str().unwrap().contains(OBJECTIVE));
}

#[test]
fn session_end_lists_the_transcript_and_a_resume_still_knows_the_block() {
    let home = Home::new();
    home.hook(json!({"hook_event_name": "SessionStart", "source": "startup"}));
    let state = home
        .path()
        .join(format!("hooks/claude-code/sessions/{SESSION}.json"));
    assert!(state.exists());
    assert_eq!(
        home.hook(json!({"hook_event_name": "SessionEnd", "reason": "other"})),
        ""
    );
    assert!(state.exists(), "a resume continues the same history");
    assert_eq!(
        home.hook(json!({"hook_event_name": "SessionStart", "source": "resume"})),
        ""
    );
    // The write path reads the end from the home's list of ended sessions.
    let ended = read_ended(&home.path().join(ENDED_SESSIONS_FILE)).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        ended
            .get(SESSION)
            .is_some_and(|at| (now - 60..=now).contains(at)),
        "{ended:?}"
    );
    assert_eq!(
        home.hook(json!({"hook_event_name": "PostToolUse", "tool_name": "Bash"})),
        ""
    );
}

#[test]
fn outputs_stay_under_the_limit_with_huge_memory_and_instructions() {
    let home = Home::new();
    let long = "- prefers strict parsers and tabs over spaces in every file\n".repeat(2_000);
    home.write(
        "memories/memory_summary.md",
        &format!("v1\n## User\n{long}"),
    );
    home.write("memories/MEMORY.md", &format!("# Memory\n\n{long}"));
    home.write("project/CLAUDE.md", &"Never push to main.\n".repeat(3_000));
    home.set_goal();
    // `hook` asserts the limit on every answer.
    for payload in [
        json!({"hook_event_name": "SessionStart", "source": "startup"}),
        json!({"hook_event_name": "SessionStart", "source": "compact"}),
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "strict parsers tabs spaces"}),
        json!({"hook_event_name": "PreCompact", "trigger": "auto"}),
        json!({"hook_event_name": "Stop"}),
    ] {
        home.hook(payload);
    }
}

#[test]
fn a_payload_that_is_not_one_is_a_clear_error() {
    let home = Home::new();
    let memory = Introspector::open(home.path(), IntrospectConfig::default()).unwrap();
    let mut ctx = HookContext {
        memory: &memory,
        goals: None,
        state_dir: home.path().join("hooks"),
        claude_config_dir: None,
    };
    for text in [
        "",
        "[]",
        "{\"session_id\": 3, \"hook_event_name\": \"Stop\"}",
    ] {
        let error = answer(text, &mut ctx).unwrap_err();
        assert!(error.to_string().contains("hook payload"), "{error}");
        let cause = std::error::Error::source(&error).expect("the parser's error as the cause");
        assert!(cause.is::<serde_json::Error>(), "{cause:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_stdin_is_answered_or_refused_never_a_panic(
        text in "\\PC{0,80}",
        event in prop_oneof![Just("SessionStart"), Just("UserPromptSubmit"), Just("PreCompact"),
            Just("SessionEnd"), Just("Other")],
        session in "[^\u{0}]{0,40}",
        prompt in "\\PC{0,80}",
    ) {
        let home = Home::new();
        let memory = Introspector::open(home.path(), IntrospectConfig::default()).unwrap();
        let mut ctx = HookContext {
            memory: &memory,
            goals: None,
            state_dir: home.path().join("hooks"),
            claude_config_dir: None,
        };
        let _ = answer(&text, &mut ctx);
        let payload = json!({"session_id": session, "hook_event_name": event,
            "source": "startup", "prompt": prompt});
        let output = answer(&payload.to_string(), &mut ctx).unwrap();
        prop_assert!(output.chars().count() < MAX_OUTPUT_CHARS);
    }
}
