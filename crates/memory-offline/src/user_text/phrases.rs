//! The phrases that tell a user's sentences apart: lead-ins, rule openings, reactions,
//! follow-up cues, request verbs. Matched on lowercase text; each list says what it is for.

/// Words that open a sentence without changing what it says.
pub(super) const LEAD_INS: [&str; 14] = [
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
pub(super) const CORRECTIONS: [&str; 11] = [
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
pub(super) const STRONG_STARTS: [&str; 28] = [
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
pub(super) const WEAK_STARTS: [&str; 11] = [
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
pub(super) const ANYWHERE: [&str; 22] = [
    "i like ",
    "i love ",
    "i dislike ",
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
pub(super) const SCOPES: [&str; 15] = [
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
pub(super) const CONTRASTS: [&str; 6] = [
    " not ",
    ", not",
    "instead of",
    "rather than",
    " over ",
    "instead",
];

/// Phrases that look like rules but are not directives.
pub(super) const NOT_RULES: [&str; 23] = [
    "i like it",
    "i like that",
    "i like this",
    "i love it",
    "i love that",
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
pub(super) const ABANDON: [&str; 16] = [
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
pub(super) const NEGATIVE: [&str; 26] = [
    "not what i meant",
    "that's not it",
    "not quite",
    "you forgot",
    "you missed",
    "you didn't",
    "you did not",
    "you broke",
    "you left out",
    "that broke",
    "this broke",
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
pub(super) const POSITIVE: [&str; 21] = [
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

/// Openings that make a request continue the current task when it is about the same thing.
pub(super) const SOFT_FOLLOW_UPS: [&str; 6] =
    ["also", "and ", "plus ", "additionally", "oh and", "but "];

/// Openings that make a request continue the current task whatever it is about.
pub(super) const HARD_FOLLOW_UPS: [&str; 11] = [
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
pub(super) const NEW_TASKS: [&str; 11] = [
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
pub(super) const QUESTION_LEADS: [&str; 9] = [
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

/// Verbs that open an instruction (`run the tests`, `delete it`), for rules stated as
/// conditions (`if something is unused, delete it`) and scoped rules (`in this repo, use X`).
pub(super) const IMPERATIVES: [&str; 40] = [
    "add", "always", "ask", "avoid", "call", "check", "commit", "create", "delete", "do", "don't",
    "fail", "fix", "keep", "leave", "log", "mention", "move", "never", "note", "open", "prefer",
    "push", "put", "raise", "remove", "rename", "rerun", "retry", "return", "run", "skip", "stick",
    "stop", "tell", "throw", "update", "use", "write", "switch",
];

/// Openings that scope what follows to more than the task (`in this repo, use X`).
pub(super) const SCOPE_LEADS: [&str; 9] = [
    "in this repo",
    "in this project",
    "in this codebase",
    "for this project",
    "for this repo",
    "in general",
    "by default",
    "here",
    "generally",
];

/// Words of a request that undo work (`revert it`, `put it back`).
pub(super) const UNDO: [&str; 8] = [
    "revert",
    "put ",
    "undo",
    "roll back",
    "rollback",
    "restore",
    "back out",
    "the way it was",
];

/// First words of a request that asks for a change (`fix`, `add`, ...).
pub(super) const CHANGE_VERBS: [&str; 40] = [
    "fix",
    "add",
    "make",
    "change",
    "update",
    "remove",
    "rename",
    "implement",
    "refactor",
    "upgrade",
    "bump",
    "migrate",
    "write",
    "create",
    "move",
    "delete",
    "replace",
    "convert",
    "port",
    "install",
    "configure",
    "set",
    "deploy",
    "push",
    "commit",
    "revert",
    "split",
    "merge",
    "cache",
    "resize",
    "switch",
    "clean",
    "drop",
    "enable",
    "disable",
    "support",
    "build",
    "generate",
    "wire",
    "hook",
];

/// Phrases of a request that asks for information rather than a change.
pub(super) const INFO_CUES: [&str; 12] = [
    "tell me",
    "report",
    "which ",
    "what ",
    "why ",
    "how ",
    "list ",
    "show me",
    "find out",
    "summarize",
    "explain",
    "whether",
];

/// Openings of a request that carry no content, removed from titles.
pub(super) const REQUEST_LEADS: [&str; 26] = [
    "also, ",
    "also ",
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

/// Openings that state a rule in Chinese, Japanese or Korean ("always", "never", "do not",
/// "from now on", "make sure", "remember to"), after an optional polite 请.
pub(super) const CJK_RULE_STARTS: [&str; 22] = [
    "总是",
    "始终",
    "永远",
    "一律",
    "不要",
    "别再",
    "请勿",
    "禁止",
    "以后",
    "今后",
    "每次",
    "务必",
    "一定要",
    "记得",
    "常に",
    "必ず",
    "今後",
    "いつも",
    "항상",
    "절대",
    "앞으로",
    "반드시",
];

/// Phrases anywhere in a sentence that state a liking in Chinese, Japanese or Korean
/// ("prefer", "I like to use", "use X first", "please do not").
pub(super) const CJK_RULE_ANYWHERE: [&str; 9] = [
    "偏好",
    "更喜欢",
    "我喜欢用",
    "优先使用",
    "优先用",
    "しないでください",
    "を使ってください",
    "하지 마세요",
    "선호",
];
