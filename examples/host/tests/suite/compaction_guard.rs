//! codex #40619: a compaction that would leave the context larger is not applied.

use reference_host::script::{ProjectScript, Reply, SessionScript, TurnScript};
use reference_host::{Host, HostOptions, Script, ScriptedModel, Seam};

/// Two one-line turns (more than the keep-recent budget) and then the user asks for a
/// compaction: the offline summary, with its note that no language model wrote it, is larger
/// than the turn it would replace.
fn small_context_compacted_on_request() -> Script {
    let mut turns: Vec<TurnScript> = (1..=2)
        .map(|step| TurnScript {
            goal_action: None,
            user: Some(format!("Step {step}.")),
            continue_goal: false,
            compact: false,
            replies: vec![Reply {
                text: format!("Done {step}."),
                tool_calls: Vec::new(),
            }],
        })
        .collect();
    turns.push(TurnScript {
        goal_action: None,
        user: Some("Compact now, then say what is left.".to_owned()),
        continue_goal: false,
        compact: true,
        replies: vec![Reply {
            text: "Nothing is left.".to_owned(),
            tool_calls: Vec::new(),
        }],
    });
    Script {
        window_tokens: 16_000,
        keep_recent_tokens: 1,
        threshold_percent: None,
        context: None,
        projects: [(
            "alpha".to_owned(),
            ProjectScript {
                files: Default::default(),
                private_facts: Vec::new(),
            },
        )]
        .into(),
        sessions: vec![SessionScript {
            project: "alpha".to_owned(),
            goal: None,
            expect_recalled: Vec::new(),
            turns,
        }],
    }
}

#[test]
fn a_compaction_of_a_small_context_that_would_grow_it_is_not_applied() {
    let script = small_context_compacted_on_request();
    script.validate().unwrap();
    let home = tempfile::tempdir().unwrap();
    let host = Host::new(
        HostOptions::for_script(&script, home.path()),
        ScriptedModel::new(script.replies()),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(host.run_script(&script)).unwrap();
    // The library refused the entry; had it returned one, the host's own check would report
    // the context that did not shrink.
    assert_eq!(report.compactions_not_applied, 1, "{report:#?}");
    assert_eq!(report.compactions, 0, "{report:#?}");
    assert_eq!(report.count(Seam::CompactionShrinks), 0, "{report:#?}");
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
}
