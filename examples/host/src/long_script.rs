//! The 200-turn script `scripts/long.json` is generated from [`long_script`], and a test keeps
//! the file equal to it (`UPDATE_SCRIPTS=1 cargo test -p reference-host` rewrites it).
//!
//! Three sessions over two projects: a 150-turn session in `alpha` with a goal (edited once,
//! paused and resumed, completed at the end), its `AGENTS.md`, files the shell creates and
//! changes, long outputs and memory and goal tool calls, in a window small enough for at least
//! four compactions; a 30-turn session in `beta`; and a 20-turn session back in `alpha` that
//! must recall the staging port the first session established.

use std::collections::BTreeMap;

use serde_json::json;

use crate::script::{
    GoalAction, GoalScript, ProjectScript, Reply, Script, ScriptedCall, SessionScript, TurnScript,
};

/// The fact the first session establishes and the third must recall.
pub const ALPHA_FACT: &str = "port 6543";
/// A fact only `beta` may hold.
pub const BETA_FACT: &str = "zurich-7 cluster";

/// The long script (see the module docs).
pub fn long_script() -> Script {
    let mut projects = BTreeMap::new();
    projects.insert(
        "alpha".to_owned(),
        ProjectScript {
            files: BTreeMap::from([
                (
                    "AGENTS.md".to_owned(),
                    "# Working on alpha\n\n- Run `cargo fmt` before every commit.\n- Never edit \
                 files under vendor/.\n- Money is integer cents; never use floats for it.\n"
                        .to_owned(),
                ),
                ("src/lib.rs".to_owned(), "pub mod ledger;\n".to_owned()),
                (
                    "src/ledger.rs".to_owned(),
                    "pub fn round(cents: i64) -> i64 { cents }\n".to_owned(),
                ),
            ]),
            private_facts: vec![ALPHA_FACT.to_owned()],
        },
    );
    projects.insert(
        "beta".to_owned(),
        ProjectScript {
            files: BTreeMap::from([(
                "AGENTS.md".to_owned(),
                "# Working on beta\n\n- Makefiles use tabs.\n- Keep the CLI output stable.\n"
                    .to_owned(),
            )]),
            private_facts: vec![BETA_FACT.to_owned()],
        },
    );
    Script {
        window_tokens: 16_000,
        keep_recent_tokens: 1_500,
        threshold_percent: Some(70),
        context: None,
        projects,
        sessions: vec![alpha_first(), beta(), alpha_again()],
    }
}

fn shell(command: &str) -> ScriptedCall {
    ScriptedCall {
        name: "shell".to_owned(),
        arguments: json!({ "command": command }),
    }
}

fn call(name: &str, arguments: serde_json::Value) -> ScriptedCall {
    ScriptedCall {
        name: name.to_owned(),
        arguments,
    }
}

fn reply(text: &str, tool_calls: Vec<ScriptedCall>) -> Reply {
    Reply {
        text: text.to_owned(),
        tool_calls,
    }
}

fn user_turn(user: &str, replies: Vec<Reply>) -> TurnScript {
    TurnScript {
        goal_action: None,
        user: Some(user.to_owned()),
        continue_goal: false,
        compact: false,
        replies,
    }
}

/// A turn of ordinary work on file `n`: write or change it, look at it, run a check with a
/// long output, and answer.
fn work_turn(project: &str, n: usize) -> TurnScript {
    let file = format!("src/part_{}.rs", n % 12);
    let user = format!(
        "Step {n} in {project}: add function f{n} to {file} and check that the build still \
         passes."
    );
    let mut calls = vec![shell(&format!(
        "mkdir -p src && printf 'pub fn f{n}() -> i64 {{ {n} }}\\n' >> {file}"
    ))];
    if n.is_multiple_of(3) {
        calls.push(shell(&format!("cat {file}")));
    }
    let check = if n.is_multiple_of(5) {
        // A long output: the host keeps its head and tail.
        format!("seq 1 {}", 2_000 + n * 10)
    } else {
        "ls src".to_owned()
    };
    TurnScript {
        replies: vec![
            reply(&format!("Adding f{n} to {file}."), calls),
            reply("Checking the build.", vec![shell(&check)]),
            reply(&format!("Step {n} done: f{n} is in {file}."), Vec::new()),
        ],
        ..user_turn(&user, Vec::new())
    }
}

fn alpha_first() -> SessionScript {
    let mut turns = vec![user_turn(
        "Remember: the staging database listens on port 6543. Port the ledger module to the \
         new rounding API.",
        vec![
            reply(
                "Reading the ledger module.",
                vec![shell("cat src/ledger.rs AGENTS.md")],
            ),
            reply("Noted the staging port; starting the port.", Vec::new()),
        ],
    )];
    for n in 1..149 {
        let mut turn = work_turn("alpha", n);
        match n {
            20 => {
                turn.replies[0]
                    .tool_calls
                    .push(call("memory_status", json!({})));
            }
            30 => {
                turn.replies[0].tool_calls.push(call("get_goal", json!({})));
            }
            45 => turn.goal_action = Some(GoalAction::Pause),
            60 => turn.goal_action = Some(GoalAction::Resume),
            75 => {
                turn.goal_action = Some(GoalAction::Edit(
                    "Port the ledger module to the new rounding API and keep every test green"
                        .to_owned(),
                ));
            }
            100 => turn.compact = true,
            _ => {}
        }
        if n % 10 == 7 && n != 47 && n != 57 {
            // A goal continuation turn: the host sends the hidden continuation.
            turn.continue_goal = true;
            turn.user = None;
        }
        turns.push(turn);
    }
    turns.push(TurnScript {
        continue_goal: true,
        ..user_turn(
            "Finish up.",
            vec![
                reply(
                    "Every step is in and the build passes.",
                    vec![call(
                        "update_goal",
                        json!({ "status": "complete", "reason": "all steps are in and the build passes" }),
                    )],
                ),
                reply("The goal is complete.", Vec::new()),
            ],
        )
    });
    SessionScript {
        project: "alpha".to_owned(),
        goal: Some(GoalScript {
            objective: "Port the ledger module to the new rounding API".to_owned(),
            token_budget: Some(50_000_000),
        }),
        expect_recalled: Vec::new(),
        turns,
    }
}

fn beta() -> SessionScript {
    let mut turns = vec![user_turn(
        "Which port does the staging database listen on? Also note: beta deploys to the \
         zurich-7 cluster.",
        vec![reply(
            "I have nothing about a staging database for beta; noted the cluster.",
            Vec::new(),
        )],
    )];
    turns.extend((1..30).map(|n| work_turn("beta", n)));
    SessionScript {
        project: "beta".to_owned(),
        goal: None,
        expect_recalled: Vec::new(),
        turns,
    }
}

fn alpha_again() -> SessionScript {
    let mut turns = vec![user_turn(
        "Which port does the staging database listen on?",
        vec![reply(
            "Answering from the recalled memory.\n<memory-citation>\n<citation_entries>\n\
             </citation_entries>\n<rollout_ids>\n00000000-0000-4000-8000-000000000001\n\
             </rollout_ids>\n</memory-citation>",
            Vec::new(),
        )],
    )];
    turns.extend((1..20).map(|n| work_turn("alpha", 200 + n)));
    SessionScript {
        project: "alpha".to_owned(),
        goal: None,
        expect_recalled: vec![ALPHA_FACT.to_owned()],
        turns,
    }
}
