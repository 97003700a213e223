//! A model's search query turned into an FTS5 expression that cannot inject FTS5 syntax.
//!
//! Words are separated by whitespace; text in double quotes is one phrase. Every word and
//! phrase becomes an FTS5 string (`"..."`, inner quotes doubled), so operators, column filters
//! and `*` in the query are just text. [`Combine::All`] requires every term (the tool),
//! [`Combine::Any`] ranks by any term (recall from a user's message).

/// Longest query accepted, in characters.
pub(crate) const MAX_QUERY_CHARS: usize = 1_000;
/// Most terms used; recall from a long message keeps the first ones.
const MAX_TERMS: usize = 32;

/// How terms combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    /// Every term must match.
    All,
    /// Any term may match; more matching terms rank higher.
    Any,
}

/// Why a query was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QueryError {
    Blank,
    TooLong,
    UnclosedQuote,
    NoWords,
}

impl QueryError {
    pub(crate) fn reason(&self) -> String {
        match self {
            QueryError::Blank => "the query is blank".to_owned(),
            QueryError::TooLong => format!("the query is longer than {MAX_QUERY_CHARS} characters"),
            QueryError::UnclosedQuote => "the query has an unclosed double quote".to_owned(),
            QueryError::NoWords => "the query has no letters or digits to search for".to_owned(),
        }
    }
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FtsQuery {
    /// The FTS5 `MATCH` expression.
    pub(crate) expression: String,
}

/// Parses `query` (see the module docs).
pub(crate) fn parse(query: &str, combine: Combine) -> Result<FtsQuery, QueryError> {
    if query.trim().is_empty() {
        return Err(QueryError::Blank);
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(QueryError::TooLong);
    }
    let mut terms = Vec::new();
    let mut rest = query;
    while let Some(start) = rest.find(|ch: char| !ch.is_whitespace()) {
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix('"') {
            let end = after.find('"').ok_or(QueryError::UnclosedQuote)?;
            terms.push(&after[..end]);
            rest = &after[end + 1..];
        } else {
            let end = rest
                .find(|ch: char| ch.is_whitespace() || ch == '"')
                .unwrap_or(rest.len());
            terms.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    let quoted: Vec<String> = terms
        .into_iter()
        .filter(|term| term.chars().any(char::is_alphanumeric))
        .take(MAX_TERMS)
        .map(|term| {
            let text = term.replace(|ch: char| ch.is_control(), " ");
            format!("\"{}\"", text.replace('"', "\"\""))
        })
        .collect();
    if quoted.is_empty() {
        return Err(QueryError::NoWords);
    }
    let joiner = match combine {
        Combine::All => " AND ",
        Combine::Any => " OR ",
    };
    Ok(FtsQuery {
        expression: quoted.join(joiner),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn words_and_phrases_become_fts_strings() {
        assert_eq!(
            parse(r#"cargo "invalid date" NEAR(x) -y*"#, Combine::All)
                .unwrap()
                .expression,
            r#""cargo" AND "invalid date" AND "NEAR(x)" AND "-y*""#
        );
        assert_eq!(
            parse("a b", Combine::Any).unwrap().expression,
            r#""a" OR "b""#
        );
        assert_eq!(parse("  ", Combine::All), Err(QueryError::Blank));
        assert_eq!(
            parse("\"open", Combine::All),
            Err(QueryError::UnclosedQuote)
        );
        assert_eq!(parse("-- ** ::", Combine::All), Err(QueryError::NoWords));
        assert_eq!(
            parse(&"x".repeat(MAX_QUERY_CHARS + 1), Combine::All),
            Err(QueryError::TooLong)
        );
    }

    proptest! {
        #[test]
        fn an_accepted_query_is_only_quoted_strings(query in any::<String>()) {
            if let Ok(parsed) = parse(&query, Combine::All) {
                // Outside the quoted strings only the AND joiner remains.
                let mut outside = String::new();
                let mut inside = false;
                let mut chars = parsed.expression.chars().peekable();
                while let Some(ch) = chars.next() {
                    if ch == '"' {
                        if inside && chars.peek() == Some(&'"') {
                            chars.next();
                            continue;
                        }
                        inside = !inside;
                        continue;
                    }
                    if !inside {
                        outside.push(ch);
                    }
                }
                prop_assert!(!inside);
                prop_assert!(outside.split(" AND ").all(str::is_empty), "{:?}", outside);
            }
        }
    }
}
