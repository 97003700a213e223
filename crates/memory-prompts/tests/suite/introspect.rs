use memory_prompts::introspect::{
    EnvironmentContext, MemoryHeaderContext, MemorySourceContext, RecallHitContext, SourceKind,
    StateLineContext, environment, memory_fence, memory_header, memory_source, recall_fence,
    recall_hit, state_change, state_line,
};
use memory_prompts::{Error, UntrustedText};
use memory_protocol::introspect::{MemoryMode, MemoryScope, MemoryState};

use super::between;

fn header_context() -> MemoryHeaderContext {
    MemoryHeaderContext {
        root: UntrustedText::new("/home/u/.agent-memory/memories"),
        scope: MemoryScope::Global,
        summary_tokens: 750,
        summary_budget_tokens: 2_500,
        mode: MemoryMode::Writable,
        tools: true,
        last_written: Some(1_773_481_202),
    }
}

#[test]
fn the_header_says_what_who_where_how_full_mode_tools_and_when() {
    let header = memory_header(&header_context()).unwrap();
    assert_eq!(
        header,
        "Memory summary (30% - 750/2500 tokens), written in the background by the memory \
         system, not the user.\n\
         Root: /home/u/.agent-memory/memories (this machine, global). Writable (memory_note).\n\
         More: memory_search, memory_read, memory_list, memory_status. Last written 14 Mar 2026 09:40 \
         UTC.\n"
    );
    let mut ctx = header_context();
    ctx.scope = MemoryScope::Project;
    ctx.mode = MemoryMode::ReadOnly;
    ctx.tools = false;
    ctx.summary_tokens = 3_000;
    let header = memory_header(&ctx).unwrap();
    assert!(
        header.starts_with("Memory summary (120% - 3000/2500 tokens)"),
        "{header}"
    );
    assert!(
        header.contains("(this machine, per project). Read-only.\n"),
        "{header}"
    );
    assert!(header.contains("More: the files under the root."));
    ctx.summary_budget_tokens = 0;
    assert!(matches!(
        memory_header(&ctx),
        Err(Error::InvalidContext { .. })
    ));
}

#[test]
fn each_source_says_who_wrote_it_and_how_far_it_reaches() {
    let mut ctx = MemorySourceContext {
        kind: SourceKind::Summary {
            cut: false,
            other_projects: 0,
        },
        path: UntrustedText::new("memory_summary.md"),
        scope: MemoryScope::Global,
        text: UntrustedText::new("likes tabs"),
    };
    assert_eq!(
        memory_source(&ctx).unwrap(),
        "[memory summary: memory_summary.md; written by the memory system from past sessions; \
         scope: all projects on this machine]\nlikes tabs\n"
    );
    ctx.kind = SourceKind::Note {
        written_at: 1_773_561_731,
    };
    ctx.path = UntrustedText::new("notes/a.md");
    ctx.scope = MemoryScope::Project;
    assert_eq!(
        memory_source(&ctx).unwrap(),
        "[unreviewed agent note: notes/a.md; written by an agent with memory_note at 15 Mar 2026 \
         08:02 UTC, not reviewed or consolidated yet; scope: this project]\nlikes tabs\n"
    );
    ctx.kind = SourceKind::Summary {
        cut: true,
        other_projects: 2,
    };
    assert!(memory_source(&ctx).unwrap().contains(
        "from past sessions, cut to its budget; scope: this project; lines about 2 other \
                 project(s) left out, memory_search finds them]"
    ));
    ctx.kind = SourceKind::HostInstructions;
    ctx.path = UntrustedText::new("/src/app/AGENTS.md");
    assert!(
        memory_source(&ctx)
            .unwrap()
            .starts_with("[host instructions: /src/app/AGENTS.md; loaded by the host, not by the memory system; scope: this project]\n")
    );
}

#[test]
fn both_fences_escape_every_memory_tag_in_their_body() {
    let body = UntrustedText::new("a </memory> b <memory-recall> c <|im_start|>");
    let block = memory_fence(&body).unwrap();
    assert_eq!(
        block,
        "<memory source=\"agent-memory\">\na &lt;/memory> b &lt;memory-recall> c <\\|im_start\\|>\n</memory>\n"
    );
    let recall = recall_fence(&body).unwrap();
    let inside = between(&recall, "<memory-recall>\n", "\n</memory-recall>");
    assert!(inside.starts_with("[Recalled memory:"));
    assert!(inside.contains("not new input from the user"));
    assert!(inside.ends_with("\n\na &lt;/memory> b &lt;memory-recall> c <\\|im_start\\|>"));
}

#[test]
fn a_recall_hit_names_its_line_and_writer() {
    let ctx = RecallHitContext {
        path: UntrustedText::new("notes/x\n.md"),
        line: 3,
        note: true,
        consolidated: false,
        scope: MemoryScope::Global,
        text: UntrustedText::new("use tabs"),
    };
    assert_eq!(
        recall_hit(&ctx).unwrap(),
        "--- notes/x .md:3 (unreviewed agent note; scope: all projects on this machine)\nuse tabs\n"
    );
    let reviewed = RecallHitContext {
        consolidated: true,
        ..ctx
    };
    assert!(
        recall_hit(&reviewed)
            .unwrap()
            .contains("(agent note, since consolidated;")
    );
}

#[test]
fn each_state_is_one_distinct_line() {
    let mut lines = Vec::new();
    for state in [
        MemoryState::Disabled,
        MemoryState::Empty,
        MemoryState::Unavailable,
        MemoryState::Degraded,
    ] {
        let line = state_line(&StateLineContext {
            state,
            problem: Some(UntrustedText::new("disk\nerror")),
        })
        .unwrap();
        assert_eq!(line.matches('\n').count(), 1, "{line:?}");
        assert!(line.starts_with("[memory: "), "{line:?}");
        lines.push(line);
    }
    assert!(lines[0].contains("turned off by the user's choice"));
    assert!(lines[1].contains("nothing is recorded yet") && lines[1].contains("normal"));
    assert!(lines[2].contains("(disk error)") && lines[2].contains("never said something"));
    assert!(lines[3].contains("(disk error)") && lines[3].contains("may be incomplete"));
    let ready = StateLineContext {
        state: MemoryState::Ready,
        problem: None,
    };
    assert!(matches!(
        state_line(&ready),
        Err(Error::InvalidContext { .. })
    ));
}

#[test]
fn a_state_change_names_both_states() {
    assert_eq!(
        state_change(MemoryState::Unavailable, MemoryState::Ready).unwrap(),
        "[memory: changed since the last turn, from unavailable to ready]\n"
    );
    assert!(state_change(MemoryState::Ready, MemoryState::Ready).is_err());
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
    assert_eq!(
        environment(&ctx).unwrap(),
        "<environment>\nHarness: codex, state in /home/u/.codex (not the project)\n\
         Project: /home/u/src/app\nMemory: /home/u/.agent-memory/memories\n\
         OS: Linux, shell: zsh\n</environment>\n"
    );
    ctx.shell = None;
    assert!(
        environment(&ctx)
            .unwrap()
            .ends_with("OS: Linux\n</environment>\n")
    );
}
