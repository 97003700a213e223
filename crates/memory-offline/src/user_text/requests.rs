//! What a task's requests say as a whole: its title, and whether it asks for information
//! rather than a change.

use super::super::text::{capitalize, content_words, one_line, without_final_stop};
use super::phrases::{CHANGE_VERBS, IMPERATIVES, INFO_CUES, REQUEST_LEADS};
use super::starts_with_imperative;

/// A title for a task from its request sentences: the first one that says something (at least
/// three content words), without its polite opening, capped at `max_chars`.
pub(crate) fn title_from_requests(requests: &[String], max_chars: usize) -> Option<String> {
    let position = requests
        .iter()
        .position(|r| content_words(r).len() >= 3)
        .unwrap_or(0);
    // A symptom stated first (`Uploads time out on slow connections.`) and asked about right
    // after with content of its own (`Raise the upload timeout to 120s.`): the ask is the title.
    let position = match (requests.get(position), requests.get(position + 1)) {
        (Some(symptom), Some(ask))
            if !is_ask(symptom)
                && is_ask(ask)
                && !points_back(ask)
                && content_words(ask).len() >= 3 =>
        {
            position + 1
        }
        _ => position,
    };
    let first = requests.get(position)?;
    // A problem described first and then asked about by reference (`The navbar scrolls away.
    // Make it stick to the top.`) needs both sentences to say what was asked.
    let joined;
    let chosen = match requests.get(position + 1) {
        Some(next) if !starts_with_imperative(&first.to_ascii_lowercase()) && refers_back(next) => {
            let next = next.trim();
            let mut chars = next.chars();
            let next = match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect::<String>(),
                None => String::new(),
            };
            joined = format!("{}; {next}", without_final_stop(first.trim()));
            &joined
        }
        _ => first,
    };
    let lower = chosen.to_ascii_lowercase();
    let body = without_request_leads(&lower);
    let cut = lower.len() - body.len();
    let title = without_final_stop(chosen.get(cut..).unwrap_or(chosen))
        .trim_end_matches(" please")
        .trim_end_matches(", please")
        .trim();
    // The user's casing stays (`pnpm build fails` is not `Pnpm build fails`), except where a
    // polite opening was cut off.
    let title = if cut > 0 {
        capitalize(title)
    } else {
        title.to_owned()
    };
    let title = one_line(without_markup(&title), max_chars);
    (!title.is_empty()).then_some(title)
}

/// True for a sentence that points back at what was said before it (`fix it`, `make this work`).
fn points_back(sentence: &str) -> bool {
    sentence
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| matches!(word, "it" | "this" | "that" | "them" | "these" | "those"))
}

/// True for an English sentence that asks for something: an instruction or a polite opening
/// (`please`, `can you`).
fn is_ask(sentence: &str) -> bool {
    let lower = sentence.trim().to_ascii_lowercase();
    let body = without_request_leads(&lower);
    let first = first_word(body);
    body.len() < lower.len() || IMPERATIVES.contains(&first) || CHANGE_VERBS.contains(&first)
}

/// The lowercase text without its polite openings (`can you please`, `now`, `also`).
fn without_request_leads(lower: &str) -> &str {
    let mut body = lower.trim_start();
    while let Some(lead) = REQUEST_LEADS.iter().find(|lead| body.starts_with(**lead)) {
        body = body.get(lead.len()..).unwrap_or("").trim_start();
    }
    body
}

/// The text's first word (letters and digits).
fn first_word(text: &str) -> &str {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("")
}

/// `text` without the Markdown that opens a line (`# `, `> `, `- `, `**`): a title is words.
fn without_markup(text: &str) -> &str {
    text.trim_start_matches(|ch: char| {
        matches!(ch, '#' | '>' | '*' | '-' | '+' | '_' | '=' | '~' | '|') || ch.is_whitespace()
    })
}

/// True when a task's requests ask for information (a question, `tell me`, `which ...`) and
/// none asks for a change (`fix`, `add`, ...): its outcome is whether the user got the answer.
pub(crate) fn asks_for_information(requests: &[String]) -> bool {
    let mut informative = false;
    for request in requests {
        let lower = request.to_ascii_lowercase();
        if CHANGE_VERBS.contains(&first_word(without_request_leads(&lower))) {
            return false;
        }
        informative |=
            lower.trim_end().ends_with('?') || INFO_CUES.iter().any(|cue| lower.contains(cue));
    }
    informative
}

/// True for an instruction that points back at what was said before it (`Make it stick`,
/// `Fix this so ...`) and adds something of its own.
fn refers_back(request: &str) -> bool {
    let lower = request.trim().to_ascii_lowercase();
    let mut words = lower.split_whitespace();
    let (Some(verb), Some(object)) = (words.next(), words.next()) else {
        return false;
    };
    (IMPERATIVES.contains(&verb) || CHANGE_VERBS.contains(&verb))
        && matches!(object, "it" | "this" | "that" | "them")
        && content_words(request).len() >= 3
}
