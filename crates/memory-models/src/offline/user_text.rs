//! Reading what the user wrote: which sentences ask for work, which state how the user wants
//! work done (preferences), and which react to the result.
//!
//! A preference is a statement about how to work: a do or don't (`always`, `never`, `don't`,
//! `avoid`, `stop`, `make sure`), a stated liking (`I prefer`, `I'd rather`), a scoped rule
//! (`use X, not Y`; `from now on ...`), a correction of the agent (`No, use X`), or the same
//! asked as a question (`Can you always run clippy first?`). A sentence that asks for the task
//! itself (`Fix it so it prints an error instead`) is a request, never a preference, whatever
//! words it contains.

use super::text::{MAX_LINE_CHARS, capitalize, content_words, one_line, sentences};

/// How the user reacted to the agent's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reaction {
    /// Approval: `great`, `thanks`, `works now`.
    Positive,
    /// Disapproval: `still fails`, `that's wrong`, `revert it`.
    Negative,
    /// Giving up on the task: `never mind`, `forget it`, `let's stop here`.
    Abandon,
}

/// One user message, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UserMessage {
    /// Sentences asking for work or asking a question, in order.
    pub requests: Vec<String>,
    /// Preferences, phrased as rules.
    pub preferences: Vec<String>,
    /// Reactions before the first request (they concern the work so far).
    pub leading_reactions: Vec<Reaction>,
    /// Reactions anywhere in the message.
    pub reactions: Vec<Reaction>,
    /// The first request continues the current task (`also ...`, `still fails`, `try again`).
    pub follow_up: bool,
    /// The first request explicitly starts something new (`next, ...`, `another thing`).
    pub new_task: bool,
}

/// Words that open a sentence without changing what it says.
const LEAD_INS: [&str; 14] = [
    "please ",
    "also ",
    "and ",
    "but ",
    "oh ",
    "ok ",
    "okay ",
    "so ",
    "btw ",
    "actually ",
    "hey ",
    "hi ",
    "one more thing: ",
    "oh and ",
];

/// Openings that make the rest of the message a correction of the agent.
const CORRECTIONS: [&str; 11] = [
    "no ",
    "no,",
    "no.",
    "nope",
    "that's wrong",
    "that is wrong",
    "why did you",
    "why are you",
    "you shouldn't have",
    "you should not have",
    "no no",
];

/// Sentence openings that state a rule by themselves.
const STRONG_STARTS: [&str; 28] = [
    "always ",
    "never ",
    "don't ",
    "do not ",
    "dont ",
    "avoid ",
    "stop ",
    "make sure to ",
    "make sure you ",
    "remember to ",
    "from now on",
    "going forward",
    "in the future",
    "next time",
    "whenever ",
    "every time ",
    "prefer ",
    "no need to ",
    "you don't need to ",
    "you do not need to ",
    "you should ",
    "you shouldn't ",
    "you should not ",
    "you must ",
    "you mustn't ",
    "please don't ",
    "please never ",
    "please always ",
];

/// Sentence openings that state a rule only with a scope (`always`, `in this repo`) or a
/// contrast (`not X`, `instead of X`), or as a correction.
const WEAK_STARTS: [&str; 11] = [
    "use ",
    "keep ",
    "only ",
    "stick to ",
    "stick with ",
    "switch to ",
    "go with ",
    "leave ",
    "let me ",
    "we use ",
    "we don't use ",
];

/// Phrases anywhere in a sentence that state a liking or a standing rule.
const ANYWHERE: [&str; 19] = [
    "i prefer ",
    "i'd prefer ",
    "i would prefer ",
    "i'd rather ",
    "i would rather ",
    "i like it when ",
    "i like to ",
    "i don't like ",
    "i do not like ",
    "i hate it when ",
    "i want you to always ",
    "i want you to never ",
    "we always ",
    "we never ",
    "our convention",
    "the convention here",
    "in this repo we ",
    "leave it to me",
    "leave that to me",
];

/// What scopes a weak rule to more than the current task.
const SCOPES: [&str; 15] = [
    "always",
    "never",
    "from now on",
    "going forward",
    "in the future",
    "in this repo",
    "in this project",
    "for this project",
    "every ",
    "all ",
    "any ",
    "by default",
    "in general",
    "whenever",
    "here",
];

/// What contrasts a weak rule with an alternative.
const CONTRASTS: [&str; 6] = [
    " not ",
    ", not",
    "instead of",
    "rather than",
    " over ",
    "instead",
];

/// Phrases that look like rules but are not directives.
const NOT_RULES: [&str; 18] = [
    "don't worry",
    "don't know",
    "don't understand",
    "don't see",
    "don't think",
    "don't have",
    "don't bother",
    "never mind",
    "nevermind",
    "stop here",
    "leave it",
    "do not know",
    "should see",
    "should get",
    "should be able",
    "should now",
    "should work",
    "should be ",
];

/// Phrases of giving up.
const ABANDON: [&str; 16] = [
    "never mind",
    "nevermind",
    "nvm",
    "forget it",
    "forget about it",
    "let's stop",
    "lets stop",
    "stop here",
    "leave it for now",
    "let's leave it",
    "drop it",
    "don't bother",
    "give up",
    "not worth it",
    "scrap that",
    "let's not",
];

/// Phrases of disapproval.
const NEGATIVE: [&str; 15] = [
    "still fail",
    "still broken",
    "still doesn't",
    "still does not",
    "still not",
    "doesn't work",
    "didn't work",
    "does not work",
    "not working",
    "that's wrong",
    "that is wrong",
    "this is wrong",
    "not what i asked",
    "revert",
    "undo",
];

/// Openings of approval.
const POSITIVE: [&str; 21] = [
    "great",
    "thanks",
    "thank you",
    "perfect",
    "nice",
    "awesome",
    "looks good",
    "lgtm",
    "it works",
    "that works",
    "that worked",
    "works now",
    "good job",
    "cool",
    "excellent",
    "sounds good",
    "amazing",
    "wonderful",
    "ok",
    "okay",
    "yes",
];

/// Openings that make a request continue the current task.
const FOLLOW_UPS: [&str; 17] = [
    "also",
    "and ",
    "plus ",
    "additionally",
    "oh and",
    "but ",
    "still",
    "again",
    "try again",
    "it ",
    "that ",
    "this ",
    "now it",
    "wait",
    "hmm",
    "instead",
    "same ",
];

/// Openings that make a request start a new task.
const NEW_TASKS: [&str; 11] = [
    "next",
    "new task",
    "another thing",
    "another task",
    "separately",
    "unrelated",
    "different question",
    "moving on",
    "switching to",
    "one more task",
    "now let's",
];

/// Openings of a question that can carry a rule (`can you always ...?`).
const QUESTION_LEADS: [&str; 9] = [
    "can you ",
    "could you ",
    "would you ",
    "will you ",
    "can we ",
    "could we ",
    "would you mind ",
    "can you please ",
    "could you please ",
];

/// Openings of a request that carry no content, removed from titles.
const REQUEST_LEADS: [&str; 24] = [
    "next, ",
    "next ",
    "now, ",
    "now ",
    "please ",
    "can you ",
    "could you ",
    "would you ",
    "will you ",
    "can we ",
    "could we ",
    "i need you to ",
    "i want you to ",
    "i'd like you to ",
    "i would like you to ",
    "help me ",
    "let's ",
    "lets ",
    "hey, ",
    "hi, ",
    "hey ",
    "hi ",
    "ok, ",
    "so ",
];

/// Reads one user message (already stripped of injected blocks).
pub(crate) fn read_user_message(text: &str) -> UserMessage {
    let mut message = UserMessage::default();
    let lower_message = text.trim().to_ascii_lowercase();
    let correction = CORRECTIONS.iter().any(|c| lower_message.starts_with(c));
    let mut first_request_seen = false;
    for sentence in sentences(text) {
        let (reaction, rest) = split_reaction(&sentence);
        if let Some(reaction) = reaction {
            message.reactions.push(reaction);
            if !first_request_seen {
                message.leading_reactions.push(reaction);
            }
        }
        let Some(rest) = rest else {
            continue;
        };
        if let Some(rule) = preference(&rest, correction) {
            if !message.preferences.contains(&rule) {
                message.preferences.push(rule);
            }
            continue;
        }
        if reaction.is_some() && !has_content(&rest) {
            continue;
        }
        if is_request(&rest) {
            if !first_request_seen {
                let raw = rest.trim().to_ascii_lowercase();
                let lower = ["please ", "ok, ", "okay, ", "so "]
                    .iter()
                    .fold(raw.as_str(), |text, lead| {
                        text.strip_prefix(lead).unwrap_or(text)
                    })
                    .to_owned();
                message.follow_up = FOLLOW_UPS.iter().any(|cue| lower.starts_with(cue))
                    || correction
                    || reaction == Some(Reaction::Negative);
                message.new_task = NEW_TASKS.iter().any(|cue| lower.starts_with(cue));
                first_request_seen = true;
            }
            message.requests.push(rest);
        }
    }
    message
}

/// A reaction at the start of a sentence, and what follows it (`Great, now add a test` is a
/// positive reaction and `now add a test`). `None` for the rest when nothing follows.
fn split_reaction(sentence: &str) -> (Option<Reaction>, Option<String>) {
    let lower = sentence.to_ascii_lowercase();
    if ABANDON.iter().any(|phrase| lower.contains(phrase)) {
        return (Some(Reaction::Abandon), None);
    }
    if NEGATIVE.iter().any(|phrase| lower.contains(phrase)) {
        return (Some(Reaction::Negative), Some(sentence.to_owned()));
    }
    let body = strip_leads(&lower, &[]);
    let Some(word) = POSITIVE.iter().find(|word| {
        body.starts_with(**word)
            && body.get(word.len()..).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with([',', '.', '!', ' ', ';', ':'])
            })
    }) else {
        return (None, Some(sentence.to_owned()));
    };
    let cut = lower.len() - body.len() + word.len();
    let rest = sentence
        .get(cut..)
        .unwrap_or("")
        .trim_start_matches([',', '.', '!', ';', ':', ' '])
        .trim();
    // "Great work on the parser" is praise; "Great, now add a test" is praise and a request.
    let words = rest.split_whitespace().count();
    let rest = (words >= 2).then(|| rest.to_owned());
    (Some(Reaction::Positive), rest)
}

/// The sentence without leading filler (`please`, `also`, ...), lowercase in, lowercase out.
fn strip_leads<'a>(lower: &'a str, extra: &[&str]) -> &'a str {
    let mut body = lower.trim();
    loop {
        let lead = LEAD_INS
            .iter()
            .chain(extra.iter())
            .find(|lead| body.starts_with(**lead));
        match lead {
            Some(lead) => body = body.get(lead.len()..).unwrap_or("").trim_start(),
            None => return body,
        }
    }
}

/// The sentence as a rule when it states how the user wants work done.
pub(crate) fn preference(sentence: &str, correction: bool) -> Option<String> {
    let sentence = sentence.trim();
    if sentence.chars().count() < 8 {
        return None;
    }
    let lower = sentence.to_ascii_lowercase();
    if NOT_RULES.iter().any(|phrase| lower.contains(phrase)) {
        return None;
    }
    let question = lower.ends_with('?');
    let corrections: Vec<&str> = vec!["no, ", "no. ", "nope, ", "no "];
    let mut body = strip_leads(&lower, &corrections);
    if question {
        // Only a question that asks for a standing rule is one: `can you always ...?`.
        let lead = QUESTION_LEADS
            .iter()
            .filter(|lead| body.starts_with(**lead))
            .max_by_key(|lead| lead.len());
        if let Some(rule) = keep_asking(&lower, sentence) {
            return Some(rule);
        }
        body = strip_leads(body.get(lead?.len()..).unwrap_or(""), &[]);
    }
    let strong = STRONG_STARTS.iter().any(|start| body.starts_with(start));
    let scoped = SCOPES.iter().any(|scope| body.contains(scope));
    let contrasted = CONTRASTS.iter().any(|contrast| body.contains(contrast));
    let weak = WEAK_STARTS.iter().any(|start| body.starts_with(start))
        && (scoped || contrasted || correction);
    let liking = ANYWHERE.iter().any(|phrase| lower.contains(phrase));
    if !(strong || weak || liking) || (question && !(strong || scoped || contrasted)) {
        return None;
    }
    // Keep the user's casing: cut as many bytes from the original as from the lowercase copy.
    let cut = lower.len() - body.len();
    let original = sentence.get(cut..).unwrap_or(sentence);
    let mut rule = original
        .trim_end_matches(['?', '.', '!', ' '])
        .trim_end_matches(" please")
        .trim_end_matches(", please")
        .to_owned();
    for (from, to) in [("i prefer ", "Prefer "), ("i'd prefer ", "Prefer ")] {
        if rule.to_ascii_lowercase().starts_with(from) {
            rule = format!("{to}{}", rule.get(from.len()..).unwrap_or(""));
        }
    }
    if rule.to_ascii_lowercase().starts_with("please ") {
        rule = rule.get(7..).unwrap_or("").to_owned();
    }
    let mut rule = one_line(&capitalize(rule.trim()), MAX_LINE_CHARS);
    if !rule.ends_with(['.', '…']) {
        rule.push('.');
    }
    Some(rule)
}

/// `Why do you keep adding X?` and `why are you always X?` ask the agent to stop doing X.
fn keep_asking(lower: &str, sentence: &str) -> Option<String> {
    let lead = [
        "why do you keep ",
        "why are you always ",
        "why do you always ",
    ]
    .into_iter()
    .find(|lead| lower.starts_with(lead))?;
    let rest = sentence
        .get(lead.len()..)?
        .trim_end_matches(['?', ' '])
        .trim();
    (!rest.is_empty()).then(|| one_line(&format!("Stop {rest}."), MAX_LINE_CHARS))
}

/// True for a sentence that asks for work or asks a question with some content.
fn is_request(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    let chatter = [
        "are you there",
        "how are you",
        "who are you",
        "what's up",
        "you there",
        "wrong window",
        "good morning",
        "good night",
        "hello",
        "hi there",
    ];
    if chatter.iter().any(|c| lower.contains(c)) {
        return false;
    }
    has_content(sentence)
}

fn has_content(text: &str) -> bool {
    content_words(text).len() >= 2
}

/// A title for a task from its request sentences: the first one that says something (at least
/// three content words), without its polite opening, capped at `max_chars`.
pub(crate) fn title_from_requests(requests: &[String], max_chars: usize) -> Option<String> {
    let chosen = requests
        .iter()
        .find(|r| content_words(r).len() >= 3)
        .or_else(|| requests.first())?;
    let lower = chosen.to_ascii_lowercase();
    let mut body = lower.as_str();
    loop {
        match REQUEST_LEADS.iter().find(|lead| body.starts_with(**lead)) {
            Some(lead) => body = body.get(lead.len()..).unwrap_or("").trim_start(),
            None => break,
        }
    }
    let cut = lower.len() - body.len();
    let title = chosen
        .get(cut..)
        .unwrap_or(chosen)
        .trim_end_matches(['.', '!', ' '])
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
    let title = one_line(&title, max_chars);
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn prefs(text: &str) -> Vec<String> {
        read_user_message(text).preferences
    }

    #[test]
    fn rules_come_from_how_to_work_not_from_the_task() {
        assert_eq!(
            prefs(
                "Make the widget tests pass. Please use cargo nextest, not cargo test. Never edit generated files."
            ),
            [
                "Use cargo nextest, not cargo test.",
                "Never edit generated files."
            ]
        );
        assert!(prefs("Fix it so it prints a clear error instead.").is_empty());
        assert!(prefs("The parser returns None instead of an error on empty input.").is_empty());
        assert!(prefs("The test never ran, it seems.").is_empty());
        assert!(prefs("Why does it always fail?").is_empty());
        assert_eq!(
            prefs(
                "Don't run the real deploy, I'll do it. Please prefer the `_URL` suffix for every env var that holds a URL."
            ),
            [
                "Don't run the real deploy, I'll do it.",
                "Prefer the `_URL` suffix for every env var that holds a URL."
            ]
        );
    }

    #[test]
    fn questions_and_corrections_count() {
        assert_eq!(
            prefs("Can you always run clippy before you say it's done?"),
            ["Always run clippy before you say it's done."]
        );
        assert_eq!(prefs("No, use pnpm."), ["Use pnpm."]);
        assert_eq!(
            prefs("Why do you keep adding comments to every line?"),
            ["Stop adding comments to every line."]
        );
        assert_eq!(
            prefs("I'd rather you didn't touch the lockfile."),
            ["I'd rather you didn't touch the lockfile."]
        );
        assert!(prefs("Make sure the migration runs on staging.").is_empty());
        assert!(prefs("You should see an error when the file is empty.").is_empty());
    }

    #[test]
    fn reactions_and_requests_are_told_apart() {
        let message = read_user_message("Great. From now on, always put new variants at the end.");
        assert_eq!(message.leading_reactions, [Reaction::Positive]);
        assert!(message.requests.is_empty());
        assert_eq!(message.preferences.len(), 1);
        let next = read_user_message("Thanks! Next, bump the version in Cargo.toml to 1.4.0.");
        assert_eq!(next.leading_reactions, [Reaction::Positive]);
        assert!(next.new_task);
        assert_eq!(
            next.requests,
            ["Next, bump the version in Cargo.toml to 1.4.0."]
        );
        let more = read_user_message("Also add a test for the empty case.");
        assert!(more.follow_up);
        assert_eq!(
            read_user_message("nvm, wrong window. thanks!").reactions[0],
            Reaction::Abandon
        );
        assert!(read_user_message("hey, are you there?").requests.is_empty());
    }

    #[test]
    fn titles_drop_polite_openings() {
        let title = |r: &[&str]| {
            title_from_requests(&r.iter().map(|s| s.to_string()).collect::<Vec<_>>(), 100)
        };
        assert_eq!(
            title(&["Can you please fix the flaky scheduler test?"]).as_deref(),
            Some("Fix the flaky scheduler test?")
        );
        assert_eq!(
            title(&["Hi.", "The nightly import crashes with a missing column."]).as_deref(),
            Some("The nightly import crashes with a missing column")
        );
    }

    proptest! {
        #[test]
        fn reading_any_message_never_panics(text in "(\\PC|always |never |please |great|\\?|\\.|\n| ){0,80}") {
            let message = read_user_message(&text);
            for rule in &message.preferences {
                prop_assert!(rule.chars().count() <= MAX_LINE_CHARS + 1);
                prop_assert!(rule.ends_with(['.', '…']));
            }
            let _ = title_from_requests(&message.requests, 100);
        }
    }
}
