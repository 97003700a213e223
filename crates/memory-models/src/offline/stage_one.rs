//! Stage-one extraction: one rollout's structured input to `{raw_memory, rollout_summary,
//! rollout_slug}`, read from the transcript's structure.

use memory_protocol::StageOneOutput;
use memory_protocol::stage_one::StageOneInput;

use super::extract::{self, CommandStatus, Facts, MAX_LINE_CHARS, Step, one_line};
use super::{MAX_RAW_MEMORY_CHARS, MAX_SLUG_CHARS, MAX_SUMMARY_CHARS, OFFLINE_NOTICE};

const MAX_REQUESTS: usize = 6;
const MAX_PREFERENCES: usize = 10;
const MAX_STEPS: usize = 20;
const MAX_FIXES: usize = 8;
const MAX_UNRESOLVED: usize = 5;
const MAX_WORKING_COMMANDS: usize = 8;
const MAX_FILES: usize = 20;
const MAX_ERRORS: usize = 6;
const MAX_KEYWORDS: usize = 10;

/// Extracts a stage-one output from one rollout's structured input.
pub(crate) fn extract_memory(input: &StageOneInput) -> StageOneOutput {
    let facts = extract::extract(&input.items);
    if facts.is_empty() {
        return StageOneOutput {
            raw_memory: String::new(),
            rollout_summary: String::new(),
            rollout_slug: Some(String::new()),
        };
    }
    let view = View::new(&facts, input);
    StageOneOutput {
        raw_memory: cap_text(&view.raw_memory(), MAX_RAW_MEMORY_CHARS),
        rollout_summary: cap_text(&view.summary(), MAX_SUMMARY_CHARS),
        rollout_slug: Some(slug(&facts)),
    }
}

/// The facts of one rollout with what the renderings share.
struct View<'a> {
    facts: &'a Facts,
    input: &'a StageOneInput,
    title: String,
    outcome: &'static str,
}

impl<'a> View<'a> {
    fn new(facts: &'a Facts, input: &'a StageOneInput) -> View<'a> {
        let title = match facts.requests.first() {
            Some(request) => one_line(extract::first_sentence(request), 100),
            None => format!("Session in {}", cwd_name(input)),
        };
        View {
            facts,
            input,
            title,
            outcome: outcome_label(facts),
        }
    }

    fn raw_memory(&self) -> String {
        let facts = self.facts;
        let cwd = self.input.rollout_cwd.as_deref().unwrap_or("unknown");
        let mut out = String::from("---\n");
        out.push_str(&format!("description: {}\n", self.description()));
        out.push_str(&format!("task: {}\n", self.title));
        out.push_str(&format!("task_group: {}\n", cwd_name(self.input)));
        out.push_str(&format!("task_outcome: {}\n", self.outcome));
        out.push_str(&format!("cwd: {}\n", one_line(cwd, MAX_LINE_CHARS)));
        out.push_str(&format!("keywords: {}\n", keywords(facts).join(", ")));
        out.push_str("generated_by: agent-memory offline engine, without a language model\n");
        out.push_str("---\n\n");
        out.push_str(&format!("### Task 1: {}\n\n", self.title));
        out.push_str(&format!("{OFFLINE_NOTICE}\n\n"));
        out.push_str(&self.outcome_line());
        self.common_sections(&mut out);
        out.push_str(&format!(
            "\nReferences:\n- rollout: {}\n- thread: {}\n",
            one_line(&self.input.rollout_path, MAX_LINE_CHARS),
            one_line(&self.input.thread_id, MAX_LINE_CHARS)
        ));
        out
    }

    fn summary(&self) -> String {
        let facts = self.facts;
        let failed = facts
            .commands
            .iter()
            .filter(|c| matches!(c.status, CommandStatus::Failed(_)))
            .count();
        let mut out = format!("# {}\n\n{OFFLINE_NOTICE}\n\n", self.headline());
        out.push_str(&format!(
            "Rollout context: cwd {}; {} user request(s), {} command(s) ({failed} failed), \
             {} file(s) changed.\n\n",
            one_line(
                self.input.rollout_cwd.as_deref().unwrap_or("unknown"),
                MAX_LINE_CHARS
            ),
            facts.requests.len(),
            facts.commands.len(),
            facts.changes.len(),
        ));
        out.push_str(&format!("## Task 1: {}\n\n", self.title));
        out.push_str(&self.outcome_line());
        section(&mut out, "Requests", &facts.requests, MAX_REQUESTS);
        self.common_sections(&mut out);
        let steps: Vec<String> = facts.steps.iter().map(|s| self.step_line(s)).collect();
        section(&mut out, "Key steps", &steps, MAX_STEPS);
        let files: Vec<String> = facts
            .changes
            .iter()
            .map(|c| format!("{} ({})", c.path, c.kind.verb()))
            .collect();
        out.push_str("\nReferences:\n");
        if !files.is_empty() {
            out.push_str(&format!("- files: {}\n", capped_join(&files, MAX_FILES)));
        }
        out.push_str(&format!(
            "- rollout: {}\n",
            one_line(&self.input.rollout_path, MAX_LINE_CHARS)
        ));
        out
    }

    /// Preference signals, failures and reusable knowledge: shared by both renderings.
    fn common_sections(&self, out: &mut String) {
        let facts = self.facts;
        section(
            out,
            "Preference signals",
            &facts.preferences,
            MAX_PREFERENCES,
        );
        let mut failures: Vec<String> = facts
            .fixes
            .iter()
            .take(MAX_FIXES)
            .map(|fix| self.fix_line(fix))
            .collect();
        failures.extend(
            facts
                .unresolved
                .iter()
                .take(MAX_UNRESOLVED)
                .filter_map(|&i| {
                    let command = facts.commands.get(i)?;
                    Some(format!(
                        "{} failed{} and nothing later in the session made it pass.",
                        code(&command.text),
                        failure_detail(command)
                    ))
                }),
        );
        section(
            out,
            "Failures and how to do differently",
            &failures,
            usize::MAX,
        );

        let mut knowledge = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let working: Vec<String> = facts
            .commands
            .iter()
            .filter(|c| {
                c.status == CommandStatus::Passed
                    && !extract::is_inspection(&c.text)
                    && seen.insert(c.text.as_str())
            })
            .map(|c| code(&c.text))
            .collect();
        if !working.is_empty() {
            knowledge.push(format!(
                "Commands that ran cleanly here: {}",
                capped_join(&working, MAX_WORKING_COMMANDS)
            ));
        }
        if !facts.changes.is_empty() {
            let files: Vec<String> = facts
                .changes
                .iter()
                .map(|c| format!("{} ({})", c.path, c.kind.verb()))
                .collect();
            knowledge.push(format!("Files changed: {}", capped_join(&files, MAX_FILES)));
        }
        if !facts.errors.is_empty() {
            let errors: Vec<String> = facts.errors.iter().map(|e| code(e)).collect();
            knowledge.push(format!("Errors seen: {}", capped_join(&errors, MAX_ERRORS)));
        }
        section(out, "Reusable knowledge", &knowledge, usize::MAX);
    }

    fn outcome_line(&self) -> String {
        match &self.facts.outcome {
            Some(answer) => format!(
                "Outcome: {} (judged from exit codes). Final answer: {answer}\n",
                self.outcome
            ),
            None => format!(
                "Outcome: {} (judged from exit codes; no final answer recorded).\n",
                self.outcome
            ),
        }
    }

    fn headline(&self) -> String {
        let facts = self.facts;
        let mut parts = vec![self.outcome.to_owned()];
        if !facts.changes.is_empty() {
            parts.push(format!("{} file(s) changed", facts.changes.len()));
        }
        if !facts.fixes.is_empty() {
            parts.push(format!("{} failure(s) fixed", facts.fixes.len()));
        }
        if !facts.unresolved.is_empty() {
            parts.push(format!("{} unresolved", facts.unresolved.len()));
        }
        one_line(&format!("{} ({})", self.title, parts.join("; ")), 200)
    }

    fn description(&self) -> String {
        let facts = self.facts;
        let unresolved = facts
            .unresolved
            .first()
            .and_then(|&i| facts.commands.get(i));
        let detail = if let Some(fix) = facts.fixes.first() {
            self.fix_line(fix)
        } else if let Some(command) = unresolved {
            format!(
                "{} kept failing{}",
                code(&command.text),
                failure_detail(command)
            )
        } else if let Some(rule) = facts.preferences.first() {
            format!("user preference: {rule}")
        } else {
            format!(
                "{} command(s) run, {} file(s) changed",
                facts.commands.len(),
                facts.changes.len()
            )
        };
        one_line(&format!("{}; {}: {detail}", self.title, self.outcome), 300)
    }

    fn fix_line(&self, fix: &extract::Fix) -> String {
        let commands = &self.facts.commands;
        let (Some(failed), Some(passed)) = (commands.get(fix.failed), commands.get(fix.passed))
        else {
            return String::new();
        };
        let runs = if fix.failed_runs > 1 {
            format!(" {} times", fix.failed_runs)
        } else {
            String::new()
        };
        let files = capped_join(&fix.changed, 5);
        let ran: Vec<String> = fix.ran.iter().map(|c| code(c)).collect();
        let ran = capped_join(&ran, 3);
        let how = match (fix.changed.is_empty(), fix.ran.is_empty()) {
            (true, true) => "on a later run with no change in between".to_owned(),
            (false, true) => format!("after changing {files}"),
            (true, false) => format!("after running {ran}"),
            (false, false) => format!("after running {ran} and changing {files}"),
        };
        let what_passed = if passed.text == failed.text {
            "it".to_owned()
        } else {
            code(&passed.text)
        };
        format!(
            "{} failed{runs}{}; {what_passed} passed {how}.",
            code(&failed.text),
            failure_detail(failed)
        )
    }

    fn step_line(&self, step: &Step) -> String {
        let facts = self.facts;
        match step {
            Step::Command(i) => match facts.commands.get(*i) {
                Some(command) => {
                    let status = match command.status {
                        CommandStatus::Passed => "ok".to_owned(),
                        CommandStatus::Failed(_) => format!("failed{}", failure_detail(command)),
                        CommandStatus::Unknown => "no result recorded".to_owned(),
                    };
                    format!("ran {}: {status}", code(&command.text))
                }
                None => String::new(),
            },
            Step::Patch(indexes) => {
                let files: Vec<String> = indexes
                    .iter()
                    .filter_map(|i| facts.changes.get(*i))
                    .map(|c| format!("{} {}", c.kind.verb(), c.path))
                    .collect();
                format!("patched: {}", capped_join(&files, 5))
            }
            Step::FailedPatch(error) => format!("a patch failed to apply: {}", code(error)),
            Step::Search(i) => format!(
                "searched the web: {}",
                facts.searches.get(*i).map(String::as_str).unwrap_or("")
            ),
        }
    }
}

/// `success` when nothing stayed broken and something was done, `partial` when some failure
/// stayed but other work succeeded, `fail` when nothing succeeded, else `uncertain`.
fn outcome_label(facts: &Facts) -> &'static str {
    let did_something = !facts.changes.is_empty()
        || facts
            .commands
            .iter()
            .any(|c| c.status == CommandStatus::Passed);
    match (facts.unresolved.is_empty(), did_something) {
        (true, true) => "success",
        (true, false) => "uncertain",
        (false, true) => "partial",
        (false, false) => "fail",
    }
}

/// ` (exit 101: first error line)` for a failed command.
fn failure_detail(command: &extract::Command) -> String {
    let exit = match command.status {
        CommandStatus::Failed(Some(code)) => Some(format!("exit {code}")),
        _ => None,
    };
    match (exit, &command.error) {
        (Some(exit), Some(error)) => format!(" ({exit}: {})", code(error)),
        (Some(exit), None) => format!(" ({exit})"),
        (None, Some(error)) => format!(" ({})", code(error)),
        (None, None) => String::new(),
    }
}

/// Short lowercase words from the first request, joined by hyphens.
fn slug(facts: &Facts) -> String {
    let words = facts
        .requests
        .first()
        .map(|r| extract::content_words(extract::first_sentence(r)))
        .unwrap_or_default();
    let mut slug = String::new();
    for word in words.iter().take(6) {
        if slug.len() + word.len() + 1 > MAX_SLUG_CHARS {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(word);
    }
    if slug.is_empty() {
        "session".to_owned()
    } else {
        slug
    }
}

/// Words from the first request, the commands' programs and the changed files' names.
fn keywords(facts: &Facts) -> Vec<String> {
    let mut keywords: Vec<String> = Vec::new();
    let mut add = |word: String| {
        if !word.is_empty() && !keywords.contains(&word) && keywords.len() < MAX_KEYWORDS {
            keywords.push(word);
        }
    };
    let request_words = facts
        .requests
        .first()
        .map(|r| extract::content_words(extract::first_sentence(r)))
        .unwrap_or_default();
    // Plain words only: a long letter-and-digit run is more likely an id or a token.
    let plain =
        |w: &String| (4..=20).contains(&w.len()) && w.chars().all(|c| c.is_ascii_lowercase());
    for word in request_words.into_iter().filter(plain).take(4) {
        add(word);
    }
    for command in facts.commands.iter().take(20) {
        if extract::is_inspection(&command.text) {
            continue;
        }
        if let Some(word) = extract::command_keyword(&command.text) {
            add(word);
        }
    }
    for change in &facts.changes {
        let name = change.path.rsplit('/').next().unwrap_or(&change.path);
        add(one_line(name, 60));
    }
    keywords
}

/// The last component of the rollout's working directory.
fn cwd_name(input: &StageOneInput) -> String {
    input
        .rollout_cwd
        .as_deref()
        .map(|cwd| cwd.trim_end_matches('/'))
        .and_then(|cwd| cwd.rsplit('/').next())
        .filter(|name| !name.trim().is_empty())
        .map(|name| one_line(name, 60))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Inline code that cannot be closed from inside.
fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'"))
}

/// `- item` lines under a heading; nothing when empty.
fn section(out: &mut String, heading: &str, items: &[String], max: usize) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("\n{heading}:\n"));
    for item in items.iter().take(max) {
        out.push_str(&format!("- {item}\n"));
    }
    if items.len() > max {
        out.push_str(&format!("- ... and {} more\n", items.len() - max));
    }
}

fn capped_join(items: &[String], max: usize) -> String {
    let mut joined = items
        .iter()
        .take(max)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        joined.push_str(&format!(" and {} more", items.len() - max));
    }
    joined
}

/// Caps a rendered text at a line boundary, marking the cut.
fn cap_text(text: &str, max_chars: usize) -> String {
    const MARKER: &str = "\n[truncated by the offline engine]\n";
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let budget = max_chars.saturating_sub(MARKER.chars().count());
    let head: String = text.chars().take(budget).collect();
    let head = match head.rfind('\n') {
        Some(end) => head.get(..end).unwrap_or(&head).to_owned(),
        None => head,
    };
    format!("{head}{MARKER}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cap_text_cuts_at_a_line_and_marks_it() {
        let text = "line one\nline two\nline three\n";
        assert_eq!(cap_text(text, 100), text);
        let capped = cap_text(&text.repeat(10), 60);
        assert!(capped.chars().count() <= 60, "{capped}");
        assert!(capped.ends_with("[truncated by the offline engine]\n"));
        assert!(capped.starts_with("line one\nline two"));
    }

    #[test]
    fn code_cannot_be_closed_from_inside() {
        assert_eq!(code("echo `x`"), "`echo 'x'`");
    }

    proptest! {
        #[test]
        fn cap_text_respects_any_budget(text in "\\PC{0,400}", max in 40usize..300) {
            prop_assert!(cap_text(&text, max).chars().count() <= max);
        }
    }
}
