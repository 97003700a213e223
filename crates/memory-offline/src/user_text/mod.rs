//! Reading what the user wrote: which sentences ask for work, which state how the user wants
//! work done (preferences), and which react to the result.
//!
//! A preference is a statement about how to work: a do or don't (`always`, `never`, `don't`,
//! `avoid`, `stop`, `make sure`), a stated liking (`I prefer`, `I'd rather`), a scoped rule
//! (`use X, not Y`; `from now on ...`), a correction of the agent (`No, use X`), or the same
//! asked as a question (`Can you always run clippy first?`). A sentence that asks for the task
//! itself (`Fix it so it prints an error instead`) is a request, never a preference, whatever
//! words it contains.

mod phrases;
mod requests;

use self::phrases::{
    ABANDON, ANYWHERE, CJK_RULE_ANYWHERE, CJK_RULE_STARTS, CONTRASTS, CORRECTIONS, FACT_LEADS,
    HARD_FOLLOW_UPS, IMPERATIVES, LEAD_INS, MANNER, NEGATIVE, NEW_TASKS, NOT_RULES, ONE_OFF,
    OTHER_CONTRASTS, OTHER_FAILURE_STEMS, OTHER_RULE_WORDS, POSITIVE, POSITIVE_ANYWHERE,
    QUESTION_LEADS, SCOPE_LEADS, SCOPES, SOFT_FOLLOW_UPS, STRONG_STARTS, UNDO, WEAK_STARTS,
};
pub(crate) use self::requests::{asks_for_information, title_from_requests};
use super::text::{
    MAX_LINE_CHARS, capitalize, content_words, ending_a_sentence, one_line, sentences, word_count,
};

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

/// How a message's first request relates to the task before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum FollowUp {
    /// Nothing says it continues the task.
    #[default]
    No,
    /// `also ...`, `and ...`: it continues the task if it is about the same thing.
    Soft,
    /// A correction, a complaint, `still fails`, `try again`, `fix it`: it continues the task.
    Hard,
}

/// One user message, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UserMessage {
    /// Sentences asking for work or asking a question, in order.
    pub requests: Vec<String>,
    /// Preferences, phrased as rules.
    pub preferences: Vec<String>,
    /// Facts the user asked to be remembered, without the lead (`Remember:`).
    pub facts: Vec<String>,
    /// Reactions before the first request (they concern the work so far).
    pub leading_reactions: Vec<Reaction>,
    /// Reactions anywhere in the message.
    pub reactions: Vec<Reaction>,
    /// Whether the first request continues the current task.
    pub follow_up: FollowUp,
    /// The first request explicitly starts something new (`next, ...`, `another thing`).
    pub new_task: bool,
}

/// Reads one user message (already stripped of injected blocks).
pub(crate) fn read_user_message(text: &str) -> UserMessage {
    let mut message = UserMessage::default();
    let lower_message = text.trim().to_lowercase();
    let correction = CORRECTIONS.iter().any(|c| lower_message.starts_with(c));
    let mut first_request_seen = false;
    // Giving up with nothing asked after it (`That's a bigger change than I hoped. Let's leave
    // it for now.`) is about the task at hand, whatever came before it in the message.
    let mut gave_up_last = false;
    // So is giving up after the message's first request (`ugh, 47 files. forget it, put it
    // back.`): the first request was a remark about the work at hand.
    let mut gave_up_after_asking = false;
    for sentence in sentences(text) {
        let (reaction, rest) = split_reaction(&sentence);
        if let Some(reaction) = reaction {
            gave_up_last |= reaction == Reaction::Abandon;
            gave_up_after_asking |= reaction == Reaction::Abandon && first_request_seen;
            message.reactions.push(reaction);
            if !first_request_seen {
                message.leading_reactions.push(reaction);
            }
        }
        let Some(rest) = rest else {
            continue;
        };
        if let Some(fact) = stated_fact(&rest) {
            if !message.facts.contains(&fact) {
                message.facts.push(fact);
            }
            continue;
        }
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
                // Undoing the work after giving up on it (`forget it, put it back`) is still
                // the same task.
                let undoes = message
                    .leading_reactions
                    .iter()
                    .any(|r| matches!(r, Reaction::Abandon | Reaction::Negative))
                    && UNDO.iter().any(|word| lower.contains(word));
                // A complaint before the request makes it a correction; giving up does not
                // (`never mind that, just add a note` is new work), unless it undoes.
                let complained = message.leading_reactions.contains(&Reaction::Negative)
                    || reaction == Some(Reaction::Negative);
                message.follow_up = if HARD_FOLLOW_UPS.iter().any(|cue| lower.starts_with(cue))
                    || correction
                    || undoes
                    || complained
                    || refers_back_only(&lower)
                {
                    FollowUp::Hard
                } else if SOFT_FOLLOW_UPS.iter().any(|cue| lower.starts_with(cue)) {
                    // `Also update the changelog for it` points back at the work just done.
                    let points_back = lower
                        .split(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
                        .any(|word| matches!(word, "it" | "this" | "that" | "them"));
                    if points_back {
                        FollowUp::Hard
                    } else {
                        FollowUp::Soft
                    }
                } else {
                    FollowUp::No
                };
                message.new_task = NEW_TASKS.iter().any(|cue| lower.starts_with(cue));
                first_request_seen = true;
            }
            message.requests.push(rest);
            gave_up_last = false;
        }
    }
    if (gave_up_last || gave_up_after_asking) && !message.new_task {
        message.follow_up = FollowUp::Hard;
    }
    message
}

/// The fact a sentence asks to be remembered (`Remember: the staging database listens on port
/// 6543.`, `FYI, the CI runners have 4 GB`), without its lead; `Remember to ...` is a rule.
fn stated_fact(sentence: &str) -> Option<String> {
    let lower = sentence.trim().to_ascii_lowercase();
    let lead = FACT_LEADS.iter().find(|lead| lower.starts_with(**lead))?;
    let fact = sentence
        .trim()
        .get(lead.len()..)?
        .trim_start_matches([',', ':', ' '])
        .trim();
    (content_words(fact).len() >= 2)
        .then(|| ending_a_sentence(one_line(&capitalize(fact), MAX_LINE_CHARS)))
}

/// A reaction at the start of a sentence, and what follows it (`Great, now add a test` is a
/// positive reaction and `now add a test`). `None` for the rest when nothing follows.
fn split_reaction(sentence: &str) -> (Option<Reaction>, Option<String>) {
    let lower = sentence.to_lowercase();
    if ABANDON.iter().any(|phrase| lower.contains(phrase)) {
        return (Some(Reaction::Abandon), None);
    }
    if NEGATIVE.iter().any(|phrase| lower.contains(phrase)) {
        return (Some(Reaction::Negative), Some(sentence.to_owned()));
    }
    // Emoji and punctuation before the word (`👍 thanks`) do not change the reaction.
    let opening = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
    let only_symbols = opening.is_empty() && !lower.trim().is_empty();
    if only_symbols && lower.contains(['👍', '🙏', '✅', '🎉', '❤']) {
        return (Some(Reaction::Positive), None);
    }
    let body = strip_leads(opening, &[]);
    let approves_within = || {
        POSITIVE_ANYWHERE
            .iter()
            .any(|phrase| lower.contains(phrase))
    };
    let Some(word) = POSITIVE.iter().find(|word| {
        body.starts_with(**word)
            && body.get(word.len()..).is_some_and(|rest| {
                // Words of scripts without spaces end where they end (`감사합니다`).
                rest.is_empty()
                    || !word.is_ascii()
                    || rest.starts_with([',', '.', '!', ' ', ';', ':', '，', '。', '！', '、'])
            })
    }) else {
        if approves_within() {
            return (Some(Reaction::Positive), None);
        }
        return (None, Some(sentence.to_owned()));
    };
    let cut = lower.len() - body.len() + word.len();
    let rest = sentence
        .get(cut..)
        .unwrap_or("")
        .trim_start_matches([
            ',', '.', '!', ';', ':', ' ', '—', '–', '-', '，', '。', '！', '、',
        ])
        .trim();
    // "Great work on the parser" is praise; "Great, now add a test" is praise and a request.
    let words = word_count(rest);
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
    let lowered = sentence.to_lowercase();
    if ONE_OFF.iter().any(|phrase| lowered.contains(phrase)) {
        return None;
    }
    if correction
        && OTHER_CONTRASTS
            .iter()
            .any(|phrase| lowered.contains(phrase))
    {
        return Some(sentence_as_rule(sentence));
    }
    if let Some(rule) = cjk_preference(sentence) {
        return Some(rule);
    }
    if let Some(rule) = other_language_preference(sentence) {
        return Some(rule);
    }
    let lower = sentence.to_ascii_lowercase();
    if NOT_RULES.iter().any(|phrase| lower.contains(phrase)) {
        return None;
    }
    english_preference(sentence, &lower, correction)
        .or_else(|| rule_in_a_later_clause(sentence, &lower))
        .or_else(|| always_doing(sentence, &lower))
}

/// The English sentence (and its ASCII-lowercase copy) as a rule when it opens with one, states
/// a liking, or asks for one.
fn english_preference(sentence: &str, lower: &str, correction: bool) -> Option<String> {
    let question = lower.ends_with('?');
    let corrections: Vec<&str> = vec!["no, ", "no. ", "nope, ", "no "];
    let mut body = strip_leads(lower, &corrections);
    if question {
        // Only a question that asks for a standing rule is one: `can you always ...?`.
        let lead = QUESTION_LEADS
            .iter()
            .filter(|lead| body.starts_with(**lead))
            .max_by_key(|lead| lead.len());
        if let Some(rule) = keep_asking(lower, sentence) {
            return Some(rule);
        }
        body = strip_leads(body.get(lead?.len()..).unwrap_or(""), &[]);
    }
    // A scoped instruction (`in this repo, use X`) and a rule stated as a condition (`if
    // something is unused, delete it`) stand for more than the task at hand.
    let after_scope = SCOPE_LEADS.iter().find_map(|scope| {
        body.strip_prefix(scope)
            .filter(|rest| rest.starts_with([',', ' ']))
            .map(|rest| rest.trim_start_matches([',', ' ']))
    });
    let scoped_instruction = after_scope.is_some_and(starts_with_imperative);
    let conditional = (body.starts_with("if ") || body.starts_with("when "))
        && body
            .split_once(", ")
            .is_some_and(|(_, then)| starts_with_imperative(then));
    // `No emojis in commit messages` rules something out; `No tests were run` reports.
    let ruled_out = strip_leads(lower, &[])
        .strip_prefix("no ")
        .is_some_and(|rest| {
            !rest.starts_with("need")
                && ![
                    " is ", " are ", " was ", " were ", " did ", " does ", " has ", " have ",
                    " will ",
                ]
                .iter()
                .any(|verb| format!(" {rest}").contains(verb))
        });
    if ruled_out {
        // The `no` is the rule itself, not a correction to cut off.
        body = strip_leads(lower, &[]);
    }
    let strong = STRONG_STARTS.iter().any(|start| body.starts_with(start))
        || scoped_instruction
        || conditional
        || ruled_out;
    let scoped = SCOPES.iter().any(|scope| body.contains(scope));
    let contrasted = CONTRASTS.iter().any(|contrast| body.contains(contrast));
    // `Keep it simple` is a way of working, not a step of the task.
    let manner = body.starts_with("keep ")
        && body
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| MANNER.contains(&word));
    let weak = WEAK_STARTS.iter().any(|start| body.starts_with(start))
        && (scoped || contrasted || correction || manner);
    // A wish about the agent's habits (`I'd like you to run the linter before every commit`)
    // is a rule when it is scoped beyond the task.
    let wish = ["i'd like you to ", "i would like you to ", "i want you to "]
        .iter()
        .any(|lead| body.starts_with(lead))
        && scoped;
    let liking = ANYWHERE.iter().any(|phrase| lower.contains(phrase)) || wish;
    let asked_for_a_rule = !question || strong || scoped || contrasted || manner;
    ((strong || weak || liking) && asked_for_a_rule).then(|| as_rule(sentence, lower, body))
}

/// `sentence` from where its lowercase copy `lower` has `body` left, as a rule: the user's
/// casing, no closing `please`, `I prefer` as `Prefer`, a capital and a closing period.
fn as_rule(sentence: &str, lower: &str, body: &str) -> String {
    // Cut as many bytes from the original as from the lowercase copy.
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
    ending_a_sentence(one_line(&capitalize(rule.trim()), MAX_LINE_CHARS))
}

/// Where a clause that reports, explains or asks gives way to a rule (`It's a 401, but please
/// never write tokens into files`; `a standing rule: always run go vet`).
const CLAUSE_BREAKS: [&str; 8] = [": ", "; ", " — ", " – ", " - ", ", but ", ", and ", ", so "];

/// Clause openings that state a standing rule by themselves.
const CLAUSE_RULE_STARTS: [&str; 7] = [
    "always ",
    "never ",
    "from now on",
    "going forward",
    "in the future",
    "whenever ",
    "every time ",
];

/// A later clause of the sentence that opens with a standing rule, as the rule.
fn rule_in_a_later_clause(sentence: &str, lower: &str) -> Option<String> {
    CLAUSE_BREAKS
        .iter()
        .filter_map(|mark| lower.find(mark).map(|at| at + mark.len()))
        .filter(|&start| {
            let clause = strip_leads(lower.get(start..).unwrap_or(""), &[]);
            CLAUSE_RULE_STARTS
                .iter()
                .any(|rule| clause.starts_with(rule))
        })
        .min()
        .and_then(|start| {
            let lower_clause = lower.get(start..)?;
            let body = strip_leads(lower_clause, &[]);
            Some(as_rule(sentence.get(start..)?, lower_clause, body))
        })
}

/// A sentence with `always` or `never` before an instruction verb, wherever it stands (`For
/// indexes on existing tables always use CREATE INDEX CONCURRENTLY`). After a subject (`it
/// never runs`, `you always use the wrong flag`) it reports, it does not rule.
fn always_doing(sentence: &str, lower: &str) -> Option<String> {
    if lower.ends_with('?') {
        return None;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
        .filter(|word| !word.is_empty())
        .collect();
    let rules = words.windows(3).any(|w| {
        matches!(w[1], "always" | "never")
            && IMPERATIVES.contains(&w[2])
            && !matches!(
                w[0],
                "it" | "this" | "that" | "you" | "he" | "she" | "they" | "which" | "who" | "i"
            )
    });
    rules.then(|| as_rule(sentence, lower, lower))
}

/// A rule stated in a language other than English with a Latin or Cyrillic script: a rule word
/// (`immer`, `jamais`, `siempre`, `никогда`, `prefiero`) and no report of a failure.
fn other_language_preference(sentence: &str) -> Option<String> {
    let lower = sentence.to_lowercase();
    let spaced: String = lower
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let spaced = format!(" {spaced} ");
    let rule = OTHER_RULE_WORDS
        .iter()
        .any(|word| spaced.contains(&format!(" {word} ")))
        && !OTHER_FAILURE_STEMS.iter().any(|stem| lower.contains(stem));
    rule.then(|| sentence_as_rule(sentence))
}

/// The whole sentence as a rule: one line, a capital, a closing period.
fn sentence_as_rule(sentence: &str) -> String {
    ending_a_sentence(one_line(
        &capitalize(
            sentence
                .trim()
                .trim_end_matches(['?', '.', '!', ' ', '。', '！', '？']),
        ),
        MAX_LINE_CHARS,
    ))
}

/// A rule stated in Chinese, Japanese or Korean: a sentence in those scripts that opens with a
/// rule word (after a polite 请) or holds a liking phrase. Questions are not rules.
fn cjk_preference(sentence: &str) -> Option<String> {
    if !sentence.chars().any(memory_sanitize::is_cjk) && !sentence.chars().any(is_hangul) {
        return None;
    }
    // A rule may open any clause (`这个脚本会报错，请不要引入新的依赖`); it runs to the end.
    let clause_start = std::iter::once(0)
        .chain(
            sentence
                .match_indices(['，', ',', '；', ';', '：', ':', '、'])
                .map(|(at, mark)| at + mark.len()),
        )
        .find(|&at| {
            let clause = sentence
                .get(at..)
                .unwrap_or_default()
                .trim_start_matches(['请', ' ']);
            CJK_RULE_STARTS
                .iter()
                .any(|start| clause.starts_with(start))
        });
    let sentence = sentence
        .get(clause_start.unwrap_or(0)..)
        .unwrap_or(sentence);
    let body = sentence.trim_start_matches(['请', ' ']);
    // A question is a rule only when it asks for one every time (`...마다 ... 줄 수 있을까요?`).
    let question = sentence.ends_with(['?', '？', '吗'])
        && !["마다", "항상", "每次", "总是", "いつも", "毎回"]
            .iter()
            .any(|word| sentence.contains(word));
    let rule = !question
        && (CJK_RULE_STARTS.iter().any(|start| body.starts_with(start))
            || CJK_RULE_ANYWHERE
                .iter()
                .any(|phrase| sentence.contains(phrase)));
    if !rule {
        return None;
    }
    Some(ending_a_sentence(one_line(
        sentence.trim_end_matches(['。', '.', '！', '!', ' ']),
        MAX_LINE_CHARS,
    )))
}

fn is_hangul(ch: char) -> bool {
    matches!(ch, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
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

/// True when the text opens with an instruction verb (after `just`, `please`, `then`).
pub(super) fn starts_with_imperative(text: &str) -> bool {
    let text = ["just ", "please ", "then ", "simply "]
        .iter()
        .fold(text.trim(), |text, lead| {
            text.strip_prefix(lead).unwrap_or(text)
        });
    let first = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .next()
        .unwrap_or("");
    IMPERATIVES.contains(&first)
}

/// Two content words, or, in a script without them (Chinese, Korean, Cyrillic), four letters.
fn has_content(text: &str) -> bool {
    content_words(text).len() >= 2
        || text
            .chars()
            .filter(|c| c.is_alphabetic() && !c.is_ascii())
            .count()
            >= 4
}

/// True for an instruction about what was just done (`amend it`, `test this on staging`).
fn refers_back_only(lower: &str) -> bool {
    let mut words = lower.split(|c: char| c.is_whitespace() || c == '.' || c == '!');
    let (Some(verb), Some(object)) = (words.next(), words.next()) else {
        return false;
    };
    verb.chars().all(|c| c.is_ascii_alphabetic())
        && matches!(object, "it" | "this" | "that" | "them")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::SENTENCE_ENDS;
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
    fn rules_stated_in_chinese_japanese_and_korean_count() {
        assert_eq!(
            prefs("用户偏好使用制表符缩进。"),
            ["用户偏好使用制表符缩进."]
        );
        assert_eq!(
            prefs("修复这个测试。以后都用制表符缩进！"),
            ["以后都用制表符缩进."]
        );
        assert_eq!(prefs("请不要修改生成的文件。"), ["请不要修改生成的文件."]);
        assert_eq!(
            prefs("常に日本語で答えてください。"),
            ["常に日本語で答えてください."]
        );
        assert_eq!(
            prefs("항상 테스트를 먼저 실행하세요."),
            ["항상 테스트를 먼저 실행하세요."]
        );
        assert!(prefs("这个函数为什么失败？").is_empty());
        assert!(prefs("我不要这个功能，删掉它。").is_empty());
        assert!(prefs("以后会用到这个函数吗？").is_empty());
    }

    #[test]
    fn rules_in_other_languages_habits_and_later_clauses_count() {
        assert_eq!(
            prefs("Bitte schreib Commit-Nachrichten immer auf Englisch."),
            ["Bitte schreib Commit-Nachrichten immer auf Englisch."]
        );
        assert_eq!(
            prefs("Prefiero que no añadas dependencias nuevas."),
            ["Prefiero que no añadas dependencias nuevas."]
        );
        assert_eq!(
            prefs("Никогда не коммить в main напрямую."),
            ["Никогда не коммить в main напрямую."]
        );
        assert_eq!(
            prefs("Usa sempre gli spazi, non i tab."),
            ["Usa sempre gli spazi, non i tab."]
        );
        // A report that something always fails sets no rule, in any language.
        assert!(prefs("Die Tests schlagen immer fehl.").is_empty());
        assert!(prefs("Le build échoue toujours sur la CI.").is_empty());
        assert_eq!(
            prefs("I usually squash before merging."),
            ["I usually squash before merging."]
        );
        assert_eq!(
            prefs("The CI is slow today, but please never skip the integration tests."),
            ["Never skip the integration tests."]
        );
        assert_eq!(
            prefs("For new endpoints always add an OpenAPI entry."),
            ["For new endpoints always add an OpenAPI entry."]
        );
        assert!(prefs("It always runs the migrations twice.").is_empty());
        assert!(prefs("You never use the cache flag.").is_empty());
        assert_eq!(
            prefs("Could you keep the diff small?"),
            ["Keep the diff small."]
        );
        assert!(prefs("Could you keep the old endpoint working?").is_empty());
        assert_eq!(
            prefs("API를 바꿀 때마다 문서도 업데이트해 줄 수 있을까요?").len(),
            1
        );
        assert_eq!(
            prefs("设置项名称统一用 kebab-case。"),
            ["设置项名称统一用 kebab-case."]
        );
    }

    #[test]
    fn one_off_instructions_are_not_rules_and_corrections_habits_and_clauses_are() {
        assert!(prefs("Don't touch the changelog for this one.").is_empty());
        assert!(prefs("Use the staging bucket for now, not prod.").is_empty());
        assert!(prefs("这次不要改测试。").is_empty());
        assert_eq!(
            read_user_message("Nee, gebruik tabs in plaats van spaties.").preferences,
            ["Nee, gebruik tabs in plaats van spaties."]
        );
        // The same contrast outside a correction is part of the task.
        assert!(prefs("Gebruik tabs in plaats van spaties in dit bestand.").is_empty());
        assert_eq!(
            prefs("Suelo escribir los tests primero."),
            ["Suelo escribir los tests primero."]
        );
        assert_eq!(
            prefs("这个接口很慢，请不要加新的依赖。"),
            ["请不要加新的依赖."]
        );
    }

    #[test]
    fn facts_to_remember_are_kept_apart_from_rules_and_requests() {
        let message = read_user_message(
            "Remember: the staging database listens on port 6543. Port the ledger module to the new API.",
        );
        assert_eq!(
            message.facts,
            ["The staging database listens on port 6543."]
        );
        assert_eq!(message.requests, ["Port the ledger module to the new API."]);
        assert!(message.preferences.is_empty());
        let rule = read_user_message("Remember to run the migrations check before you push.");
        assert!(rule.facts.is_empty());
        assert_eq!(rule.preferences.len(), 1);
    }

    #[test]
    fn reactions_in_other_languages_and_giving_up_are_read() {
        let reaction = |text: &str| read_user_message(text).reactions.first().copied();
        assert_eq!(reaction("Danke, passt."), Some(Reaction::Positive));
        assert_eq!(reaction("Спасибо!"), Some(Reaction::Positive));
        assert_eq!(reaction("감사합니다"), Some(Reaction::Positive));
        assert_eq!(
            reaction("tried it myself, looks good."),
            Some(Reaction::Positive)
        );
        assert_eq!(reaction("算了，不做了。"), Some(Reaction::Abandon));
        assert_eq!(reaction("Revert it."), Some(Reaction::Abandon));
        assert_eq!(
            reaction("Annule tout, on garde l'ancienne version."),
            Some(Reaction::Abandon)
        );
        // Undoing a side effect, or a reminder, is not giving up on the task.
        assert_ne!(
            reaction("undo that, you added a stray lockfile"),
            Some(Reaction::Abandon)
        );
        assert_eq!(reaction("N'oublie pas de lancer les tests."), None);
        // Giving up after a remark belongs to the task at hand.
        let dropped =
            read_user_message("Hm, that is more work than I expected. Let's leave it for now.");
        assert_eq!(dropped.follow_up, FollowUp::Hard);
        assert!(dropped.reactions.contains(&Reaction::Abandon));
        assert_eq!(
            read_user_message("Нет, сделай это через флаг.").follow_up,
            FollowUp::Hard
        );
        // Giving up after a remark that reads as a request, with more asked after it.
        assert_eq!(
            read_user_message(
                "ugh, that touches 40 files. forget it, put it back. keep the parser fix though."
            )
            .follow_up,
            FollowUp::Hard
        );
        assert_eq!(
            reaction("Uff, das wird zu groß. Lass uns hier aufhören."),
            Some(Reaction::Abandon)
        );
        assert_eq!(
            reaction("perdón, era para la otra ventana"),
            Some(Reaction::Abandon)
        );
        // A request in a script without spaces between words is still a request.
        assert_eq!(
            read_user_message("로그인 버튼에 로딩 표시를 추가해 주세요.")
                .requests
                .len(),
            1
        );
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
        assert_eq!(more.follow_up, FollowUp::Soft);
        assert_eq!(
            read_user_message("Still failing. Try again.").follow_up,
            FollowUp::Hard
        );
        let rule_only = read_user_message("Please no emojis in commits. Amend it.");
        assert_eq!(rule_only.preferences, ["No emojis in commits."]);
        assert!(rule_only.requests.is_empty(), "{rule_only:?}");
        assert_eq!(
            read_user_message("Test it again on staging.").follow_up,
            FollowUp::Hard
        );
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
        // A symptom, then an ask of its own: the ask names the task; an ask that points back
        // needs the symptom.
        assert_eq!(
            title(&[
                "Photo uploads stall on slow networks.",
                "Raise the upload timeout to 90s in Config.swift."
            ])
            .as_deref(),
            Some("Raise the upload timeout to 90s in Config.swift")
        );
        assert_eq!(
            title(&[
                "The date tests fail since the bump.",
                "Make them pass again."
            ])
            .as_deref(),
            Some("The date tests fail since the bump; make them pass again")
        );
        assert_eq!(
            title(&["# Work in uploader: make the retry back off"]).as_deref(),
            Some("Work in uploader: make the retry back off")
        );
    }

    proptest! {
        #[test]
        fn reading_any_message_never_panics(text in "(\\PC|always |never |please |great|\\?|\\.|\n| ){0,80}") {
            let message = read_user_message(&text);
            for rule in &message.preferences {
                prop_assert!(rule.chars().count() <= MAX_LINE_CHARS + 1);
                prop_assert!(rule.ends_with(SENTENCE_ENDS), "{}", rule);
            }
            if let Some(title) = title_from_requests(&message.requests, 100) {
                prop_assert!(!title.starts_with(['#', '>', '*', '-', ' ']), "{}", title);
            }
        }

        #[test]
        fn no_title_starts_with_markup(requests in prop::collection::vec("([#>*_ -]|\\PC){0,40}", 1..4)) {
            if let Some(title) = title_from_requests(&requests, 100) {
                prop_assert!(!title.starts_with(['#', '>', '*', '-', '_', ' ']), "{}", title);
            }
        }
    }
}
