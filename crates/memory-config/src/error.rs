//! The loader's error: where the bad value came from and what is wrong with which key.

use std::fmt;
use std::path::PathBuf;

/// Result alias of the loader.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A config file.
    File(PathBuf),
    /// Config text handed over without a file (a host's own string, a test).
    Text,
    /// An environment variable that overrides one key.
    Env(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "config file {}", path.display()),
            Origin::Text => f.write_str("config text"),
            Origin::Env(variable) => write!(f, "environment variable {variable}"),
        }
    }
}

/// What can be wrong with a config file or an environment override. Every variant names the
/// origin, and every variant about a value names its key (dotted, `memories.max_unused_days`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file exists but cannot be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML.
    #[error("{origin}: invalid toml: {}", .source.to_string().trim_end())]
    Syntax {
        /// The file or text.
        origin: Origin,
        /// The parser's error; its message has the line and column.
        #[source]
        source: toml::de::Error,
    },
    /// An owner's top-level name holds something other than a table.
    #[error("{origin}: `{table}` must be a table, found {found}")]
    NotATable {
        /// The file or text.
        origin: Origin,
        /// The owner's table name.
        table: String,
        /// The TOML type found.
        found: String,
    },
    /// A key its table does not have.
    #[error("{origin}: unknown key `{key}` (known: {known})")]
    UnknownKey {
        /// The file or text.
        origin: Origin,
        /// The key, with its table.
        key: String,
        /// The table's keys.
        known: String,
    },
    /// A value of the wrong TOML type.
    #[error("{origin}: `{key}` must be {expected}, found {found}")]
    WrongType {
        /// The file, text or variable.
        origin: Origin,
        /// The key, with its table.
        key: String,
        /// What the key takes (`an integer`, `a boolean`, ...).
        expected: String,
        /// The TOML type found.
        found: String,
    },
    /// A number outside its key's range.
    #[error("{origin}: `{key}` must be {range}, found {found}")]
    OutOfRange {
        /// The file, text or variable.
        origin: Origin,
        /// The key, with its table.
        key: String,
        /// The range, in words (`between 1 and 128`).
        range: String,
        /// The number found.
        found: String,
    },
    /// A word that is not one of the key's choices.
    #[error("{origin}: `{key}` must be one of {allowed}, found `{found}`")]
    UnknownValue {
        /// The file, text or variable.
        origin: Origin,
        /// The key, with its table.
        key: String,
        /// The choices.
        allowed: String,
        /// The word found.
        found: String,
    },
    /// Any other refusal of a key's value (a key given twice through an alias, say).
    #[error("{origin}: `{key}`: {message}")]
    Invalid {
        /// The file, text or variable.
        origin: Origin,
        /// The key, with its table (the table itself when no key is known).
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// The key the error is about, when it is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            Error::Read { .. } | Error::Syntax { .. } => None,
            Error::NotATable { table: key, .. }
            | Error::UnknownKey { key, .. }
            | Error::WrongType { key, .. }
            | Error::OutOfRange { key, .. }
            | Error::UnknownValue { key, .. }
            | Error::Invalid { key, .. } => Some(key),
        }
    }
}
