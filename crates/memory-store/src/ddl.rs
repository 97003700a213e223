//! SQL written once and rendered per dialect: the column types, and the few spellings of
//! statements, that differ between SQLite and PostgreSQL are named here, so an owner writes
//! each `CREATE TABLE`, and each statement whose rule both backends share, once.

/// The SQL dialect a statement is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite: integers are `INTEGER` (64-bit), flags are `0`/`1` integers.
    Sqlite,
    /// PostgreSQL: integers are `BIGINT`, flags are `BOOLEAN`.
    Postgres,
}

impl Dialect {
    /// A 64-bit integer column.
    pub fn integer(self) -> &'static str {
        match self {
            Dialect::Sqlite => "INTEGER",
            Dialect::Postgres => "BIGINT",
        }
    }

    /// A flag (boolean) column.
    pub fn flag(self) -> &'static str {
        match self {
            Dialect::Sqlite => "INTEGER",
            Dialect::Postgres => "BOOLEAN",
        }
    }

    /// A flag's false value, as a literal.
    pub fn no(self) -> &'static str {
        match self {
            Dialect::Sqlite => "0",
            Dialect::Postgres => "FALSE",
        }
    }

    /// A flag's true value, as a literal.
    pub fn yes(self) -> &'static str {
        match self {
            Dialect::Sqlite => "1",
            Dialect::Postgres => "TRUE",
        }
    }

    /// The `n`-th statement parameter (from 1).
    pub fn parameter(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("?{n}"),
            Dialect::Postgres => format!("${n}"),
        }
    }

    /// The function that returns the larger of its arguments (SQLite's two-argument `MAX`).
    pub fn greatest(self) -> &'static str {
        match self {
            Dialect::Sqlite => "MAX",
            Dialect::Postgres => "GREATEST",
        }
    }
}
