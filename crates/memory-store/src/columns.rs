//! A result row read by column position the same way on both backends, so a record kept on
//! SQLite and PostgreSQL is built from its row by one function.

/// Typed reads of one result row by column position. A missing column, or a value of
/// another type, is the driver's error, never a panic.
pub trait Columns {
    /// The driver's error.
    type Error;
    /// A `TEXT NOT NULL` column.
    fn text(&self, index: usize) -> Result<String, Self::Error>;
    /// A `TEXT` column that may be null.
    fn text_or_null(&self, index: usize) -> Result<Option<String>, Self::Error>;
    /// A 64-bit integer column that is not null.
    fn integer(&self, index: usize) -> Result<i64, Self::Error>;
    /// A 64-bit integer column that may be null.
    fn integer_or_null(&self, index: usize) -> Result<Option<i64>, Self::Error>;
    /// A flag column (`0`/`1` on SQLite, `BOOLEAN` on PostgreSQL).
    fn flag(&self, index: usize) -> Result<bool, Self::Error>;
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;

    fn text(&self, index: usize) -> rusqlite::Result<String> {
        self.get(index)
    }

    fn text_or_null(&self, index: usize) -> rusqlite::Result<Option<String>> {
        self.get(index)
    }

    fn integer(&self, index: usize) -> rusqlite::Result<i64> {
        self.get(index)
    }

    fn integer_or_null(&self, index: usize) -> rusqlite::Result<Option<i64>> {
        self.get(index)
    }

    fn flag(&self, index: usize) -> rusqlite::Result<bool> {
        self.get(index)
    }
}

#[cfg(feature = "postgres")]
impl Columns for tokio_postgres::Row {
    type Error = tokio_postgres::Error;

    fn text(&self, index: usize) -> Result<String, tokio_postgres::Error> {
        self.try_get(index)
    }

    fn text_or_null(&self, index: usize) -> Result<Option<String>, tokio_postgres::Error> {
        self.try_get(index)
    }

    fn integer(&self, index: usize) -> Result<i64, tokio_postgres::Error> {
        self.try_get(index)
    }

    fn integer_or_null(&self, index: usize) -> Result<Option<i64>, tokio_postgres::Error> {
        self.try_get(index)
    }

    fn flag(&self, index: usize) -> Result<bool, tokio_postgres::Error> {
        self.try_get(index)
    }
}
