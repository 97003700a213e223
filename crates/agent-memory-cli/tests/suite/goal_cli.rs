//! `agent-memory goal ...` through the binary, and the goal store sharing the state file with
//! the write path.

use std::path::Path;
use std::process::{Command, Output};

use agent_memory::goals::{GoalConfig, GoalStore, NewGoal};
use agent_memory::write::StateStore;
use agent_memory::write::store::{MemoryMode, SessionFacts, ThreadRegistration, WriteStore};
use serde_json::Value;

const THREAD: &str = "thread-7";
const BLOCKER: &str = "The package registry rejects our token; an admin must issue a new one.";

fn goal(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("goal")
        .args(args)
        .arg("--home")
        .arg(home)
        .output()
        .unwrap()
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "status {:?}: {}{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn json(output: Output) -> Value {
    serde_json::from_str(&ok(output)).unwrap()
}

/// `goal update THREAD --status blocked --reason REASON`: (exit code, stdout).
fn report_blocked(home: &Path, reason: &str) -> (Option<i32>, String) {
    let output = goal(
        home,
        &["update", THREAD, "--status", "blocked", "--reason", reason],
    );
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// `goal account THREAD --json EXTRA`, with a fresh `--turn` id unless `extra` names one.
fn account(home: &Path, extra: &[&str]) -> Value {
    static TURNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = format!(
        "cli-turn-{}",
        TURNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut args = vec!["account", THREAD, "--json"];
    args.extend_from_slice(extra);
    if !extra.contains(&"--turn") {
        args.extend(["--turn", id.as_str()]);
    }
    json(goal(home, &args))
}

#[test]
fn the_blocked_sequence_through_the_cli() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    ok(goal(
        home,
        &["set", THREAD, "publish the crate", "--budget", "50000"],
    ));

    // Turn 1 (the user's): refused with 1/3, exit status 3, not retryable.
    let (code, text) = report_blocked(home, BLOCKER);
    assert_eq!(code, Some(3));
    assert!(text.contains("reports so far: 1/3"), "{text}");
    account(
        home,
        &[
            "--user", "--input", "1200", "--cached", "200", "--output", "300",
        ],
    );
    assert!(ok(goal(home, &["next", THREAD])).contains("source=\"goal\""));

    // Turn 2 (a continuation): 2/3; the JSON answer says it is not retryable.
    let refusal = goal(
        home,
        &[
            "update", THREAD, "--status", "blocked", "--reason", BLOCKER, "--json",
        ],
    );
    assert_eq!(refusal.status.code(), Some(3));
    let refusal: Value = serde_json::from_slice(&refusal.stdout).unwrap();
    assert_eq!(refusal["code"], "blockedAuditPending");
    assert_eq!(refusal["reportsSoFar"], 2);
    assert_eq!(refusal["retryable"], false);
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .contains("reports so far: 2/3")
    );
    account(home, &["--tokens", "800", "--tool-calls", "3"]);

    // Turn 3: accepted; then `goal next` prints nothing.
    let (code, text) = report_blocked(home, BLOCKER);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("status     blocked"), "{text}");
    account(home, &["--tokens", "100"]);
    assert_eq!(ok(goal(home, &["next", THREAD])), "");
    assert_eq!(
        json(goal(home, &["next", THREAD, "--json"])),
        serde_json::json!({"steering": null})
    );
    let shown = json(goal(home, &["show", THREAD, "--json"]));
    assert_eq!(shown["status"], "blocked");
    assert_eq!(shown["statusReason"], BLOCKER);
    assert_eq!(shown["tokensUsed"], 2_200);

    // After resume the count restarts.
    ok(goal(home, &["resume", THREAD]));
    let (_, text) = report_blocked(home, BLOCKER);
    assert!(text.contains("reports so far: 1/3"), "{text}");
    account(home, &["--tokens", "10", "--tool-calls", "1"]);
    let (_, text) = report_blocked(home, BLOCKER);
    assert!(text.contains("reports so far: 2/3"), "{text}");
    account(home, &["--tokens", "10", "--tool-calls", "1"]);
    // A different reason restarts it too.
    let (code, text) = report_blocked(home, "the CI runner is offline");
    assert_eq!(code, Some(3));
    assert!(text.contains("reports so far: 1/3"), "{text}");
}

#[test]
fn pause_silences_next_and_the_breaker_trips_after_three_idle_continuations() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    ok(goal(home, &["set", THREAD, "keep the docs build green"]));
    ok(goal(home, &["pause", THREAD]));
    assert_eq!(ok(goal(home, &["next", THREAD])), "");
    ok(goal(home, &["resume", THREAD]));

    let steering = json(goal(home, &["next", THREAD, "--json"]));
    assert_eq!(steering["steering"]["kind"], "continuation");
    assert_eq!(steering["steering"]["source"], "goal");
    assert!(
        steering["steering"]["text"]
            .as_str()
            .unwrap()
            .contains("<objective>\nkeep the docs build green\n</objective>")
    );
    for turn in 1..=3 {
        let result = account(home, &["--continuation", "--tokens", "900"]);
        assert_eq!(result["breakerTripped"], turn == 3, "{result}");
        if turn < 3 {
            assert!(!ok(goal(home, &["next", THREAD])).is_empty());
        }
    }
    assert_eq!(ok(goal(home, &["next", THREAD])), "");
    let text = ok(goal(home, &["show", THREAD]));
    assert!(text.contains("status     paused"), "{text}");
    assert!(text.contains("reason     circuit breaker"), "{text}");
}

#[test]
fn budgets_edits_and_errors_through_the_cli() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(
        home.join("config.toml"),
        "[goals]\nmax_token_budget = 5000\n",
    )
    .unwrap();
    let too_big = goal(home, &["set", THREAD, "ship it", "--budget", "5001"]);
    assert_eq!(too_big.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&too_big.stderr)
            .contains("goal token budget 5001 exceeds the configured maximum of 5000")
    );
    ok(goal(home, &["set", THREAD, "ship it", "--budget", "1000"]));
    let unfinished = goal(home, &["set", THREAD, "ship more"]);
    assert_eq!(unfinished.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unfinished.stderr)
            .contains("already has an unfinished goal (active); replace it explicitly")
    );
    let result = account(home, &["--user", "--tokens", "1000", "--seconds", "30"]);
    assert_eq!(result["budgetLimitReached"], true);
    assert_eq!(result["goal"]["status"], "budgetLimited");
    assert_eq!(result["turn"]["tokensCharged"], 1000);
    let resume = goal(home, &["resume", THREAD]);
    assert_eq!(resume.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&resume.stderr).contains(
            "cannot resume a goal that is budget-limited; legal next actions: edit, budget"
        )
    );
    let limit = json(goal(home, &["next", THREAD, "--json"]));
    assert_eq!(limit["steering"]["kind"], "budgetLimit");
    let raised = json(goal(home, &["budget", THREAD, "3000", "--json"]));
    assert_eq!(raised["status"], "active");
    let edited = json(goal(home, &["edit", THREAD, "ship it with docs", "--json"]));
    assert_eq!(edited["objective"], "ship it with docs");
    let notice = json(goal(home, &["next", THREAD, "--json"]));
    assert_eq!(notice["steering"]["kind"], "objectiveUpdated");
    let unlimited = json(goal(home, &["budget", THREAD, "none", "--json"]));
    assert_eq!(unlimited["tokenBudget"], Value::Null);
    let plan = account(home, &["--plan-mode", "--tokens", "400"]);
    assert_eq!(plan["turn"]["tokensCharged"], 0);
    let done = goal(
        home,
        &[
            "update",
            THREAD,
            "--status",
            "complete",
            "--reason",
            "published",
            "--json",
        ],
    );
    assert_eq!(done.status.code(), Some(0));
    let done: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(done["goal"]["status"], "complete");
    assert!(
        done["completionBudgetReport"]
            .as_str()
            .unwrap()
            .contains("1000 tokens")
    );
    let all = json(goal(home, &["show", "--json"]));
    assert_eq!(all.as_array().unwrap().len(), 1);
    ok(goal(home, &["clear", THREAD]));
    let missing = goal(home, &["show", THREAD]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(missing.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        format!("error: thread {THREAD} has no goal\n")
    );
}

#[test]
fn show_on_a_missing_home_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("nowhere");
    assert_eq!(
        json(goal(&home, &["show", "--json"])),
        serde_json::json!([])
    );
    assert!(!home.exists());
}

/// Issue 34: a thread without a goal is "not found" for every goal command, in text (exit 1)
/// and in `--json` (code `not_found`), never exit 0 or the generic `failed`.
#[test]
fn every_goal_command_on_a_thread_without_a_goal_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    ok(goal(home, &["set", "other", "keep the store non-empty"]));
    let commands: [&[&str]; 8] = [
        &["show", "nope"],
        &["next", "nope"],
        &["next", "nope", "--after-compaction"],
        &["edit", "nope", "new objective"],
        &["budget", "nope", "100"],
        &["pause", "nope"],
        &["resume", "nope"],
        &["clear", "nope"],
    ];
    for command in commands {
        let text = goal(home, command);
        assert_eq!(text.status.code(), Some(1), "{command:?}");
        assert!(text.stdout.is_empty(), "{command:?}");
        assert_eq!(
            String::from_utf8_lossy(&text.stderr),
            "error: thread nope has no goal\n",
            "{command:?}"
        );
        let with_json: Vec<&str> = command.iter().copied().chain(["--json"]).collect();
        let output = goal(home, &with_json);
        assert_eq!(output.status.code(), Some(1), "{command:?}");
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(answer["error"]["code"], "not_found", "{command:?}");
    }
}

fn registration(id: &str) -> ThreadRegistration {
    ThreadRegistration {
        session: SessionFacts {
            id: id.to_owned(),
            rollout_path: format!("/tmp/{id}.jsonl"),
            cwd: None,
            git_branch: None,
            source: Some("cli".to_owned()),
            exclusion: None,
            created_at: 1,
        },
        last_activity_at: 2,
        memory_mode: MemoryMode::Enabled,
        fingerprint: "f".to_owned(),
        file_size: 3,
        file_mtime_ns: 4,
    }
}

async fn use_both(home: &Path, write_first: bool) {
    let goals_first;
    let state = if write_first {
        let state = StateStore::open_home(home).unwrap();
        goals_first = GoalStore::open_home(home, GoalConfig::default()).unwrap();
        state
    } else {
        goals_first = GoalStore::open_home(home, GoalConfig::default()).unwrap();
        StateStore::open_home(home).unwrap()
    };
    let mut goals = goals_first;
    assert_eq!(state.path(), goals.path());
    // Each side sees its own version, whatever the order.
    assert_eq!(state.schema_version().await.unwrap(), 3);
    assert_eq!(goals.schema_version().unwrap(), 2);
    // Each side writes and reads its tables.
    state
        .upsert_threads(&[registration("t-a")], 10)
        .await
        .unwrap();
    goals
        .set_goal(
            "t-a",
            &NewGoal {
                objective: "remember everything".to_owned(),
                token_budget: None,
                replace: false,
                expected_goal_id: None,
            },
        )
        .unwrap();
    drop((state, goals));
    // Reopening in the other order migrates nothing and loses nothing.
    let goals = GoalStore::open_home(home, GoalConfig::default()).unwrap();
    let state = StateStore::open_home(home).unwrap();
    assert_eq!(state.schema_version().await.unwrap(), 3);
    assert_eq!(goals.schema_version().unwrap(), 2);
    assert_eq!(state.threads().await.unwrap().len(), 1);
    assert_eq!(goals.list().unwrap().len(), 1);
}

#[tokio::test]
async fn the_goal_store_and_the_write_path_share_the_state_file_in_either_order() {
    for write_first in [true, false] {
        let home = tempfile::tempdir().unwrap();
        use_both(home.path(), write_first).await;
    }
}

#[tokio::test]
async fn goals_survive_a_run_of_the_write_path_and_the_run_survives_goals() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts");
    ok(goal(
        home,
        &["set", THREAD, "remember the examples", "--budget", "999"],
    ));
    let run = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("run")
        .arg(&examples)
        .arg("--json")
        .arg("--home")
        .arg(home)
        .output()
        .unwrap();
    let run: Value = serde_json::from_str(&ok(run)).unwrap();
    assert!(run["succeeded"].as_u64().unwrap() >= 1, "{run}");
    let shown = json(goal(home, &["show", THREAD, "--json"]));
    assert_eq!(shown["tokenBudget"], 999);
    assert_eq!(
        StateStore::open_home(home)
            .unwrap()
            .schema_version()
            .await
            .unwrap(),
        3
    );
}

#[test]
fn two_accounting_processes_never_overshoot_the_budget_silently() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_owned();
    ok(goal(&home, &["set", THREAD, "ship it", "--budget", "1000"]));
    // Both writers must be spawned before either is joined, or they would not overlap.
    #[allow(clippy::needless_collect)]
    let writers: Vec<_> = (0..2)
        .map(|writer| {
            let home = home.clone();
            std::thread::spawn(move || {
                (0..15)
                    .map(|turn| {
                        let id = format!("w{writer}-{turn}");
                        account(
                            &home,
                            &["--turn", &id, "--tokens", "40", "--tool-calls", "1"],
                        )
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<Value> = writers
        .into_iter()
        .flat_map(|writer| writer.join().unwrap())
        .collect();
    let crossings = results
        .iter()
        .filter(|result| result["budgetLimitReached"] == true)
        .count();
    assert_eq!(crossings, 1);
    for result in &results {
        let used = result["goal"]["tokensUsed"].as_i64().unwrap();
        let status = &result["goal"]["status"];
        assert_eq!(status == "budgetLimited", used >= 1000, "{result}");
    }
    let shown = json(goal(&home, &["show", THREAD, "--json"]));
    assert_eq!(shown["tokensUsed"], 1_200);
    assert_eq!(shown["status"], "budgetLimited");
}

#[test]
fn complete_is_refused_while_the_edited_objective_is_unseen() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    ok(goal(
        home,
        &["set", THREAD, "fix the parser", "--budget", "1000"],
    ));
    account(home, &["--tokens", "10"]);
    ok(goal(
        home,
        &["edit", THREAD, "fix the parser and the lexer"],
    ));
    let refused = goal(home, &["update", THREAD, "--status", "complete"]);
    assert_eq!(refused.status.code(), Some(3));
    let text = String::from_utf8(refused.stdout).unwrap();
    assert!(
        text.contains("The objective is now: fix the parser and the lexer"),
        "{text}"
    );
    let shown = json(goal(home, &["show", THREAD, "--json"]));
    assert_eq!(shown["status"], "active");
    // The goal goes on: the next request is a continuation toward the new objective.
    let next = json(goal(home, &["next", THREAD, "--json"]));
    assert_eq!(next["steering"]["kind"], "continuation");
}

#[test]
fn account_defaults_neither_trip_the_breaker_nor_charge_a_retry_twice() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    ok(goal(home, &["set", THREAD, "keep working"]));
    for _ in 0..3 {
        let result = account(home, &["--tokens", "5"]);
        assert_eq!(result["goal"]["status"], "active", "{result}");
        assert_eq!(result["turn"]["trigger"], "user");
    }
    let first = account(home, &["--turn", "host-42", "--tokens", "5"]);
    assert_eq!(first["alreadyRecorded"], false);
    let retry = account(home, &["--turn", "host-42", "--tokens", "5"]);
    assert_eq!(retry["alreadyRecorded"], true);
    assert_eq!(retry["goal"]["tokensUsed"], 20);
    let text = ok(goal(
        home,
        &["account", THREAD, "--turn", "host-42", "--tokens", "5"],
    ));
    assert!(
        text.contains("turn host-42 was already recorded: nothing charged"),
        "{text}"
    );
    let missing = goal(home, &["account", THREAD, "--tokens", "5"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--turn"));
}

#[test]
fn calls_naming_a_replaced_goal_are_refused_with_the_current_id() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let a = json(goal(home, &["set", THREAD, "goal A", "--json"]))["goalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let b = json(goal(
        home,
        &["set", THREAD, "goal B", "--replace", "--goal", &a, "--json"],
    ))["goalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let late = goal(
        home,
        &[
            "update", THREAD, "--status", "complete", "--goal", &a, "--json",
        ],
    );
    assert_eq!(late.status.code(), Some(3));
    let late: Value = serde_json::from_slice(&late.stdout).unwrap();
    assert_eq!(late["code"], "staleGoal");
    assert!(late["message"].as_str().unwrap().contains(&b), "{late}");
    let charge = goal(
        home,
        &[
            "account", THREAD, "--turn", "a-1", "--tokens", "9", "--goal", &a,
        ],
    );
    assert_eq!(charge.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&charge.stderr).contains(&b));
    let shown = json(goal(home, &["show", THREAD, "--json"]));
    assert_eq!(
        (shown["status"].as_str(), shown["tokensUsed"].as_i64()),
        (Some("active"), Some(0))
    );
    for command in ["pause", "clear"] {
        let stale = goal(home, &[command, THREAD, "--goal", &a]);
        assert_eq!(stale.status.code(), Some(1), "{command}");
        assert!(
            String::from_utf8_lossy(&stale.stderr).contains(&b),
            "{command}"
        );
    }
}

#[test]
fn a_partial_account_prints_the_wrap_up_inside_the_turn() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    ok(goal(home, &["set", THREAD, "ship it", "--budget", "100"]));
    let partial = |tokens: &str| {
        ok(goal(
            home,
            &[
                "account",
                THREAD,
                "--turn",
                "t-1",
                "--partial",
                "--tokens",
                tokens,
            ],
        ))
    };
    assert_eq!(partial("50"), "");
    let notice = partial("120");
    assert!(notice.contains("source=\"goal\""), "{notice}");
    assert!(notice.contains("budget"), "{notice}");
    assert_eq!(partial("130"), "");
    let done = account(home, &["--turn", "t-1", "--tokens", "140"]);
    assert_eq!(done["goal"]["tokensUsed"], 140);
    assert_eq!(ok(goal(home, &["next", THREAD])), "");
}

/// An objective carrying a token and a terminal escape sequence (clear the screen, then a
/// bidirectional override).
const HOSTILE_OBJECTIVE: &str =
    "rotate ghp_abcdefghijklmnopqrstuvwxyz0123456789 \u{1b}[2J\u{1b}]0;owned\u{7}then\u{202e}ship";
const SECRET: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/// Neither the secret nor a raw control character reaches the output.
fn assert_shown_safely(what: &str, output: &Output) {
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains(SECRET), "{what}: secret printed: {text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
        "{what}: raw control characters printed: {text:?}"
    );
    assert!(text.contains("[REDACTED_SECRET]"), "{what}: {text}");
}

#[test]
fn every_goal_output_path_is_redacted_and_display_safe() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    ok(goal(
        home,
        &["set", THREAD, HOSTILE_OBJECTIVE, "--budget", "1000"],
    ));
    for json in [false, true] {
        let extra: &[&str] = if json { &["--json"] } else { &[] };
        let with = |args: &[&'static str]| -> Vec<&'static str> { [args, extra].concat() };
        let show = goal(home, &with(&["show", THREAD]));
        assert!(show.status.success());
        assert_shown_safely(&format!("show (json {json})"), &show);
        let list = goal(home, &with(&["show"]));
        assert_shown_safely(&format!("show all (json {json})"), &list);
        let next = goal(home, &with(&["next", THREAD]));
        assert_shown_safely(&format!("next (json {json})"), &next);
        // A refused update (the blocked audit's first report) prints the goal too.
        let update = goal(
            home,
            &with(&[
                "update", THREAD, "--status", "blocked", "--reason", "no token",
            ]),
        );
        assert_eq!(update.status.code(), Some(3));
        if json {
            assert_shown_safely("update refused (json)", &update);
        }
    }
    // The edited objective reaches the model through the refused completion: redacted too.
    for (round, extra) in [&[][..], &["--json"][..]].into_iter().enumerate() {
        ok(goal(
            home,
            &["edit", THREAD, &format!("{HOSTILE_OBJECTIVE} {round}")],
        ));
        let refused = goal(
            home,
            &[&["update", THREAD, "--status", "complete"], extra].concat(),
        );
        assert_eq!(refused.status.code(), Some(3));
        assert_shown_safely(&format!("update complete refused {extra:?}"), &refused);
    }
    let done = goal(
        home,
        &["update", THREAD, "--status", "complete", "--reason", "done"],
    );
    assert!(done.status.success());
    assert_shown_safely("update complete", &done);
    let done = goal(home, &["show", THREAD, "--json"]);
    assert_shown_safely("show complete (json)", &done);
}

/// The rollout the compaction tests use.
fn example_rollout() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../examples/rollouts/2025/11/03/rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001.jsonl",
    )
}

#[test]
fn the_goal_is_in_every_request_after_three_compactions() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // Continuations at most hourly: after the first, none is due for the rest of the test.
    std::fs::write(
        home.join("config.toml"),
        "[goals]\nmin_continuation_seconds = 3600\n",
    )
    .unwrap();
    ok(goal(
        home,
        &[
            "set",
            THREAD,
            "migrate the billing ledger",
            "--budget",
            "90000",
        ],
    ));
    let first = json(goal(home, &["next", THREAD, "--json"]));
    assert_eq!(first["steering"]["kind"], "continuation");

    let mut session = example_rollout();
    let mut spent = 0;
    for (round, keep) in ["400", "300", "200"].into_iter().enumerate() {
        account(home, &["--tokens", "1000", "--tool-calls", "2"]);
        spent += 1000;
        let out = home.join(format!("session-{round}.jsonl"));
        let compacted = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
            .args([
                "compact",
                session.to_str().unwrap(),
                "--keep-recent",
                keep,
                "--out",
            ])
            .arg(&out)
            .arg("--json")
            .output()
            .unwrap();
        let report: Value = serde_json::from_str(&ok(compacted)).unwrap();
        let summary = report["entry"]["summary"].as_str().unwrap().to_owned();
        // The hidden goal context did not survive the summary.
        assert!(
            !summary.contains("migrate the billing ledger"),
            "round {round}"
        );
        // No continuation is due ...
        let idle = json(goal(home, &["next", THREAD, "--json"]));
        assert_eq!(idle["steering"], Value::Null, "round {round}");
        // ... and the re-injection comes anyway, with the budget as it stands now.
        let again = json(goal(
            home,
            &["next", THREAD, "--after-compaction", "--json"],
        ));
        assert_eq!(
            again["steering"]["kind"], "afterCompaction",
            "round {round}"
        );
        let request = format!(
            "{summary}\n\n{}",
            again["steering"]["text"].as_str().unwrap()
        );
        assert!(
            request.contains("<objective>\nmigrate the billing ledger\n</objective>"),
            "round {round}"
        );
        assert!(
            request.contains(&format!("Tokens remaining: {}", 90_000 - spent)),
            "round {round}: {request}"
        );
        assert!(
            request.contains("## Completion audit") && request.contains("## Blocked audit"),
            "round {round}"
        );
        session = out;
    }
    // A goal that is not running is not re-injected.
    ok(goal(home, &["pause", THREAD]));
    let paused = json(goal(
        home,
        &["next", THREAD, "--after-compaction", "--json"],
    ));
    assert_eq!(paused["steering"], Value::Null);
}
