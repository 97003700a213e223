//! The one shell tokeniser: command lines cut into segments joined by `&&`, `||`, `;`, `&`
//! and `|`, quote-aware words (single and double quotes, backslash escapes, no expansion), the
//! key that makes two runs "the same check", and what kind of command a segment is.
//!
//! The file operations of a shell call ([`crate::file_ops`]) and the offline engine's reading of
//! the commands a session ran both tokenise here.

use serde_json::Value;

/// A word of a command line with its quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word without quotes or escapes.
    pub text: String,
    /// True when any part of it was quoted or escaped.
    pub quoted: bool,
}

/// What joins a segment to the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joiner {
    /// `&&`: the next runs only if this one passed.
    And,
    /// `||`: the next runs only if this one failed.
    Or,
    /// `;`, `&` or a line break: the next runs regardless.
    Then,
    /// `|`: this one's output feeds the next.
    Pipe,
    /// The last segment.
    End,
}

/// One simple command of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Its words, environment assignments and wrappers (`sudo`, `env`, `time`) included.
    pub words: Vec<Word>,
    /// How it connects to the next segment.
    pub joiner: Joiner,
}

impl Segment {
    /// The words after leading `NAME=value` assignments and wrapper programs.
    pub fn command_words(&self) -> &[Word] {
        let mut start = 0;
        while let Some(word) = self.words.get(start) {
            let assignment = !word.quoted
                && word
                    .text
                    .split_once('=')
                    .is_some_and(|(name, _)| is_env_name(name));
            let wrapper = matches!(
                word.text.as_str(),
                "sudo" | "env" | "time" | "command" | "nohup" | "exec" | "builtin"
            );
            if !(assignment || wrapper) {
                break;
            }
            start += 1;
            // `timeout 30 cmd`: skip the duration too.
            if word.text == "timeout" {
                start += 1;
            }
        }
        self.words.get(start..).unwrap_or(&[])
    }

    /// The program's name without its folder (`/usr/bin/pytest` is `pytest`).
    pub fn program(&self) -> &str {
        self.command_words()
            .first()
            .map(|w| w.text.rsplit('/').next().unwrap_or(&w.text))
            .unwrap_or("")
    }

    /// The arguments that are not options, in order.
    fn operands(&self) -> impl Iterator<Item = &str> {
        self.command_words()
            .iter()
            .skip(1)
            .map(|w| w.text.as_str())
            .filter(|w| is_operand(w))
    }

    /// The words of the tool that actually runs: runners (`uv run`, `npx`, `python -m`,
    /// `bundle exec`, `pnpm exec`) are looked through, so `uv run pytest` is `pytest`.
    fn tool_words(&self) -> &[Word] {
        let words = self.command_words();
        let text = |i: usize| words.get(i).map_or("", |w| w.text.as_str());
        let program = words
            .first()
            .map_or("", |w| w.text.rsplit('/').next().unwrap_or(&w.text));
        let skip = match (program, text(1)) {
            ("npx" | "uvx" | "bunx" | "pnpx", _) => 1,
            ("uv" | "poetry" | "pdm" | "pnpm" | "npm" | "yarn" | "bun", "run" | "exec" | "x")
            | ("bundle" | "pipenv", "exec" | "run") => 2,
            (python, "-m") if python.starts_with("python") => 2,
            _ => 0,
        };
        if skip == 0 {
            return words;
        }
        // Options between the runner and its tool (`uv run --frozen pytest`) are skipped.
        let start = (skip..words.len())
            .find(|&i| !text(i).starts_with('-'))
            .unwrap_or(words.len());
        match words.get(start..) {
            Some(rest) if !rest.is_empty() => rest,
            _ => words,
        }
    }

    /// What makes two runs the same check: the tool and its first operand (`cargo test -p a`
    /// and `cargo test --all` match; `uv run alembic upgrade` and `uv run pytest` do not).
    pub fn key(&self) -> CommandKey {
        let words = self.tool_words();
        let program = words
            .first()
            .map(|w| w.text.rsplit('/').next().unwrap_or(&w.text).to_owned())
            .unwrap_or_default();
        let subject = words
            .iter()
            .skip(1)
            .map(|w| w.text.as_str())
            .find(|w| is_operand(w))
            .map(str::to_owned);
        CommandKey { program, subject }
    }

    /// What kind of command this segment is.
    pub fn kind(&self) -> CommandKind {
        let words: Vec<&str> = self
            .command_words()
            .iter()
            .map(|w| w.text.as_str())
            .collect();
        let program = self.program();
        let sub = self.operands().next();
        // A redirection into a file writes; `2>&1` and `> /dev/null` do not.
        let writes = words.iter().enumerate().any(|(i, w)| {
            let to_null = w.contains("/dev/null")
                || (w.ends_with('>') && words.get(i + 1).is_some_and(|next| *next == "/dev/null"));
            w.contains('>') && !w.contains(">&") && !to_null
        });
        match program {
            "" | "cd" | "pushd" | "popd" | "true" | "set" | "export" | "source" | "." => {
                CommandKind::Inspect
            }
            "ls" | "cat" | "head" | "tail" | "rg" | "grep" | "egrep" | "fgrep" | "fd" | "pwd"
            | "echo" | "printf" | "wc" | "which" | "tree" | "less" | "more" | "stat" | "file"
            | "nl" | "diff" | "cmp" | "sort" | "uniq" | "cut" | "tr" | "jq" | "yq" | "whoami"
            | "date" | "uname" | "df" | "du" | "id" | "type" | "readlink" | "realpath" | "ps"
            | "env" | "printenv" | "basename" | "dirname" | "column" | "xxd" | "hexdump" | "od"
            | "bat" | "exa" | "eza" | "lsof" | "whereis" => {
                if writes {
                    CommandKind::Edit
                } else {
                    CommandKind::Inspect
                }
            }
            "sed" | "awk" | "perl" => {
                let in_place = words
                    .iter()
                    .any(|w| w.starts_with("-i") || *w == "--in-place");
                if in_place || writes {
                    CommandKind::Edit
                } else {
                    CommandKind::Inspect
                }
            }
            "find" => {
                if words
                    .iter()
                    .any(|w| matches!(*w, "-delete" | "-exec" | "-execdir"))
                {
                    CommandKind::Edit
                } else {
                    CommandKind::Inspect
                }
            }
            "mkdir" | "cp" | "mv" | "rm" | "touch" | "chmod" | "chown" | "ln" | "tee" => {
                CommandKind::Edit
            }
            "git" => match sub {
                None
                | Some(
                    "status" | "diff" | "log" | "show" | "remote" | "branch" | "rev-parse"
                    | "blame" | "ls-files" | "grep" | "describe" | "shortlog" | "config",
                ) => CommandKind::Inspect,
                _ => CommandKind::VersionControl,
            },
            "gh" | "hg" | "svn" | "jj" => CommandKind::VersionControl,
            _ => CommandKind::Work,
        }
    }
}

/// What kind of command a segment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    /// Only looks around (`ls`, `cat`, `sed -n`, `rg`, `git status`, `git remote -v`).
    Inspect,
    /// Changes files directly (`sed -i`, `mv`, `rm`, `mkdir`).
    Edit,
    /// Version control that changes state (`git commit`, `git push`).
    VersionControl,
    /// Everything else: builds, tests, runs, installs, migrations, deploys.
    Work,
}

/// What makes two commands "the same check": the program and its subject (`cargo test -p a`
/// and `cargo test --all` match; `cargo build` does not).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommandKey {
    /// The tool's name without its folder, runners looked through.
    pub program: String,
    /// Its first operand, when it has one.
    pub subject: Option<String>,
}

impl CommandKey {
    /// True when a pass of this check also vouches for `other`: the same check, or the same
    /// program run on everything (`pytest`, `go test ./...`) or on a folder that holds
    /// `other`'s subject (`pytest tests` covers `pytest tests/test_dates.py`).
    pub fn covers(&self, other: &CommandKey) -> bool {
        if self.program != other.program {
            return false;
        }
        match (self.subject.as_deref(), other.subject.as_deref()) {
            (a, b) if a == b => true,
            (None | Some("." | "./..." | "..."), _) => true,
            (Some(folder), Some(path)) if folder.contains('/') || path.contains('/') => {
                let folder = folder.trim_end_matches("...").trim_end_matches('/');
                !folder.is_empty() && path.starts_with(&format!("{folder}/"))
            }
            _ => false,
        }
    }

    /// `cargo test`, for keywords; `None` when the program name is not a plain word.
    pub fn keyword(&self) -> Option<String> {
        let plain = |text: &str| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !plain(&self.program) {
            return None;
        }
        match self.subject.as_deref() {
            Some(subject) if is_subcommand(subject) => Some(format!("{} {subject}", self.program)),
            _ => Some(self.program.clone()),
        }
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The segments, `cd` ones included.
    pub segments: Vec<Segment>,
}

impl CommandLine {
    /// Parses a command line. Never fails: unbalanced quotes run to the end.
    pub fn parse(text: &str) -> CommandLine {
        let mut segments = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        let mut in_word = false;
        let mut chars = text.chars().peekable();
        let flush_word =
            |words: &mut Vec<Word>, word: &mut String, quoted: &mut bool, in_word: &mut bool| {
                if *in_word {
                    words.push(Word {
                        text: std::mem::take(word),
                        quoted: *quoted,
                    });
                }
                *quoted = false;
                *in_word = false;
            };
        while let Some(ch) = chars.next() {
            match ch {
                '\'' => {
                    in_word = true;
                    quoted = true;
                    for inner in chars.by_ref() {
                        if inner == '\'' {
                            break;
                        }
                        word.push(inner);
                    }
                }
                '"' => {
                    in_word = true;
                    quoted = true;
                    while let Some(inner) = chars.next() {
                        match inner {
                            '"' => break,
                            '\\' => {
                                if let Some(escaped) = chars.next() {
                                    word.push(escaped);
                                }
                            }
                            other => word.push(other),
                        }
                    }
                }
                '\\' => {
                    in_word = true;
                    quoted = true;
                    if let Some(escaped) = chars.next()
                        && escaped != '\n'
                    {
                        word.push(escaped);
                    }
                }
                '&' | '|' | ';' | '\n' => {
                    // `2>&1` and `&>` are redirections, not separators.
                    if ch == '&' && (word.ends_with('>') || chars.peek() == Some(&'>')) {
                        in_word = true;
                        word.push(ch);
                        continue;
                    }
                    flush_word(&mut words, &mut word, &mut quoted, &mut in_word);
                    let joiner = match (ch, chars.peek()) {
                        ('&', Some('&')) => {
                            chars.next();
                            Joiner::And
                        }
                        ('|', Some('|')) => {
                            chars.next();
                            Joiner::Or
                        }
                        ('|', _) => Joiner::Pipe,
                        _ => Joiner::Then,
                    };
                    if !words.is_empty() {
                        segments.push(Segment {
                            words: std::mem::take(&mut words),
                            joiner,
                        });
                    }
                }
                ch if ch.is_whitespace() => {
                    flush_word(&mut words, &mut word, &mut quoted, &mut in_word);
                }
                ch => {
                    in_word = true;
                    word.push(ch);
                }
            }
        }
        flush_word(&mut words, &mut word, &mut quoted, &mut in_word);
        if !words.is_empty() {
            segments.push(Segment {
                words,
                joiner: Joiner::End,
            });
        }
        if let Some(last) = segments.last_mut() {
            last.joiner = Joiner::End;
        }
        CommandLine { segments }
    }

    /// The segments that decide what the command did: `cd` segments and the filters a
    /// pipeline feeds into (`| tail -5`) are left out.
    pub fn checks(&self) -> Vec<&Segment> {
        let mut out = Vec::new();
        let mut after_pipe = false;
        for segment in &self.segments {
            let filter = after_pipe;
            after_pipe = segment.joiner == Joiner::Pipe;
            if filter || matches!(segment.program(), "cd" | "pushd" | "popd" | "") {
                continue;
            }
            out.push(segment);
        }
        out
    }

    /// The keys of every check, in order, each once.
    pub fn keys(&self) -> Vec<CommandKey> {
        let mut keys: Vec<CommandKey> = Vec::new();
        for segment in self.checks() {
            let key = segment.key();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }

    /// The folder a leading `cd DIR &&` moves to.
    pub fn cd_target(&self) -> Option<&str> {
        let first = self.segments.first()?;
        (first.program() == "cd" && first.joiner == Joiner::And)
            .then(|| first.command_words().get(1).map(|w| w.text.as_str()))
            .flatten()
    }

    /// The most telling kind among the checks: work over version control over edits over
    /// looking around.
    pub fn kind(&self) -> CommandKind {
        let kinds: Vec<CommandKind> = self.checks().iter().map(|s| s.kind()).collect();
        [
            CommandKind::Work,
            CommandKind::VersionControl,
            CommandKind::Edit,
        ]
        .into_iter()
        .find(|kind| kinds.contains(kind))
        .unwrap_or(CommandKind::Inspect)
    }

    /// True when every check passes if the whole line exits 0: the checks are joined by `&&`
    /// (or there is one). With `;` or `||` only the last one is known.
    pub fn all_checks_known_on_success(&self) -> bool {
        let checks = self.checks();
        checks.len() <= 1
            || checks
                .iter()
                .rev()
                .skip(1)
                .all(|segment| matches!(segment.joiner, Joiner::And | Joiner::Pipe))
    }

    /// A word of the line quoted here and unquoted (same text) in `other`.
    pub fn newly_quoted_word<'a>(&'a self, other: &CommandLine) -> Option<&'a str> {
        let unquoted: Vec<&str> = other
            .segments
            .iter()
            .flat_map(|s| s.words.iter())
            .filter(|w| !w.quoted)
            .map(|w| w.text.as_str())
            .collect();
        self.segments
            .iter()
            .flat_map(|s| s.words.iter())
            .find(|w| {
                w.quoted
                    && unquoted.contains(&w.text.as_str())
                    && w.text
                        .contains(|c: char| !c.is_ascii_alphanumeric() && !"-_./".contains(c))
            })
            .map(|w| w.text.as_str())
    }
}

/// An argument that is not an option or a redirection.
fn is_operand(word: &str) -> bool {
    !word.starts_with('-') && !word.contains('>') && !word.contains('<')
}

/// A word that reads as a subcommand (`upgrade`, `run-tests`), not a path or a value.
fn is_subcommand(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word.chars().all(|c| c.is_ascii_lowercase() || c == '-')
}

fn is_env_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The command line of a shell tool call's arguments (`cmd`, `command` or `script`: a string, or
/// an argument vector of strings joined by [`command_from_argv`]); `None` when blank.
pub fn command_from_args(args: &Value) -> Option<String> {
    let command = args
        .get("cmd")
        .or(args.get("command"))
        .or(args.get("script"))?;
    let text = match command {
        Value::String(text) => text.clone(),
        Value::Array(argv) => {
            let argv: Vec<String> = argv
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
            command_from_argv(&argv)
        }
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

/// Joins an argument vector, unwrapping `bash -lc "script"` and quoting arguments with
/// spaces.
pub fn command_from_argv(argv: &[String]) -> String {
    if let [shell, flag, script] = argv
        && matches!(shell.rsplit('/').next(), Some("bash" | "sh" | "zsh"))
        && matches!(flag.as_str(), "-c" | "-lc" | "-cl")
    {
        return script.clone();
    }
    argv.iter()
        .map(|arg| {
            if arg.is_empty() || arg.contains(char::is_whitespace) {
                format!("'{}'", arg.replace('\'', "'\\''"))
            } else {
                arg.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// True for a command line that only looks around (`ls`, `rg`, `git status`, ...).
pub fn is_inspection(command: &str) -> bool {
    CommandLine::parse(command).kind() == CommandKind::Inspect
}

/// The key of the check that decided a command line's exit status: its last `&&` / `;`
/// segment's (earlier ones are usually `cd dir`).
pub fn last_key(command: &str) -> CommandKey {
    CommandLine::parse(command)
        .keys()
        .pop()
        .unwrap_or(CommandKey {
            program: String::new(),
            subject: None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys(text: &str) -> Vec<CommandKey> {
        CommandLine::parse(text).keys()
    }

    fn key(program: &str, subject: Option<&str>) -> CommandKey {
        CommandKey {
            program: program.into(),
            subject: subject.map(str::to_owned),
        }
    }

    #[test]
    fn every_segment_of_a_chain_is_a_check() {
        assert_eq!(
            keys("cd x && uv run alembic upgrade head && uv run pytest -q"),
            [key("alembic", Some("upgrade")), key("pytest", None)]
        );
        assert_eq!(
            keys("go test ./... 2>&1 | tail -5"),
            [key("go", Some("test"))]
        );
        assert_eq!(keys("RUST_LOG=1 /usr/bin/pytest -q"), [key("pytest", None)]);
        assert_eq!(keys("cargo test -p a"), keys("cargo test --all"));
        assert_ne!(keys("cargo test"), keys("cargo build"));
        assert_eq!(keys("python -m pytest"), [key("pytest", None)]);
        assert_eq!(keys("npx eslint ./src"), [key("eslint", Some("./src"))]);
        assert_eq!(keys("uv run --frozen pytest -q"), keys("pytest -x"));
    }

    #[test]
    fn a_whole_run_covers_its_parts() {
        let key = |text: &str| CommandLine::parse(text).keys().remove(0);
        assert!(key("uv run pytest -q").covers(&key("pytest tests/test_dates.py")));
        assert!(key("pytest tests").covers(&key("pytest -x tests/test_dates.py")));
        assert!(!key("pytest tests/a.py").covers(&key("pytest tests/b.py")));
        assert!(key("go test -race ./...").covers(&key("go test ./internal/cache/...")));
        assert!(!key("cargo build").covers(&key("cargo test")));
        assert!(!key("cat a.rs").covers(&key("cat b.rs")));
    }

    #[test]
    fn quotes_are_removed_and_remembered() {
        let quoted = CommandLine::parse("cat 'src/app/(auth)/page.tsx'");
        let bare = CommandLine::parse("cat src/app/(auth)/page.tsx");
        assert_eq!(quoted.keys(), bare.keys());
        assert_eq!(
            quoted.newly_quoted_word(&bare),
            Some("src/app/(auth)/page.tsx")
        );
        assert_eq!(bare.newly_quoted_word(&quoted), None);
    }

    #[test]
    fn kinds_separate_looking_from_working() {
        let kind = |text: &str| CommandLine::parse(text).kind();
        assert_eq!(kind("echo hi > notes.txt"), CommandKind::Edit);
        for looking in [
            "rg x 2>&1 | head",
            "cat a > /dev/null",
            "ls -la",
            "sed -n '30,55p' src/a.rs",
            "git remote -v",
            "git status",
            "cat .env | head",
            "rg -n foo",
        ] {
            assert_eq!(kind(looking), CommandKind::Inspect, "{looking}");
        }
        assert_eq!(kind("sed -i 's/a/b/' x"), CommandKind::Edit);
        assert_eq!(kind("git push -u origin main"), CommandKind::VersionControl);
        assert_eq!(kind("cargo fmt && cargo clippy"), CommandKind::Work);
        assert_eq!(kind("cd x && ls"), CommandKind::Inspect);
    }

    #[test]
    fn chains_and_argv() {
        assert!(CommandLine::parse("a && b && c").all_checks_known_on_success());
        assert!(!CommandLine::parse("a; b").all_checks_known_on_success());
        assert_eq!(
            CommandLine::parse("cd crates/x && cargo test").cd_target(),
            Some("crates/x")
        );
        assert_eq!(
            command_from_argv(&["bash".into(), "-lc".into(), "ls -la".into()]),
            "ls -la"
        );
        assert_eq!(command_from_argv(&["rg".into(), "a b".into()]), "rg 'a b'");
        assert_eq!(
            key("cargo", Some("test")).keyword().as_deref(),
            Some("cargo test")
        );
    }

    proptest! {
        #[test]
        fn words_hold_no_unquoted_separator(
            text in "([\\p{Han}\\p{Hiragana}]|[a-z]{1,5}|'|\"|`|\\\\|&|\\||;|\n| |>){0,50}"
        ) {
            let line = CommandLine::parse(&text);
            for segment in &line.segments {
                for word in &segment.words {
                    if !word.quoted {
                        prop_assert!(!word.text.contains([' ', '\n', ';', '|']), "{:?}", word);
                    }
                    for ch in word.text.chars().filter(|ch| !ch.is_ascii()) {
                        prop_assert!(text.contains(ch), "{ch:?} came from nowhere");
                    }
                }
            }
        }

        #[test]
        fn parsing_any_line_never_panics(text in "(\\PC|'|\"|\\\\|&&|\\|\\||;|\\||\n| ){0,60}") {
            let line = CommandLine::parse(&text);
            for segment in &line.segments {
                prop_assert!(!segment.words.is_empty());
                let _ = (segment.key(), segment.kind());
            }
            let _ = (line.keys(), line.kind(), line.cd_target(), line.all_checks_known_on_success());
        }
    }
}
