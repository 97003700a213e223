//! `agent-memory goal hook claude-code` through the binary: a scripted 30-turn Claude Code
//! session, its `Stop` hook payloads and transcript written the way Claude Code writes them,
//! driven to complete, blocked, budget-limited (raised and resumed) and paused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const SESSION: &str = "5b1f0c2e-9d4a-4e7b-8c3f-2a6d1e0b9f47";
const BLOCKER: &str = "The deploy key was revoked; an admin must issue a new one.";

/// A Claude Code session transcript, written line by line as Claude Code writes it.
struct Transcript {
    path: PathBuf,
    lines: Vec<Value>,
    answers: usize,
}

impl Transcript {
    fn new(dir: &Path) -> Transcript {
        Transcript {
            path: dir.join(format!("{SESSION}.jsonl")),
            lines: Vec::new(),
            answers: 0,
        }
    }

    fn push(&mut self, line: Value) {
        self.lines.push(line);
        let text: String = self.lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(&self.path, text).unwrap();
    }

    /// The user's prompt.
    fn prompt(&mut self, text: &str) {
        let uuid = format!("user-{}", self.lines.len());
        self.push(json!({"type": "user", "uuid": uuid, "sessionId": SESSION,
            "message": {"role": "user", "content": text},
            "promptSource": "typed", "turnOrigin": "human"}));
    }

    /// What Claude Code writes after a Stop hook blocked with `reason`.
    fn hook_feedback(&mut self, reason: &str) {
        let uuid = format!("meta-{}", self.lines.len());
        self.push(
            json!({"type": "user", "uuid": uuid, "sessionId": SESSION, "isMeta": true,
            "message": {"role": "user", "content": format!("Stop hook feedback:\n{reason}")}}),
        );
    }

    /// One API answer: a text block and `tools` tool calls, one line per block, each line
    /// carrying the answer's whole usage (charge: 120 + 30 + 150 = 300 tokens).
    fn answer(&mut self, tools: &[&str]) {
        self.answers += 1;
        let id = format!("msg_{:04}", self.answers);
        let usage = json!({"input_tokens": 120, "cache_creation_input_tokens": 30,
            "cache_read_input_tokens": 2000, "output_tokens": 150});
        let mut blocks = vec![json!({"type": "text", "text": "Working on it."})];
        for (index, tool) in tools.iter().enumerate() {
            blocks.push(
                json!({"type": "tool_use", "id": format!("toolu_{id}_{index}"),
                "name": tool, "input": {}}),
            );
        }
        for (index, block) in blocks.into_iter().enumerate() {
            self.push(json!({"type": "assistant", "uuid": format!("{id}-{index}"),
                "sessionId": SESSION, "apiBlockIndex": index,
                "message": {"id": id, "role": "assistant", "content": [block], "usage": usage}}));
        }
        for index in 0..tools.len() {
            self.push(json!({"type": "user", "sessionId": SESSION,
                "message": {"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": format!("toolu_{id}_{index}"), "content": "ok"}]}}));
        }
    }
}

fn agent(home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    command.args(args).arg("--home").arg(home);
    super::run_with_input(command, stdin.unwrap_or(""))
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "status {:?}: {}{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// One session: the transcript, the hook's outputs so far, and the home.
struct Run {
    home: tempfile::TempDir,
    transcript: Transcript,
    continue_with: Option<String>,
    turns: usize,
    log: Vec<String>,
}

impl Run {
    fn new() -> Run {
        let home = tempfile::tempdir().unwrap();
        let transcript = Transcript::new(home.path());
        Run {
            home,
            transcript,
            continue_with: None,
            turns: 0,
            log: Vec::new(),
        }
    }

    fn goal(&self, args: &[&str]) -> Output {
        agent(self.home.path(), &[&["goal"], args].concat(), None)
    }

    /// The model calls `update_goal` (as over MCP; here through `goal update`).
    fn report(&self, status: &str, reason: &str) -> Value {
        let output = self.goal(&[
            "update", SESSION, "--status", status, "--reason", reason, "--json",
        ]);
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// One turn: opened by the user's `prompt`, or by the hook's last block when `prompt` is
    /// `None`; `answers` API answers with `tools` each; then the Stop hook. Returns the block's
    /// reason, or `None` when the hook let the session stop.
    fn turn(
        &mut self,
        prompt: Option<&str>,
        answers: usize,
        tools: &[&str],
        during: impl FnOnce(&Run),
    ) -> Option<String> {
        self.turns += 1;
        let stop_hook_active = match prompt {
            Some(text) => {
                self.transcript.prompt(text);
                false
            }
            None => {
                let reason = self
                    .continue_with
                    .take()
                    .expect("a continuation turn follows a block");
                self.transcript.hook_feedback(&reason);
                true
            }
        };
        for _ in 0..answers {
            self.transcript.answer(tools);
        }
        during(self);
        let payload = json!({
            "session_id": SESSION,
            "transcript_path": self.transcript.path,
            "cwd": "/work/project",
            "hook_event_name": "Stop",
            "stop_hook_active": stop_hook_active,
            "last_assistant_message": "Working on it.",
            "permission_mode": "default",
        })
        .to_string();
        let output = agent(
            self.home.path(),
            &["goal", "hook", "claude-code"],
            Some(&payload),
        );
        let printed = ok(&output);
        let shown = self.goal(&["show", SESSION, "--json"]);
        let goal: Value = serde_json::from_slice(&shown.stdout).unwrap();
        self.log.push(format!(
            "turn {:2} ({}): {} | goal {} {} tokens",
            self.turns,
            if stop_hook_active {
                "continuation"
            } else {
                "user"
            },
            if printed.is_empty() {
                "(nothing)".to_owned()
            } else {
                printed.chars().take(70).collect::<String>() + "..."
            },
            goal["status"],
            goal["tokensUsed"]
        ));
        if printed.is_empty() {
            return None;
        }
        let block: Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(block["decision"], "block", "{printed}");
        assert_eq!(block.as_object().unwrap().len(), 2, "{printed}");
        let reason = block["reason"].as_str().unwrap().to_owned();
        self.continue_with = Some(reason.clone());
        Some(reason)
    }

    fn status(&self) -> Value {
        let shown = self.goal(&["show", SESSION, "--json"]);
        serde_json::from_slice::<Value>(&shown.stdout).unwrap()["status"].clone()
    }
}

const WORK: &[&str] = &["Bash", "Edit"];

#[test]
fn a_thirty_turn_claude_code_session_through_the_stop_hook() {
    let mut run = Run::new();
    // No goal: the hook records nothing and never blocks.
    assert_eq!(run.turn(Some("hello"), 1, WORK, |_| {}), None);
    assert_eq!(
        ok(&run.goal(&["show"])).trim_end(),
        format!("no goals in {}", run.home.path().display())
    );

    // Complete: the goal continues turn after turn until the model completes it.
    ok(&run.goal(&[
        "set",
        SESSION,
        "make the parser tests green",
        "--budget",
        "100000",
    ]));
    let first = run
        .turn(Some("Work on the goal."), 2, WORK, |_| {})
        .unwrap();
    assert!(first.contains("make the parser tests green"), "{first}");
    assert!(
        first.contains("Tokens used: 600"),
        "two answers of 300, each counted once: {first}"
    );
    for _ in 0..5 {
        assert!(run.turn(None, 1, WORK, |_| {}).is_some());
    }
    let done = run.turn(None, 1, WORK, |run| {
        let done = run.report("complete", "cargo test -p parser: 48 passed");
        assert_eq!(done["goal"]["status"], "complete", "{done}");
    });
    assert_eq!(done, None, "no continuation after complete");

    // Blocked: three consecutive turns report the same blocker.
    ok(&run.goal(&["set", SESSION, "deploy the release"]));
    for expected in ["blockedAuditPending", "blockedAuditPending"] {
        let reason = run.turn(
            if run.continue_with.is_none() {
                Some("Deploy it.")
            } else {
                None
            },
            1,
            WORK,
            |run| {
                assert_eq!(run.report("blocked", BLOCKER)["code"], expected);
            },
        );
        assert!(
            reason.is_some(),
            "the goal stays active until the third report"
        );
    }
    let blocked = run.turn(None, 1, WORK, |run| {
        assert_eq!(run.report("blocked", BLOCKER)["goal"]["status"], "blocked");
    });
    assert_eq!(blocked, None);
    assert_eq!(run.status(), "blocked");

    // Budget-limited: the budget runs out, the user raises it, the goal resumes.
    ok(&run.goal(&[
        "set",
        SESSION,
        "port the lexer",
        "--replace",
        "--budget",
        "1500",
    ]));
    assert!(run.turn(Some("Port the lexer."), 2, WORK, |_| {}).is_some());
    assert!(run.turn(None, 2, WORK, |_| {}).is_some());
    assert_eq!(run.turn(None, 1, WORK, |_| {}), None, "the budget is spent");
    assert_eq!(run.status(), "budgetLimited");
    // Stops while limited stay quiet, whoever starts the turn.
    assert_eq!(run.turn(Some("Status?"), 1, &[], |_| {}), None);
    ok(&run.goal(&["budget", SESSION, "9000"]));
    assert_eq!(run.status(), "active");
    let resumed = run
        .turn(Some("Go on with the lexer."), 1, WORK, |_| {})
        .unwrap();
    assert!(resumed.contains("port the lexer"), "{resumed}");
    for _ in 0..6 {
        assert!(run.turn(None, 1, WORK, |_| {}).is_some());
    }

    // Paused: the user pauses during a turn; no continuation after it, however many stops.
    let paused = run.turn(None, 1, WORK, |run| {
        ok(&run.goal(&["pause", SESSION]));
    });
    assert_eq!(paused, None, "no continuation after a pause");
    for prompt in ["What is left?", "Anything else?", "Thanks."] {
        assert_eq!(run.turn(Some(prompt), 1, WORK, |_| {}), None);
    }
    assert_eq!(run.status(), "paused");
    ok(&run.goal(&["resume", SESSION]));
    assert!(run.turn(Some("Resume."), 1, WORK, |_| {}).is_some());

    // The circuit breaker: three idle continuations pause the goal and end the loop.
    for _ in 0..2 {
        assert!(run.turn(None, 1, &[], |_| {}).is_some());
    }
    assert_eq!(
        run.turn(None, 1, &[], |_| {}),
        None,
        "the breaker ends the loop"
    );
    assert_eq!(run.status(), "paused");
    assert!(run.turns >= 30, "{} turns", run.turns);

    // The hook run twice on the same stop (a retry) charges the turn once.
    let before = run.goal(&["show", SESSION, "--json"]);
    let payload = json!({"session_id": SESSION, "transcript_path": run.transcript.path,
        "hook_event_name": "Stop", "stop_hook_active": true})
    .to_string();
    ok(&agent(
        run.home.path(),
        &["goal", "hook", "claude-code"],
        Some(&payload),
    ));
    assert_eq!(run.goal(&["show", SESSION, "--json"]).stdout, before.stdout);
    eprintln!("{}", run.log.join("\n"));
}
