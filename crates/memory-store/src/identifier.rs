//! SQL identifiers taken from configuration (a PostgreSQL schema name), which are spliced into
//! statements and so must be plain.

/// Longest identifier PostgreSQL keeps without truncating it.
const MAX_IDENTIFIER_BYTES: usize = 63;

/// True for a name that can be spliced into SQL unquoted: a lowercase letter or `_`, then
/// lowercase letters, digits and `_`, at most 63 bytes.
pub fn valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= MAX_IDENTIFIER_BYTES
}
