use memory_prompts::introspect::{
    EnvironmentContext, MemoryBlockContext, RecallContext, RecallHit, StateLineContext,
    environment, memory_block, recall, state_line,
};
use memory_prompts::{Error, UntrustedText};
use memory_protocol::introspect::MemoryState;

use super::between;

fn block_context() -> MemoryBlockContext {
    MemoryBlockContext {
        memory_root: UntrustedText::new("/home/u/.agent-memory/memories"),
        summary: UntrustedText::new("v1\n## User\nlikes tabs"),
        summary_tokens: 750,
        summary_budget_tokens: 2_500,
        files: 4,
        last_consolidated_at: Some(1_773_481_202),
    }
}

#[test]
fn memory_block_header_carries_checkable_numbers() {
    let prompt = memory_block(&block_context()).unwrap();
    assert!(prompt.starts_with("<memory source=\"agent-memory\">\n[Memory note:"));
    for needle in [
        "keeps in /home/u/.agent-memory/memories.",
        "not by the user in this conversation",
        "750 of 2500 tokens (30% of its budget)",
        "drawn from 4 memory files",
        "last consolidated 2026-03-14 09:40 UTC",
        "memory_status reports these same numbers",
    ] {
        assert!(prompt.contains(needle), "{needle}");
    }
    assert!(prompt.ends_with("\n\nv1\n## User\nlikes tabs\n</memory>\n"));
}

#[test]
fn memory_block_says_never_and_refuses_a_zero_budget() {
    let mut ctx = block_context();
    ctx.last_consolidated_at = None;
    assert!(
        memory_block(&ctx)
            .unwrap()
            .contains("last consolidated never.")
    );
    ctx.summary_budget_tokens = 0;
    assert!(matches!(
        memory_block(&ctx),
        Err(Error::InvalidContext { .. })
    ));
}

#[test]
fn recall_lists_hits_in_order_inside_the_fence() {
    let ctx = RecallContext {
        hits: vec![
            RecallHit {
                source: UntrustedText::new("MEMORY.md:3"),
                text: UntrustedText::new("first"),
            },
            RecallHit {
                source: UntrustedText::new("a\nb.md:9"),
                text: UntrustedText::new("second"),
            },
        ],
    };
    let prompt = recall(&ctx).unwrap();
    let inside = between(&prompt, "<memory-recall>\n", "\n</memory-recall>");
    assert!(inside.starts_with("[Recalled memory:"));
    assert!(inside.contains("not new input from the user"));
    assert!(
        inside.ends_with("\n\n--- MEMORY.md:3\nfirst\n\n--- a b.md:9\nsecond"),
        "{inside}"
    );
    let empty = recall(&RecallContext { hits: Vec::new() }).unwrap_err();
    assert!(matches!(empty, Error::InvalidContext { .. }));
}

#[test]
fn each_state_is_one_distinct_line() {
    let states = [
        MemoryState::Disabled,
        MemoryState::Empty,
        MemoryState::Unavailable,
        MemoryState::Degraded,
    ];
    let mut lines = Vec::new();
    for state in states {
        let line = state_line(&StateLineContext {
            state,
            problem: Some(UntrustedText::new("disk\nerror")),
        })
        .unwrap();
        assert_eq!(line.matches('\n').count(), 1, "{line:?}");
        assert!(
            line.ends_with('\n') && line.starts_with("[memory: "),
            "{line:?}"
        );
        lines.push(line);
    }
    assert!(lines[0].contains("turned off by the user's choice"));
    assert!(lines[1].contains("nothing is recorded yet") && lines[1].contains("nothing to fix"));
    assert!(
        lines[2].contains("(disk error)")
            && lines[2].contains("do not conclude the user never told you")
    );
    assert!(lines[3].contains("(disk error)") && lines[3].contains("may be incomplete"));
    let ready = StateLineContext {
        state: MemoryState::Ready,
        problem: None,
    };
    assert!(matches!(
        state_line(&ready),
        Err(Error::InvalidContext { .. })
    ));
    let quiet = StateLineContext {
        state: MemoryState::Unavailable,
        problem: None,
    };
    assert!(
        state_line(&quiet)
            .unwrap()
            .contains("this turn. Its absence")
    );
}

#[test]
fn environment_names_host_project_and_memory_apart() {
    let mut ctx = EnvironmentContext {
        host: UntrustedText::new("codex"),
        host_state_dir: UntrustedText::new("/home/u/.codex"),
        memory_root: UntrustedText::new("/home/u/.agent-memory/memories"),
        project_root: UntrustedText::new("/home/u/src/app"),
        os: UntrustedText::new("Linux"),
        shell: Some(UntrustedText::new("zsh")),
    };
    let prompt = environment(&ctx).unwrap();
    let inside = between(&prompt, "<environment>\n", "\n</environment>");
    assert!(inside.starts_with("Host: codex,"));
    assert!(
        inside.contains("Host state: /home/u/.codex (the harness's own files, not the project")
    );
    assert!(inside.contains("Project: /home/u/src/app (the user's code"));
    assert!(inside.contains("Memory root: /home/u/.agent-memory/memories"));
    assert!(inside.ends_with("OS: Linux\nShell: zsh"));
    ctx.shell = None;
    assert!(
        environment(&ctx)
            .unwrap()
            .ends_with("OS: Linux\n</environment>\n")
    );
}
