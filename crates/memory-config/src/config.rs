//! The loader: one `config.toml` (or none) plus the environment, read once per owner.

use std::collections::BTreeMap;
use std::path::Path;

use crate::de::{FieldError, FieldErrorKind, from_table, toml_type};
use crate::error::{Error, Origin, Result};
use crate::section::{EnvKey, Loaded, Place, Ranges, Section};

/// Where environment overrides are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Environment {
    /// The process environment, read when a section is loaded.
    Process,
    /// A fixed set of variables (a host that keeps its own, a test).
    Fixed(BTreeMap<String, String>),
}

impl Environment {
    fn get(&self, variable: &str) -> Option<String> {
        match self {
            Environment::Process => std::env::var(variable).ok(),
            Environment::Fixed(variables) => variables.get(variable).cloned(),
        }
    }
}

/// A parsed config file and the environment that overrides it. Each owner reads its own part
/// with [`Config::section`]; parts no owner reads (the host agent's keys in a shared file) are
/// left alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    origin: Origin,
    document: toml::Table,
    environment: Environment,
}

impl Default for Config {
    fn default() -> Self {
        Config::empty()
    }
}

impl Config {
    /// No file: every owner gets its defaults, overridden by the environment.
    pub fn empty() -> Config {
        Config {
            origin: Origin::Text,
            document: toml::Table::new(),
            environment: Environment::Process,
        }
    }

    /// Reads and parses the config file at `path`.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::parse(&text, Origin::File(path.to_owned()))
    }

    /// [`Config::load`], or [`Config::empty`] when there is no file at `path`.
    pub fn load_if_present(path: &Path) -> Result<Config> {
        match Config::load(path) {
            Err(Error::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Ok(Config::empty())
            }
            other => other,
        }
    }

    /// Parses config text; `origin` is what errors name.
    pub fn parse(text: &str, origin: Origin) -> Result<Config> {
        let document = text
            .parse::<toml::Table>()
            .map_err(|source| Error::Syntax {
                origin: origin.clone(),
                source,
            })?;
        Ok(Config {
            origin,
            document,
            environment: Environment::Process,
        })
    }

    /// This config with `variables` in place of the process environment.
    #[must_use]
    pub fn with_environment<K, V>(self, variables: impl IntoIterator<Item = (K, V)>) -> Config
    where
        K: Into<String>,
        V: Into<String>,
    {
        Config {
            environment: Environment::Fixed(
                variables
                    .into_iter()
                    .map(|(name, value)| (name.into(), value.into()))
                    .collect(),
            ),
            ..self
        }
    }

    /// Where the file came from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// One owner's settings: its keys from the file (defaults for the missing ones), then its
    /// environment variables, then [`Section::settle`].
    pub fn section<T: Section>(&self) -> Result<Loaded<T>> {
        let (prefix, mut table) = match T::PLACE {
            Place::Table(name) => (format!("{name}."), self.table(name)?),
            Place::TopLevel(keys) => (
                String::new(),
                keys.iter()
                    .filter_map(|key| {
                        let value = self.document.get(*key)?;
                        Some(((*key).to_owned(), value.clone()))
                    })
                    .collect(),
            ),
        };
        let mut from_env: Vec<EnvKey> = Vec::new();
        for env in T::ENV {
            if let Some(value) = self.environment.get(env.variable) {
                table.insert(env.key.to_owned(), toml::Value::String(value));
                from_env.push(*env);
            }
        }
        let mut value: T =
            from_table(&table).map_err(|error| self.field_error(error, &prefix, &from_env))?;
        let mut ranges = Ranges {
            prefix: &prefix,
            file: &self.origin,
            from_env: &from_env,
            warnings: Vec::new(),
        };
        value.settle(&mut ranges)?;
        Ok(Loaded {
            value,
            warnings: ranges.warnings,
        })
    }

    fn table(&self, name: &str) -> Result<toml::Table> {
        match self.document.get(name) {
            None => Ok(toml::Table::new()),
            Some(toml::Value::Table(table)) => Ok(table.clone()),
            Some(other) => Err(Error::NotATable {
                origin: self.origin.clone(),
                table: name.to_owned(),
                found: toml_type(other).to_owned(),
            }),
        }
    }

    fn field_error(&self, error: FieldError, prefix: &str, from_env: &[EnvKey]) -> Error {
        let bare = error.key.unwrap_or_default();
        let origin = from_env
            .iter()
            .find(|env| env.key == bare)
            .map_or_else(|| self.origin.clone(), |env| Origin::Env(env.variable));
        let key = format!("{prefix}{bare}");
        match error.kind {
            FieldErrorKind::UnknownKey { known } => Error::UnknownKey { origin, key, known },
            FieldErrorKind::WrongType { expected, found } => Error::WrongType {
                origin,
                key,
                expected,
                found,
            },
            FieldErrorKind::OutOfRange { range, found } => Error::OutOfRange {
                origin,
                key,
                range,
                found,
            },
            FieldErrorKind::UnknownValue { allowed, found } => Error::UnknownValue {
                origin,
                key,
                allowed,
                found,
            },
            FieldErrorKind::Other(message) => Error::Invalid {
                origin,
                key,
                message,
            },
        }
    }
}
