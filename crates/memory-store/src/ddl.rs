//! Table definitions written once and rendered per dialect: the column types that differ
//! between SQLite and PostgreSQL are named here, so an owner writes each `CREATE TABLE` once.

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
}
