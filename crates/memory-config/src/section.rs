//! What an owner declares about its settings: where its keys live, which environment variables
//! override them, and the ranges its numbers are held to.

use std::fmt;
use std::ops::RangeInclusive;

use serde::de::DeserializeOwned;

use crate::error::{Error, Origin, Result};

/// Where an owner's keys live in `config.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A top-level table the owner holds whole (`[memories]`): every key in it is the owner's,
    /// and an unknown one is an error.
    Table(&'static str),
    /// Named top-level keys, beside keys of the host agent that shares the file (codex writes
    /// `model = ...` at the top level): only these are read.
    TopLevel(&'static [&'static str]),
}

/// An environment variable that overrides one key of an owner, after the file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvKey {
    /// The variable (`AGENT_MEMORY_STORE`).
    pub variable: &'static str,
    /// The key it sets, without the table (`url`); its value is taken as a TOML string.
    pub key: &'static str,
}

/// One owner's settings: a serde struct (`#[serde(default, deny_unknown_fields)]`, defaults and
/// ranges documented on its fields) that [`crate::Config::section`] reads.
pub trait Section: DeserializeOwned + Default {
    /// Where the keys live.
    const PLACE: Place;
    /// Variables that override a key each.
    const ENV: &'static [EnvKey] = &[];

    /// Holds the numbers to their ranges and normalizes values once the file and the
    /// environment are read: [`Ranges::require`] refuses a number outside its range,
    /// [`Ranges::clamp`] moves it in with a warning.
    fn settle(&mut self, ranges: &mut Ranges<'_>) -> Result<()> {
        let _ = ranges;
        Ok(())
    }
}

/// An owner's settings as loaded, with a warning per clamped number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded<T> {
    /// The settings.
    pub value: T,
    /// Numbers moved into their range.
    pub warnings: Vec<Clamped>,
}

/// A number outside its range that was moved to the nearest end of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clamped {
    /// The key, with its table.
    pub key: String,
    /// The number as written.
    pub found: i64,
    /// The range.
    pub range: RangeInclusive<i64>,
    /// The number used.
    pub used: i64,
}

impl fmt::Display for Clamped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {} is outside {}..={}; using {}",
            self.key,
            self.found,
            self.range.start(),
            self.range.end(),
            self.used
        )
    }
}

/// The range check handed to [`Section::settle`]: it knows the table's name and where each key
/// came from, so an error or a warning names both.
#[derive(Debug)]
pub struct Ranges<'a> {
    pub(crate) prefix: &'a str,
    pub(crate) file: &'a Origin,
    pub(crate) from_env: &'a [EnvKey],
    pub(crate) warnings: Vec<Clamped>,
}

impl Ranges<'_> {
    /// `key` with its table (`memories.max_unused_days`).
    pub fn full_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn origin(&self, key: &str) -> Origin {
        self.from_env
            .iter()
            .find(|env| env.key == key)
            .map_or_else(|| self.file.clone(), |env| Origin::Env(env.variable))
    }

    /// An error unless `value` lies in `range`.
    pub fn require<T>(&self, key: &str, value: T, range: RangeInclusive<T>) -> Result<()>
    where
        T: PartialOrd + fmt::Display,
    {
        if range.contains(&value) {
            return Ok(());
        }
        Err(Error::OutOfRange {
            origin: self.origin(key),
            key: self.full_key(key),
            range: format!("between {} and {}", range.start(), range.end()),
            found: value.to_string(),
        })
    }

    /// An error unless `value` is at least `min`.
    pub fn require_at_least<T>(&self, key: &str, value: T, min: T) -> Result<()>
    where
        T: PartialOrd + fmt::Display,
    {
        if value >= min {
            return Ok(());
        }
        Err(Error::OutOfRange {
            origin: self.origin(key),
            key: self.full_key(key),
            range: format!("at least {min}"),
            found: value.to_string(),
        })
    }

    /// Moves `value` into `range`, with a warning when it was outside.
    pub fn clamp(&mut self, key: &str, value: &mut i64, range: RangeInclusive<i64>) {
        let used = (*value).clamp(*range.start(), *range.end());
        if used != *value {
            self.warnings.push(Clamped {
                key: self.full_key(key),
                found: *value,
                range,
                used,
            });
            *value = used;
        }
    }
}
