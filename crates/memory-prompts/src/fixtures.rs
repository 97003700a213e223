//! Every template with a fixture context: what `cargo xtask codegen` writes to
//! `fixtures/prompts/` so a reader can review the exact text a model receives, and what the
//! tests render.
//!
//! Each fixture takes its untrusted text from a [`TextSource`], called once per untrusted slot
//! with the slot's name and its benign fixture text. The examples use the benign text; the
//! injection tests replace one slot at a time with hostile text.

use memory_protocol::introspect::{MemoryMode, MemoryScope, MemoryState};
use memory_protocol::working_memory::WorkingMemorySection;

use crate::compaction::{self, SummaryFormat, SummaryRequestContext};
use crate::engine::{Template, Vars};
use crate::error::Result;
use crate::untrusted::UntrustedText;
use crate::{goals, hooks, introspect, memories, working_memory};

/// Gives a fixture its untrusted text: `(slot name, benign text) -> text`.
pub type TextSource<'a> = dyn FnMut(&'static str, &'static str) -> UntrustedText + 'a;

/// One template and how to build its fixture context.
pub struct Fixture {
    template: &'static Template,
    build: fn(&mut TextSource<'_>) -> Result<Vars>,
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture")
            .field("template", &self.template.name)
            .finish_non_exhaustive()
    }
}

impl Fixture {
    /// The template's name: its path under `prompts/`, and the fixture's file name.
    pub fn template(&self) -> &'static str {
        self.template.name
    }

    /// The boundary tags untrusted text cannot open or close in this template.
    pub fn boundary_tags(&self) -> &'static [&'static str] {
        self.template.boundary_tags
    }

    /// Renders the fixture with the benign text.
    pub fn render(&self) -> Result<String> {
        self.render_with(&mut |_, benign| UntrustedText::new(benign))
    }

    /// Renders the fixture taking its untrusted text from `source`.
    pub fn render_with(&self, source: &mut TextSource<'_>) -> Result<String> {
        (self.build)(source)?.render()
    }

    #[cfg(test)]
    pub(crate) fn vars(&self) -> Result<Vars> {
        (self.build)(&mut |_, benign| UntrustedText::new(benign))
    }
}

/// Every template's fixture, in the order of `prompts/`.
pub fn all() -> Vec<Fixture> {
    fn fixture(
        template: &'static Template,
        build: fn(&mut TextSource<'_>) -> Result<Vars>,
    ) -> Fixture {
        Fixture { template, build }
    }
    vec![
        fixture(&crate::registry::memories::STAGE_ONE_SYSTEM, |_| {
            Ok(memories::stage_one_system_vars())
        }),
        fixture(&crate::registry::memories::STAGE_ONE_INPUT, stage_one_input),
        fixture(&crate::registry::memories::CONSOLIDATION_SYSTEM, |_| {
            Ok(memories::consolidation_system_vars())
        }),
        fixture(
            &crate::registry::memories::CONSOLIDATION_INPUT,
            consolidation_input,
        ),
        fixture(&crate::registry::memories::READ_PATH, read_path),
        fixture(&crate::registry::compaction::SYSTEM, |_| {
            Ok(Vars::new(&crate::registry::compaction::SYSTEM))
        }),
        fixture(&crate::registry::compaction::SUMMARY, |_| {
            Ok(Vars::new(&crate::registry::compaction::SUMMARY))
        }),
        fixture(&crate::registry::compaction::UPDATE_SUMMARY, |_| {
            Ok(Vars::new(&crate::registry::compaction::UPDATE_SUMMARY))
        }),
        fixture(&crate::registry::compaction::SHORT_SUMMARY, |_| {
            Ok(Vars::new(&crate::registry::compaction::SHORT_SUMMARY))
        }),
        fixture(&crate::registry::compaction::TURN_PREFIX, |_| {
            Ok(Vars::new(&crate::registry::compaction::TURN_PREFIX))
        }),
        fixture(&crate::registry::compaction::REQUEST, summary_request),
        fixture(
            &crate::registry::working_memory::CREATE,
            working_memory_create,
        ),
        fixture(
            &crate::registry::working_memory::UPDATE,
            working_memory_update,
        ),
        fixture(
            &crate::registry::working_memory::ASSEMBLE,
            working_memory_assemble,
        ),
        fixture(&crate::registry::goals::CONTINUATION, continuation),
        fixture(&crate::registry::goals::BUDGET_LIMIT, budget_limit),
        fixture(
            &crate::registry::goals::OBJECTIVE_UPDATED,
            objective_updated,
        ),
        fixture(&crate::registry::hooks::AFTER_COMPACTION, |_| {
            Ok(hooks::after_compaction_vars())
        }),
        fixture(&crate::registry::hooks::BEFORE_COMPACTION, |text| {
            Ok(hooks::before_compaction_vars(
                &hooks::BeforeCompactionContext {
                    objective: Some(text(
                        "objective",
                        "Make parse_ledger return errors instead of panicking",
                    )),
                },
            ))
        }),
        fixture(&crate::registry::introspect::MEMORY_BLOCK, memory_block),
        fixture(&crate::registry::introspect::MEMORY_HEADER, memory_header),
        fixture(&crate::registry::introspect::MEMORY_SOURCE, memory_source),
        fixture(&crate::registry::introspect::RECALL, recall),
        fixture(&crate::registry::introspect::RECALL_HIT, recall_hit),
        fixture(&crate::registry::introspect::STATE_LINE, state_line),
        fixture(&crate::registry::introspect::STATE_CHANGE, |_| {
            introspect::state_change_vars(MemoryState::Unavailable, MemoryState::Ready)
        }),
        fixture(&crate::registry::introspect::ENVIRONMENT, environment),
    ]
}

/// `(file name, rendered text)` for every template.
pub fn rendered_examples() -> Result<Vec<(String, String)>> {
    all()
        .iter()
        .map(|fixture| Ok((fixture.template().to_owned(), fixture.render()?)))
        .collect()
}

const CONVERSATION: &str = r#"[User]: The ledger import fails on the March statement. Fix it, and keep the CSV parser strict.

[Assistant]: I'll reproduce it first.

[Tool Call]: shell(cmd="cargo test -p ledger-import march")

[Tool Result]: test csv::parses_march_statement ... FAILED
thread 'csv::parses_march_statement' panicked at crates/ledger-import/src/csv.rs:88:14:
invalid date "2026-03-31T24:00"

[Assistant]: The bank writes midnight as 24:00. I'll normalize it to 00:00 of the next day in `parse_timestamp` instead of loosening the parser.

[Tool Call]: apply_patch(path="crates/ledger-import/src/csv.rs")

[Tool Result]: patched crates/ledger-import/src/csv.rs

[Tool Call]: shell(cmd="cargo test -p ledger-import")

[Tool Result]: test result: ok. 42 passed; 0 failed

[User]: Great. Does the April statement use the same format?"#;

const PREVIOUS_SUMMARY: &str = "## Goal\nImport bank statements into the ledger without loosening CSV validation.\n\n## Progress\n### Done\n- [x] January and February statements import cleanly.\n### In Progress\n- [ ] March statement fails to parse.\n\n## Next Steps\n1. Reproduce the March failure with `cargo test -p ledger-import march`.";

const WORKING_MEMORY: &str = "# Working Memory\n\n## Session Title\nLedger statement import\n\n## Current State\nJanuary and February import cleanly; March fails on a timestamp.\n\n## Task & Goals\n- Import all 2026 bank statements; keep the CSV parser strict.\n\n## Key Facts & Decisions\n- Statements are CSV exports from the bank, one file per month.\n\n## Files & Context\n- crates/ledger-import/src/csv.rs: the statement parser.\n\n## Errors & Corrections\n- none\n\n## Open Issues\n- [new] March statement fails to parse.";

const OBJECTIVE: &str = "Import every 2026 bank statement into the ledger with the CSV parser kept strict, and make `cargo test -p ledger-import` pass.";

fn stage_one_input(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = memories::StageOneInputContext {
        rollout_path: src(
            "rollout_path",
            "/home/dev/.codex/sessions/2026/03/14/rollout-2026-03-14T09-12-44-0195a1b2.jsonl",
        ),
        rollout_cwd: src("rollout_cwd", "/home/dev/src/ledger"),
        rollout_contents: src(
            "rollout_contents",
            r#"[{"type":"message","role":"user","content":[{"type":"input_text","text":"The ledger import fails on the March statement. Fix it, and keep the CSV parser strict."}]},{"type":"function_call","name":"shell","arguments":"{\"cmd\":\"cargo test -p ledger-import march\",\"workdir\":\"/home/dev/src/ledger\"}","call_id":"call_1"},{"type":"function_call_output","call_id":"call_1","output":"invalid date \"2026-03-31T24:00\""},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The bank writes midnight as 24:00; normalized it in parse_timestamp. All 42 tests pass."}]}]"#,
        ),
    };
    Ok(memories::stage_one_input_vars(&ctx))
}

fn consolidation_input(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = memories::ConsolidationContext {
        memory_md: src(
            "memory_md",
            "# Task Group: ledger\nscope: work in `/home/dev/src/ledger`, 1 task(s), 2026-02-20\napplies_to: cwd=/home/dev/src/ledger; reuse_rule=reuse for work in this folder\n\n## Task 1: Add the statement import tests\noutcome: success; updated_at: 2026-02-20; thread_id: `0195a0f1-1111-7222-8333-444455556666`\n\n### rollout_summary_files\n- rollout_summaries/2026-02-20T10-01-02-a1B2-import_tests.md (cwd=/home/dev/src/ledger, updated_at=2026-02-20T10:30:00Z, thread_id=0195a0f1-1111-7222-8333-444455556666)\n\n### keywords\n- ledger-import, cargo test\n\n## Reusable knowledge\n- `cargo test -p ledger-import` runs the statement parser tests [Task 1]",
        ),
        memory_summary_md: src(
            "memory_summary_md",
            "v1\n## User Profile\nMaintains a personal finance ledger in Rust.\n\n## What's in Memory\n### ledger (`/home/dev/src/ledger`)\n#### 2026-02-20\n- Add the statement import tests (success); keywords: ledger-import, cargo test",
        ),
        selection_changes: src(
            "selection_changes",
            "Added (new material below):\n- `0195a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b` (rollout_summaries/2026-03-14T09-12-44-Xy9z-march_statement.md): The ledger import fails on the March statement\nChanged (extracted again; new material below replaces the old):\n- none\nRemoved (forget what only these supported):\n- none\nUnchanged (already in the current files; keep them):\n- `0195a0f1-1111-7222-8333-444455556666` (rollout_summaries/2026-02-20T10-01-02-a1B2-import_tests.md): Add the statement import tests",
        ),
        raw_memories: src(
            "raw_memories",
            "## Thread `0195a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b`\nupdated_at: 2026-03-14T09:40:02Z\ncwd: /home/dev/src/ledger\nrollout_path: /home/dev/.codex/sessions/2026/03/14/rollout-2026-03-14T09-12-44-0195a1b2.jsonl\nrollout_summary_file: 2026-03-14T09-12-44-Xy9z-march_statement.md\n\n---\ndescription: The ledger import fails on the March statement: success; midnight written as 24:00 broke parse_timestamp\ntask: The ledger import fails on the March statement\ntask_group: ledger\ntask_outcome: success\ncwd: /home/dev/src/ledger\nkeywords: ledger-import, csv, parse_timestamp, 24:00, midnight\n---\n\n### Task 1: The ledger import fails on the March statement\ntask_outcome: success\n\nPreference signals:\n- Keep the CSV parser strict; fix inputs rather than loosen validation.\n\nFailures and how to do differently:\n- `cargo test -p ledger-import march` failed (`invalid date \"2026-03-31T24:00\"`); it passed after normalizing 24:00 to 00:00 of the next day in `parse_timestamp`.",
        ),
        rollout_summaries: src(
            "rollout_summaries",
            "### rollout_summaries/2026-03-14T09-12-44-Xy9z-march_statement.md\n\nthread_id: 0195a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b\nupdated_at: 2026-03-14T09:40:02Z\nrollout_path: /home/dev/.codex/sessions/2026/03/14/rollout-2026-03-14T09-12-44-0195a1b2.jsonl\ncwd: /home/dev/src/ledger\ngit_branch: main\n\n# The ledger import fails on the March statement (success)",
        ),
        summary_token_budget: 2_500,
        notes: Some(src(
            "notes",
            "## notes/2026-03-15T08-02-11Z-1a2b.md\n\n# Agent note (statements)\nwritten_at: 2026-03-15T08:02:11Z\n\nThe bank's April export switches to semicolon separators.",
        )),
    };
    Ok(memories::consolidation_input_vars(&ctx))
}

fn read_path(_: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = memories::ReadPathContext {
        summary_token_cap: 2_500,
        tools: true,
        writable: true,
    };
    Ok(memories::read_path_vars(&ctx))
}

fn summary_request(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = SummaryRequestContext {
        format: SummaryFormat::Update,
        conversation: src("conversation", CONVERSATION),
        previous_summary: Some(src("previous_summary", PREVIOUS_SUMMARY)),
        additional_context: vec![
            src(
                "additional_context[0]",
                "Plan mode was on for the first two turns.",
            ),
            src(
                "additional_context[1]",
                "Files modified: crates/ledger-import/src/csv.rs",
            ),
        ],
        focus: Some(src("focus", "keep the timestamp decision and its reason")),
    };
    compaction::summary_request_vars(&ctx)
}

fn working_memory_create(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = working_memory::CreateContext {
        conversation: src("conversation", CONVERSATION),
        previous_summary: Some(src("previous_summary", PREVIOUS_SUMMARY)),
        limits: working_memory::SectionLimits::default(),
    };
    Ok(working_memory::create_vars(&ctx))
}

fn working_memory_update(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = working_memory::UpdateContext {
        working_memory: src("working_memory", WORKING_MEMORY),
        conversation: src("conversation", CONVERSATION),
        warnings: vec![working_memory::SectionSizeWarning {
            section: WorkingMemorySection::KeyFactsAndDecisions,
            bullets: 41,
            tokens: 1_870,
        }],
        limits: working_memory::SectionLimits::default(),
    };
    Ok(working_memory::update_vars(&ctx))
}

fn working_memory_assemble(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = working_memory::AssembleContext {
        working_memory: src("working_memory", WORKING_MEMORY),
    };
    Ok(working_memory::assemble_vars(&ctx))
}

fn continuation(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = goals::ContinuationContext {
        objective: src("objective", OBJECTIVE),
        budget: goals::GoalBudget {
            tokens_used: 1_234,
            token_budget: Some(10_000),
        },
    };
    Ok(goals::continuation_vars(&ctx))
}

fn budget_limit(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = goals::BudgetLimitContext {
        objective: src("objective", OBJECTIVE),
        time_used_seconds: 1_815,
        budget: goals::GoalBudget {
            tokens_used: 10_100,
            token_budget: Some(10_000),
        },
    };
    Ok(goals::budget_limit_vars(&ctx))
}

fn objective_updated(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = goals::ObjectiveUpdatedContext {
        objective: src(
            "objective",
            "Import every 2026 bank statement, and add a test for each month's format.",
        ),
        budget: goals::GoalBudget {
            tokens_used: 1_234,
            token_budget: Some(10_000),
        },
    };
    Ok(goals::objective_updated_vars(&ctx))
}

fn memory_block(src: &mut TextSource<'_>) -> Result<Vars> {
    Ok(introspect::memory_fence_vars(&src(
        "body",
        "Memory summary (2% - 61/2500 tokens), written in the background by the memory system, not the user.\n\n[memory summary: memory_summary.md; written by the memory system from past sessions; scope: all projects on this machine]\n## User\nMaintains a personal finance ledger in Rust; prefers strict parsers.",
    )))
}

fn memory_header(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = introspect::MemoryHeaderContext {
        root: src("root", "/home/dev/.agent-memory/memories"),
        scope: MemoryScope::Global,
        summary_tokens: 61,
        summary_budget_tokens: 2_500,
        mode: MemoryMode::Writable,
        tools: true,
        last_written: Some(1_773_481_202),
    };
    introspect::memory_header_vars(&ctx)
}

fn memory_source(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = introspect::MemorySourceContext {
        kind: introspect::SourceKind::Note {
            written_at: 1_773_561_731,
        },
        path: src("path", "notes/2026-03-15T08-02-11Z-1a2b.md"),
        scope: MemoryScope::Global,
        text: src(
            "text",
            "The bank's April export switches to semicolon separators.",
        ),
    };
    Ok(introspect::memory_source_vars(&ctx))
}

fn recall(src: &mut TextSource<'_>) -> Result<Vars> {
    Ok(introspect::recall_fence_vars(&src(
        "body",
        "--- MEMORY.md:12 (written by the memory system; scope: all projects on this machine)\n- [pitfall] `invalid date \"2026-03-31T24:00\"`: the bank writes midnight as 24:00; normalize it in `parse_timestamp`.",
    )))
}

fn recall_hit(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = introspect::RecallHitContext {
        path: src(
            "path",
            "rollout_summaries/2026-03-14T09-12-44-jqmb-fix-march-import.md",
        ),
        line: 5,
        note: false,
        consolidated: false,
        scope: MemoryScope::Global,
        text: src(
            "text",
            "# Fixed the March statement import by normalizing 24:00 timestamps.",
        ),
    };
    Ok(introspect::recall_hit_vars(&ctx))
}

fn state_line(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = introspect::StateLineContext {
        state: MemoryState::Unavailable,
        problem: Some(src("problem", "memory_summary.md: permission denied")),
    };
    introspect::state_line_vars(&ctx)
}

fn environment(src: &mut TextSource<'_>) -> Result<Vars> {
    let ctx = introspect::EnvironmentContext {
        host: src("host", "codex"),
        host_state_dir: src("host_state_dir", "/home/dev/.codex"),
        memory_root: src("memory_root", "/home/dev/.agent-memory/memories"),
        project_root: src("project_root", "/home/dev/src/ledger"),
        os: src("os", "Linux 6.8 (x86_64)"),
        shell: Some(src("shell", "bash 5.2")),
    };
    Ok(introspect::environment_vars(&ctx))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::engine::all_templates;

    #[test]
    fn every_template_has_exactly_one_fixture() {
        let fixtures: Vec<&str> = all().iter().map(Fixture::template).collect();
        let unique: BTreeSet<&str> = fixtures.iter().copied().collect();
        assert_eq!(unique.len(), fixtures.len(), "duplicate fixture");
        let templates: BTreeSet<&str> = all_templates().map(|t| t.name).collect();
        assert_eq!(unique, templates);
    }

    /// Strict undefined catches a template that uses a variable its context lacks; this catches
    /// the reverse, a slot the context fills that the template never shows.
    #[test]
    fn every_variable_set_is_used_and_every_variable_used_is_set() {
        let env_check = |fixture: &Fixture| {
            let mut env = minijinja::Environment::new();
            env.add_template(fixture.template.name, fixture.template.source)
                .unwrap();
            let used: BTreeSet<String> = env
                .get_template(fixture.template.name)
                .unwrap()
                .undeclared_variables(false)
                .into_iter()
                .collect();
            (used, fixture.vars().unwrap().names())
        };
        for fixture in all() {
            let (used, set) = env_check(&fixture);
            assert_eq!(used, set, "{}", fixture.template());
        }
    }
}
