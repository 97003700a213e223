//! The secret rules, one table per family.
//!
//! Provider-token shapes follow the gitleaks default configuration (MIT licence,
//! <https://github.com/gitleaks/gitleaks>, `config/gitleaks.toml`) and the detect-secrets plugins
//! (Apache-2.0, <https://github.com/Yelp/detect-secrets>); each such rule names the rule or plugin
//! it covers in `source`. The regexes, samples and tests here are written for this crate (ASCII
//! semantics, `regex::bytes`), not copied. Rules marked `ours` are original.
//!
//! Conventions every rule keeps, so redaction stays idempotent and windowed scanning stays exact:
//! - a secret value never starts with `[`, so the redaction marker cannot be matched again;
//! - a value ends at a stop byte ([`super::engine::is_stop_byte`]) unless the rule says
//!   [`ValueEnd::Blank`], and the scanning window extends to the next such byte;
//! - no rule uses `$`; the end of text is written `\z`;
//! - no rule starts with `\b`: [`Rule::word_start`] does that job;
//! - no regex crosses a line break: what spans lines (private keys, YAML block scalars, quoted
//!   values left open) is followed by the walkers in `multiline.rs`, which carry their state from
//!   one line or segment to the next.

mod ai;
mod cloud;
mod code_hosting;
mod commerce;
mod comms;
mod context;
mod devtools;
mod provider_named;
mod structural;

/// The rule families, in documentation order.
pub(crate) const FAMILIES: [&[Rule]; 9] = [
    ai::RULES,
    code_hosting::RULES,
    cloud::RULES,
    comms::RULES,
    commerce::RULES,
    devtools::RULES,
    provider_named::RULES,
    structural::RULES,
    context::RULES,
];

/// Every rule, in documentation order.
pub(crate) fn all() -> impl Iterator<Item = &'static Rule> {
    FAMILIES.iter().flat_map(|family| family.iter())
}

/// Which table a rule belongs to (for the documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Ai,
    CodeHosting,
    Cloud,
    Communication,
    Commerce,
    DevTools,
    Named,
    Structural,
    Context,
}

impl Family {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::Ai => "AI and model providers",
            Family::CodeHosting => "Source hosting and package registries",
            Family::Cloud => "Cloud, infrastructure and databases",
            Family::Communication => "Chat, e-mail and messaging",
            Family::Commerce => "Payments and commerce",
            Family::DevTools => "Developer tools, CI and observability",
            Family::Named => "Provider-named assignments",
            Family::Structural => "Keys, tokens and files by structure",
            Family::Context => "Generic forms: assignments, headers, flags, URLs",
        }
    }
}

/// Extra validation of a match, for rules whose regex alone would catch ordinary text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// The regex is enough.
    Always,
    /// The value contains a digit.
    HasDigit,
    /// The value contains a digit and a letter (a generated key, not a word).
    DigitAndLetter,
    /// Not a reference, a placeholder or a filler.
    NotPlaceholder,
    /// A password embedded in a URL or a connection string, where `/`, `*` and `@` are ordinary
    /// characters: not a variable or a filler.
    EmbeddedPassword,
    /// A URL user name alone (no password): only when it looks generated (a token as user).
    UrlUserToken,
    /// A flag value: not a reference, a placeholder such as `TOKEN`, or a short lower-case word.
    FlagValue,
    /// A word of a sentence stated as a password: not a reference, a placeholder or a filler
    /// word, and holding a digit, a symbol (`!@#%^&*+=?~`) or a capital after its first
    /// letter, which the words of a sentence (`incorrect`, `None`, `stored/encrypted`) do not.
    ProseValue,
    /// A `Bearer` token: not a placeholder (`YOUR_TOKEN`) or code (`self.access_token`).
    Bearer,
    /// A `Basic` credential: base64 of printable `user:password`.
    BasicCredentials,
    /// Two capture groups (1 and 3) must be the same XML tag name.
    SameTag,
}

/// What the engine does with a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Replace the secret group (after the check).
    Replace,
    /// A secret-named key and its separator: the value after it is parsed by `assignment.rs`
    /// (quoted, unquoted, on the next line, a YAML block, a quoted value left open).
    Assignment,
    /// An `Authorization` header: the scheme decides what the credentials are.
    Authorization,
    /// A PEM (or SSH2) private-key header: its body is followed line by line.
    PrivateKey,
    /// A header whose following lines are the secret (PuTTY `Private-Lines:`, Ansible Vault):
    /// they are followed like a private-key body.
    BodyLines,
    /// `kind: Secret`: the values of the document's `data:` block are secrets.
    Kubernetes,
}

/// Where a value may end, which decides how far a scanning window extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueEnd {
    /// At a stop byte (whitespace, quote, bracket, comma, ...).
    StopByte,
    /// Only at whitespace or a quote (values with `;`, `,`, `&` in them: URLs, connection strings).
    Blank,
    /// At the end of the line (matches that hold quotes: XML attributes).
    Line,
}

/// A cheap test of the bytes around a keyword hit, run before a rule's regex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Near {
    /// Always run the regex.
    Anything,
    /// An assignment or header: after the keyword, the rest of a key name, a quote and blanks,
    /// comes `=`, `:`, `,`, `>`, `!` or `?` (`token =`, `"api_key":`, `X-Auth-Token:`).
    Assignment,
    /// A flag: a `-` comes before the keyword in its name, and `=` or a blank follows it.
    Flag,
    /// The keyword starts a word (for short case-sensitive keywords such as `SK`).
    WordStart,
}

/// One secret rule.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) id: &'static str,
    pub(crate) family: Family,
    pub(crate) description: &'static str,
    /// `gitleaks:<id>`, `detect-secrets:<Plugin>`, several of them, or `ours`.
    pub(crate) source: &'static str,
    /// Literals; the rule runs only near one of them.
    pub(crate) keywords: &'static [&'static str],
    /// Keywords match case-sensitively (short ones such as `SK`); otherwise ASCII
    /// case-insensitively and they must be written lower-case.
    pub(crate) case_sensitive: bool,
    pub(crate) pattern: &'static str,
    /// Capture group replaced by the marker (0: the whole match).
    pub(crate) secret_group: usize,
    pub(crate) check: Check,
    pub(crate) action: Action,
    /// The match must start at a word start: after a byte that is not a letter, digit or `_`.
    pub(crate) word_start: bool,
    /// What must be next to a keyword hit for the rule's regex to be worth running.
    pub(crate) near: Near,
    /// Bytes before a keyword where a match may start.
    pub(crate) back: usize,
    /// Bytes after a keyword the match may need before its value ends (the window then extends
    /// to where a value ends, see [`ValueEnd`]).
    pub(crate) forward: usize,
    pub(crate) value_end: ValueEnd,
    /// The shape of a match, for the documentation (never a real secret).
    pub(crate) shape: &'static str,
    /// A regex generating text this rule must redact (used by the tests).
    pub(crate) sample: &'static str,
}

/// The value characters of context rules: printable ASCII except quotes, backslash, brackets,
/// braces, parentheses, angle brackets, comma, semicolon, `&` and whitespace.
macro_rules! value_chars {
    () => {
        r"[A-Za-z0-9!#$%*+./:=?@^_|~-]"
    };
}
pub(crate) use value_chars;

/// A quote as written in text, in JSON, or in JSON inside JSON (escaped up to three times).
macro_rules! quote {
    () => {
        r#"(\\{0,7}["'`])?"#
    };
}
pub(crate) use quote;

/// Where a token ends: a byte that cannot continue it, or the end of text.
macro_rules! token_end {
    () => {
        r"(?:[^A-Za-z0-9_-]|\z)"
    };
}
pub(crate) use token_end;

/// Where a token starts when it must not be a piece of a base64 blob (`EAAA...` occurs inside
/// encoded binaries): the start of text or a byte that is not base64.
macro_rules! b64_start {
    () => {
        r"(?:^|[^A-Za-z0-9+/_-])"
    };
}
pub(crate) use b64_start;

/// Where such a token ends: a byte that cannot continue base64, or the end of text.
macro_rules! b64_end {
    () => {
        r"(?:[^A-Za-z0-9+/=_-]|\z)"
    };
}
pub(crate) use b64_end;

/// A token followed by [`token_end!`]: group 1 is the token.
macro_rules! bounded {
    ($token:literal) => {
        concat!("(", $token, ")", $crate::redact::rules::token_end!())
    };
}
pub(crate) use bounded;

/// A key whose name contains one of `$names` (any prefix or suffix: `MY_TWITTER_API_KEY`),
/// assigned a value of the shape `$value` in any syntax: `=`, `:`, `:=`, `=>`, `,` (call
/// arguments), with or without quotes. Group 1 is the key, group 4 the value.
macro_rules! named_pattern {
    ($names:literal, $value:literal) => {
        concat!(
            r"(?i)(?:^|[^A-Za-z0-9_.-])([A-Za-z0-9_.-]{0,40}?(?:",
            $names,
            r")[A-Za-z0-9_.-]{0,30})",
            $crate::redact::rules::quote!(),
            r"[ \t]*(?:=|:=|::=|:|=>|,|\?=|\|\|)[ \t]*",
            $crate::redact::rules::quote!(),
            "(",
            $value,
            r#")(?:[\s"'`;,)\]}<>&|]|\z)"#
        )
    };
}
pub(crate) use named_pattern;

/// A self-identifying token: the regex alone is enough.
#[allow(clippy::too_many_arguments)]
pub(crate) const fn token(
    id: &'static str,
    family: Family,
    description: &'static str,
    source: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    shape: &'static str,
    sample: &'static str,
) -> Rule {
    Rule {
        id,
        family,
        description,
        source,
        keywords,
        case_sensitive: false,
        pattern,
        secret_group: 0,
        check: Check::Always,
        action: Action::Replace,
        word_start: true,
        near: Near::Anything,
        back: 0,
        forward: 16,
        value_end: ValueEnd::StopByte,
        shape,
        sample,
    }
}

/// A [`token`] whose pattern is written with [`bounded!`] (group 1 is the token).
#[allow(clippy::too_many_arguments)]
pub(crate) const fn bounded_token(
    id: &'static str,
    family: Family,
    description: &'static str,
    source: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    shape: &'static str,
    sample: &'static str,
) -> Rule {
    Rule {
        secret_group: 1,
        ..token(
            id,
            family,
            description,
            source,
            keywords,
            pattern,
            shape,
            sample,
        )
    }
}

/// A provider-named assignment built with [`named_pattern!`]: the value (group 4) must contain a digit
/// and a letter unless the rule says otherwise.
#[allow(clippy::too_many_arguments)]
pub(crate) const fn named(
    id: &'static str,
    description: &'static str,
    source: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    shape: &'static str,
    sample: &'static str,
) -> Rule {
    Rule {
        id,
        family: Family::Named,
        description,
        source,
        keywords,
        case_sensitive: false,
        pattern,
        secret_group: 4,
        check: Check::DigitAndLetter,
        action: Action::Replace,
        word_start: false,
        near: Near::Assignment,
        back: 48,
        forward: 64,
        value_end: ValueEnd::StopByte,
        shape,
        sample,
    }
}
