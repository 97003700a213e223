//! The hand-off summary as a structured document: parsed from a previous summary (ours or a
//! model's), merged, and rendered in the sections the compaction prompts ask for, within a
//! size budget.

use memory_protocol::compaction::summary_sections::{
    ADDITIONAL_NOTES, BLOCKED, CONSTRAINTS, CONTEXT_FOR_SUFFIX, CRITICAL_CONTEXT, DONE,
    EARLY_PROGRESS, GOAL, IN_PROGRESS, KEY_DECISIONS, NEXT_STEPS, ORIGINAL_REQUEST, PROGRESS,
    SUMMARY, TURN_PREFIX, folded_done_count, folded_done_item, header_level, item_text,
    section_items,
};

use memory_sanitize::FULL_STOPS;
use memory_transcript::shell::is_inspection;

/// Bytes allowed per output token. Code and paths run near three bytes per o200k token, so
/// this keeps the output under its cap whichever counter checks it.
pub(crate) const BYTES_PER_OUTPUT_TOKEN: usize = 3;

/// Context-for-suffix item prefixes of a turn-prefix summary this engine writes and reads back.
pub(crate) const TURN_FILES_MODIFIED: &str = "Files modified so far:";
pub(crate) const TURN_LAST_NOTE: &str = "Last note:";

/// Critical Context item prefixes this engine writes and reads back.
const PENDING_QUESTION: &str = "Pending user question (verbatim):";
const UNANSWERED_QUESTION: &str = "Unanswered user question (verbatim):";
const ERRORS_SEEN: &str = "Errors seen:";
const FILES_MODIFIED: &str = "Files modified:";
const FILES_READ: &str = "Files read:";
const COMMANDS_FAILED: &str = "Commands that failed:";
const COMMANDS_PASSED: &str = "Commands that passed:";

/// Most items a section keeps; older ones are left out (Done items fold into the count line).
/// The goal keeps its first item (the goal as first stated) and the newest change to it.
/// Standing rules, corrections, decisions and open questions are what a hand-off must not
/// lose, so their caps are generous; they do not grow with ordinary work.
const GOAL_ITEMS: usize = 2;
const CONSTRAINT_ITEMS: usize = 16;
const DONE_ITEMS: usize = 24;
const IN_PROGRESS_ITEMS: usize = 12;
const BLOCKED_ITEMS: usize = 5;
const DECISION_ITEMS: usize = 10;
const NEXT_STEP_ITEMS: usize = 6;
const ERROR_ITEMS: usize = 5;
const MODIFIED_ITEMS: usize = 20;
const READ_ITEMS: usize = 20;
const COMMAND_ITEMS: usize = 20;
const CONTEXT_ITEMS: usize = 12;
const NOTE_ITEMS: usize = 6;
const UNANSWERED_ITEMS: usize = 3;

/// Byte budgets of the lists that steady work fills (finished steps, files, commands): a
/// summary rewritten at every compaction stays the same size however long the work goes on.
/// Older items go first; files fold into their folder (`dir/*`) and runs of one command over
/// many targets into its prefix (`cargo test -p a *`) before any is left out.
const DONE_BYTES: usize = 480;
const MODIFIED_BYTES: usize = 140;
const READ_BYTES: usize = 120;
const FAILED_BYTES: usize = 240;
const ERROR_BYTES: usize = 300;
const PASSED_BYTES: usize = 400;

/// A hand-off summary, section by section. Items are stored without their bullet, checkbox
/// or number.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Doc {
    pub goal: Vec<String>,
    pub constraints: Vec<String>,
    pub done: Vec<String>,
    pub in_progress: Vec<String>,
    pub blocked: Vec<String>,
    pub decisions: Vec<String>,
    pub next_steps: Vec<String>,
    pub pending_question: Option<String>,
    /// User questions the conversation went past without an answer, oldest first.
    pub unanswered: Vec<String>,
    pub errors: Vec<String>,
    pub modified: Vec<String>,
    pub read: Vec<String>,
    pub failed: Vec<String>,
    pub passed: Vec<String>,
    pub context: Vec<String>,
    pub notes: Vec<String>,
    /// Done items folded into a count line, earlier and now.
    pub folded_done: usize,
}

/// An item without its bullet, number or checkbox.
pub(crate) fn item_body(item: &str) -> String {
    item_text(item).trim_end().to_owned()
}

/// The text of every backticked span of `text`.
pub(crate) fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, part)| i % 2 == 1 && !part.is_empty())
        .map(|(_, part)| part.to_owned())
        .collect()
}

/// `text` inside backticks, with its own backticks replaced so the span stays one span.
pub(crate) fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'"))
}

/// Appends `value` unless an equal item (ignoring case and spacing) is already there.
pub(crate) fn push_unique(list: &mut Vec<String>, value: String) {
    let key = comparable(&value);
    if !key.is_empty() && !list.iter().any(|item| comparable(item) == key) {
        list.push(value);
    }
}

/// An item's text for comparison: lowercase, whitespace collapsed, trailing full stops (of any
/// script) dropped.
pub(crate) fn comparable(item: &str) -> String {
    item.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(FULL_STOPS)
        .to_lowercase()
}

impl Doc {
    /// Reads a summary. Sections it does not know, and Critical Context items it did not
    /// write, are kept as context and notes; nothing is dropped.
    pub(crate) fn parse(text: &str) -> Doc {
        let mut doc = Doc::default();
        let items = |header: &str| -> Vec<String> {
            section_items(text, header)
                .iter()
                .map(|item| item_body(item))
                .filter(|item| !item.is_empty() && !is_left_out_line(item))
                .collect()
        };
        doc.goal = items(GOAL);
        if doc.goal.is_empty() {
            // A model may write the goal as a paragraph.
            doc.goal = paragraph(text, GOAL).into_iter().collect();
        }
        doc.constraints = items(CONSTRAINTS);
        for item in items(DONE) {
            if let Some(count) = folded_done_count(&item) {
                doc.folded_done += count;
            } else {
                doc.done.push(item);
            }
        }
        doc.in_progress = items(IN_PROGRESS);
        doc.blocked = items(BLOCKED);
        doc.decisions = items(KEY_DECISIONS);
        doc.next_steps = items(NEXT_STEPS);
        for item in items(CRITICAL_CONTEXT) {
            doc.read_context_item(&item);
        }
        doc.notes = items(ADDITIONAL_NOTES);
        // Text before the first header (all of a header-less summary, such as codex's own
        // compacted prose) is carried as context rather than lost.
        for item in prose_items(text) {
            push_unique(&mut doc.context, item);
        }
        doc.read_turn_context(text);
        for line in text.lines() {
            let header = line.trim_end();
            if header_level(line).is_some()
                && !SUMMARY.contains(&header)
                && !TURN_PREFIX.contains(&header)
            {
                for item in section_items(text, header) {
                    push_unique(&mut doc.notes, item_body(&item));
                }
            }
        }
        doc
    }

    /// Folds a split turn's summary (as the offline engine writes it) into the sections: the
    /// request is a goal, passed steps and changes are done, failures are open, and the
    /// context items are kept (the last assistant note is stale by now and dropped).
    fn read_turn_context(&mut self, text: &str) {
        let request = section_items(text, ORIGINAL_REQUEST)
            .first()
            .map(|item| item_body(item))
            .or_else(|| paragraph(text, ORIGINAL_REQUEST));
        if let Some(request) = request {
            push_unique(&mut self.goal, first_line(&request));
        }
        for item in section_items(text, EARLY_PROGRESS)
            .iter()
            .map(|i| item_body(i))
        {
            if let Some(command) = item
                .strip_prefix("Ran ")
                .and_then(|rest| rest.strip_suffix(" (passed)"))
            {
                // Looking around (`ls`, `sed -n`, `rg`) is not finished work.
                if !is_inspection(command.trim_matches('`')) {
                    push_unique(&mut self.done, format!("{command} passed"));
                }
            } else if item.starts_with("Changed ") {
                push_unique(&mut self.done, item);
            } else if item.contains(" fails") {
                push_unique(&mut self.in_progress, item);
            }
        }
        for item in section_items(text, CONTEXT_FOR_SUFFIX)
            .iter()
            .map(|i| item_body(i))
        {
            if let Some(rest) = item.strip_prefix(TURN_FILES_MODIFIED) {
                for file in backticked(rest) {
                    push_unique(&mut self.modified, file);
                }
            } else if item.contains(" fails") {
                push_unique(&mut self.in_progress, item);
            } else if !item.starts_with(TURN_LAST_NOTE) {
                push_unique(&mut self.context, item);
            }
        }
    }

    fn read_context_item(&mut self, item: &str) {
        if let Some(rest) = item.strip_prefix(PENDING_QUESTION) {
            if let Some(question) = unquote(rest) {
                self.pending_question = Some(question);
            }
        } else if let Some(rest) = item.strip_prefix(UNANSWERED_QUESTION) {
            if let Some(question) = unquote(rest) {
                push_unique(&mut self.unanswered, question);
            }
        } else if let Some(rest) = item.strip_prefix(ERRORS_SEEN) {
            self.errors.extend(backticked(rest));
        } else if let Some(rest) = item.strip_prefix(FILES_MODIFIED) {
            self.modified.extend(backticked(rest));
        } else if let Some(rest) = item.strip_prefix(FILES_READ) {
            self.read.extend(backticked(rest));
        } else if let Some(rest) = item.strip_prefix(COMMANDS_FAILED) {
            self.failed.extend(backticked(rest));
        } else if let Some(rest) = item.strip_prefix(COMMANDS_PASSED) {
            self.passed.extend(backticked(rest));
        } else {
            push_unique(&mut self.context, item.to_owned());
        }
    }

    /// Renders the summary within `max_tokens`: when it would not fit, the least important
    /// items are left out first (oldest first within a list), each list saying how many it
    /// left out; Done items are folded into a count line last of all.
    pub(crate) fn render(mut self, max_tokens: u32) -> String {
        let budget = usize::try_from(max_tokens)
            .unwrap_or(usize::MAX)
            .saturating_mul(BYTES_PER_OUTPUT_TOKEN);
        let mut omitted = self.cap_sections();
        let mut text = self.render_all(&omitted);
        // Every pass drops at least one item, so this ends.
        while text.len() > budget {
            let overshoot = text.len() - budget;
            if !self.drop_items(overshoot, &mut omitted) {
                break;
            }
            text = self.render_all(&omitted);
        }
        if text.len() > budget {
            text = cut_to_bytes(&text, budget);
        }
        text
    }

    /// Leaves out the oldest items of every section beyond its cap (see [`GOAL_ITEMS`] and
    /// the caps after it) and returns how many each left out.
    fn cap_sections(&mut self) -> Omitted {
        let goal_changes = self.goal.len().saturating_sub(1);
        let goal_left_out = goal_changes.saturating_sub(GOAL_ITEMS - 1);
        if goal_left_out > 0 {
            self.goal.drain(1..=goal_left_out);
        }
        self.folded_done += cap(&mut self.done, DONE_ITEMS) + cap_bytes(&mut self.done, DONE_BYTES);
        cap(&mut self.unanswered, UNANSWERED_ITEMS);
        let modified = fold_into_groups(&mut self.modified, MODIFIED_BYTES, folder_of);
        let read = fold_into_groups(&mut self.read, READ_BYTES, folder_of);
        let passed = fold_into_groups(&mut self.passed, PASSED_BYTES, command_prefix);
        Omitted {
            goal: goal_left_out,
            constraints: cap(&mut self.constraints, CONSTRAINT_ITEMS),
            in_progress: cap(&mut self.in_progress, IN_PROGRESS_ITEMS),
            blocked: cap(&mut self.blocked, BLOCKED_ITEMS),
            decisions: cap(&mut self.decisions, DECISION_ITEMS),
            next_steps: cap(&mut self.next_steps, NEXT_STEP_ITEMS),
            errors: cap(&mut self.errors, ERROR_ITEMS) + cap_bytes(&mut self.errors, ERROR_BYTES),
            modified: cap(&mut self.modified, MODIFIED_ITEMS) + modified,
            read: cap(&mut self.read, READ_ITEMS) + read,
            failed: cap(&mut self.failed, COMMAND_ITEMS)
                + cap_bytes(&mut self.failed, FAILED_BYTES),
            passed: cap(&mut self.passed, COMMAND_ITEMS) + passed,
            context: cap(&mut self.context, CONTEXT_ITEMS),
            notes: cap(&mut self.notes, NOTE_ITEMS),
        }
    }

    /// Drops about half the overshoot, oldest items first, from the list that is largest for
    /// its weight (weights say how much a hand-off needs a list). False when nothing is left to
    /// drop.
    fn drop_items(&mut self, overshoot: usize, omitted: &mut Omitted) -> bool {
        // (list, omitted counter, items always kept, weight)
        let mut lists: [(&mut Vec<String>, &mut usize, usize, usize); 14] = [
            (&mut self.passed, &mut omitted.passed, 0, 2),
            (&mut self.read, &mut omitted.read, 0, 2),
            (&mut self.notes, &mut omitted.notes, 1, 1),
            (&mut self.context, &mut omitted.context, 0, 2),
            (&mut self.errors, &mut omitted.errors, 1, 2),
            (&mut self.decisions, &mut omitted.decisions, 1, 3),
            (&mut self.constraints, &mut omitted.constraints, 1, 4),
            (&mut self.modified, &mut omitted.modified, 1, 3),
            (&mut self.failed, &mut omitted.failed, 1, 3),
            (&mut self.next_steps, &mut omitted.next_steps, 1, 4),
            (&mut self.goal, &mut omitted.goal, 1, 4),
            (&mut self.blocked, &mut omitted.blocked, 1, 5),
            (&mut self.in_progress, &mut omitted.in_progress, 1, 5),
            (&mut self.done, &mut self.folded_done, 1, 6),
        ];
        let heaviest = lists
            .iter_mut()
            .filter(|(list, _, keep, _)| list.len() > *keep)
            .max_by_key(|(list, _, _, weight)| {
                list.iter().map(|item| item.len() + 4).sum::<usize>() / weight
            });
        match heaviest {
            Some((list, count, keep, _)) => {
                **count += take_oldest(list, overshoot.div_ceil(2), *keep);
                true
            }
            None => false,
        }
    }

    fn render_all(&self, omitted: &Omitted) -> String {
        let mut out = String::new();
        // The goal's left-out middle changes are superseded by the newest, not lost work.
        section(&mut out, GOAL, &self.goal, 0, Bullet::Dash);
        section(
            &mut out,
            CONSTRAINTS,
            &self.constraints,
            omitted.constraints,
            Bullet::Dash,
        );
        if !self.done.is_empty()
            || self.folded_done > 0
            || !self.in_progress.is_empty()
            || !self.blocked.is_empty()
        {
            out.push_str(PROGRESS);
            out.push('\n');
            let mut done: Vec<String> = Vec::new();
            if self.folded_done > 0 {
                done.push(folded_done_item(self.folded_done));
            }
            done.extend(self.done.iter().cloned());
            subsection(&mut out, DONE, &done, 0, Bullet::Done);
            subsection(
                &mut out,
                IN_PROGRESS,
                &self.in_progress,
                omitted.in_progress,
                Bullet::Open,
            );
            subsection(
                &mut out,
                BLOCKED,
                &self.blocked,
                omitted.blocked,
                Bullet::Dash,
            );
            out.push('\n');
        }
        section(
            &mut out,
            KEY_DECISIONS,
            &self.decisions,
            omitted.decisions,
            Bullet::Dash,
        );
        section(
            &mut out,
            NEXT_STEPS,
            &self.next_steps,
            omitted.next_steps,
            Bullet::Numbered,
        );
        let mut context: Vec<String> = Vec::new();
        for question in &self.unanswered {
            context.push(quoted(UNANSWERED_QUESTION, question));
        }
        if let Some(question) = &self.pending_question {
            context.push(quoted(PENDING_QUESTION, question));
        }
        for (label, list, left_out) in [
            (ERRORS_SEEN, &self.errors, omitted.errors),
            (FILES_MODIFIED, &self.modified, omitted.modified),
            (FILES_READ, &self.read, omitted.read),
            (COMMANDS_FAILED, &self.failed, omitted.failed),
            (COMMANDS_PASSED, &self.passed, omitted.passed),
        ] {
            if list.is_empty() {
                continue;
            }
            let spans: Vec<String> = list.iter().map(|item| code(item)).collect();
            let mut line = format!("{label} {}", spans.join(", "));
            if left_out > 0 {
                line.push_str(&format!(" (and {left_out} earlier)"));
            }
            context.push(line);
        }
        context.extend(self.context.iter().cloned());
        section(
            &mut out,
            CRITICAL_CONTEXT,
            &context,
            omitted.context,
            Bullet::Dash,
        );
        section(
            &mut out,
            ADDITIONAL_NOTES,
            &self.notes,
            omitted.notes,
            Bullet::Dash,
        );
        out.trim_end().to_owned()
    }
}

/// A quoted block (`> ` lines) as text, or `None` when it is empty.
fn unquote(block: &str) -> Option<String> {
    let lines: Vec<&str> = block
        .lines()
        .map(|line| {
            let line = line.trim_start();
            line.strip_prefix("> ")
                .or_else(|| line.strip_prefix('>'))
                .unwrap_or(line)
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

fn quoted(label: &str, text: &str) -> String {
    let lines: Vec<String> = text.lines().map(|line| format!("  > {line}")).collect();
    format!("{label}\n{}", lines.join("\n"))
}

/// Items left out of each list by [`Doc::render`].
#[derive(Debug, Default)]
struct Omitted {
    goal: usize,
    constraints: usize,
    in_progress: usize,
    blocked: usize,
    decisions: usize,
    next_steps: usize,
    errors: usize,
    modified: usize,
    read: usize,
    failed: usize,
    passed: usize,
    context: usize,
    notes: usize,
}

#[derive(Debug, Clone, Copy)]
enum Bullet {
    Dash,
    Done,
    Open,
    Numbered,
}

fn section(out: &mut String, header: &str, items: &[String], omitted: usize, bullet: Bullet) {
    if items.is_empty() {
        return;
    }
    out.push_str(header);
    out.push('\n');
    push_items(out, items, omitted, bullet);
    out.push('\n');
}

fn subsection(out: &mut String, header: &str, items: &[String], omitted: usize, bullet: Bullet) {
    if items.is_empty() {
        return;
    }
    out.push_str(header);
    out.push('\n');
    push_items(out, items, omitted, bullet);
}

fn push_items(out: &mut String, items: &[String], omitted: usize, bullet: Bullet) {
    if omitted > 0 {
        out.push_str(&format!("- ({omitted} earlier items left out)\n"));
    }
    for (index, item) in items.iter().enumerate() {
        let prefix = match bullet {
            Bullet::Dash => "- ".to_owned(),
            Bullet::Done => "- [x] ".to_owned(),
            Bullet::Open => "- [ ] ".to_owned(),
            Bullet::Numbered => format!("{}. ", index + 1),
        };
        out.push_str(&prefix);
        out.push_str(item);
        out.push('\n');
    }
}

/// Removes the oldest items of `list` beyond `max`; returns how many.
fn cap(list: &mut Vec<String>, max: usize) -> usize {
    let over = list.len().saturating_sub(max);
    list.drain(..over);
    over
}

/// Removes the oldest items of `list` until the rest fit `bytes` (the newest item always
/// stays); returns how many.
fn cap_bytes(list: &mut Vec<String>, bytes: usize) -> usize {
    let mut used = 0;
    let kept = list
        .iter()
        .rev()
        .enumerate()
        .take_while(|(index, item)| {
            used += item.len() + 4;
            *index == 0 || used <= bytes
        })
        .count();
    let over = list.len() - kept;
    list.drain(..over);
    over
}

/// Bounds a list to `bytes`: when it does not fit, the entries of each group (see
/// `group_of`) that holds more than one listed entry become one `GROUP*` entry (at the newest
/// one's place); when that is still too long, the oldest entries are left out. Returns how
/// many were left out. A `GROUP*` entry read back from an earlier summary absorbs new entries
/// of its group.
fn fold_into_groups(
    list: &mut Vec<String>,
    bytes: usize,
    group_of: fn(&str) -> Option<&str>,
) -> usize {
    let size = |list: &[String]| list.iter().map(|item| item.len() + 4).sum::<usize>();
    let entry_group = |entry: &str| -> Option<String> {
        entry
            .strip_suffix('*')
            .or_else(|| group_of(entry))
            .map(str::to_owned)
    };
    let folded: Vec<String> = list
        .iter()
        .filter_map(|item| item.strip_suffix('*'))
        .map(str::to_owned)
        .collect();
    let mut absorbed: Vec<String> = Vec::with_capacity(list.len());
    for item in list.drain(..) {
        let group = folded
            .iter()
            .find(|group| !item.ends_with('*') && group_of(&item) == Some(group.as_str()));
        let entry = group.map_or(item, |group| format!("{group}*"));
        // An entry seen again moves its group entry to the newest place.
        absorbed.retain(|existing| *existing != entry);
        absorbed.push(entry);
    }
    *list = absorbed;
    if size(list) <= bytes {
        return 0;
    }
    let groups: Vec<Option<String>> = list.iter().map(|item| entry_group(item)).collect();
    let mut grouped: Vec<String> = Vec::new();
    for (index, item) in list.iter().enumerate() {
        let group = groups.get(index).cloned().flatten();
        let shared = group.as_ref().is_some_and(|group| {
            groups
                .iter()
                .enumerate()
                .any(|(other, own)| other != index && own.as_ref() == Some(group))
        });
        let entry = match group {
            Some(group) if shared => format!("{group}*"),
            _ => item.clone(),
        };
        // Keep the newest place of each entry.
        grouped.retain(|existing| *existing != entry);
        grouped.push(entry);
    }
    *list = grouped;
    cap_bytes(list, bytes)
}

/// A file's group: its folder, through its last separator (`src/a/` for `src/a/b.rs`).
fn folder_of(path: &str) -> Option<&str> {
    let end = path.rfind(['/', '\\'])?;
    path.get(..=end).filter(|folder| !folder.is_empty())
}

/// A command's group: every word but the last (`cargo test -p a ` for `cargo test -p a x`), so
/// runs of one check over many targets fold into one entry.
fn command_prefix(command: &str) -> Option<&str> {
    let end = command.trim_end().rfind(' ')?;
    command
        .get(..=end)
        .filter(|prefix| !prefix.trim().is_empty())
}

/// The line [`push_items`] writes for left-out items, read back as a count, not an item.
fn is_left_out_line(item: &str) -> bool {
    item.strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(" earlier items left out)"))
        .is_some_and(|count| !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the oldest items of `list` worth at least `bytes` (at least one), keeping `keep`.
fn take_oldest(list: &mut Vec<String>, bytes: usize, keep: usize) -> usize {
    let removable = list.len().saturating_sub(keep);
    let mut freed = 0;
    let mut count = 0;
    while count < removable && (count == 0 || freed < bytes) {
        freed += list.get(count).map_or(0, |item| item.len() + 4);
        count += 1;
    }
    list.drain(..count);
    count
}

/// The text before the first header, as items: each paragraph joined into one line, each
/// bulleted or numbered line an item of its own. A `---` rule is not text.
fn prose_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let flush = |paragraph: &mut Vec<&str>, items: &mut Vec<String>| {
        if !paragraph.is_empty() {
            items.push(paragraph.join(" "));
            paragraph.clear();
        }
    };
    for line in text.lines().take_while(|line| header_level(line).is_none()) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.chars().all(|c| c == '-') {
            flush(&mut paragraph, &mut items);
            continue;
        }
        let body = item_body(trimmed);
        if body != trimmed {
            flush(&mut paragraph, &mut items);
            if !body.is_empty() {
                items.push(body);
            }
        } else {
            paragraph.push(trimmed);
        }
    }
    flush(&mut paragraph, &mut items);
    items
}

/// The first paragraph under `header`, when it holds text but no items.
fn paragraph(text: &str, header: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|line| line.trim_end() != header);
    lines.next()?;
    let body: Vec<&str> = lines
        .take_while(|line| header_level(line).is_none())
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect();
    let joined = body.join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// The first non-empty line of `text`.
fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// The longest prefix of `text` within `bytes`, on a line boundary when one is close.
fn cut_to_bytes(text: &str, bytes: usize) -> String {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or_default();
    match head.rfind('\n') {
        Some(line_end) if line_end > end / 2 => head.get(..line_end).unwrap_or(head).to_owned(),
        _ => head.to_owned(),
    }
}
