//! A serde deserializer over parsed TOML values whose errors say what went wrong in typed form
//! (unknown key, wrong type, out of range, unknown word) and at which key, so the loader can
//! turn them into [`crate::Error`] without reading message text back.

use std::fmt;

use serde::de::value::{SeqDeserializer, StrDeserializer};
use serde::de::{
    self, DeserializeSeed, Deserializer, Expected, IntoDeserializer, MapAccess, Unexpected, Visitor,
};

/// What a value failed on, and at which key of the table (filled in by the key's [`Field`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub(crate) key: Option<String>,
    pub(crate) kind: FieldErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldErrorKind {
    UnknownKey { known: String },
    WrongType { expected: String, found: String },
    OutOfRange { range: String, found: String },
    UnknownValue { allowed: String, found: String },
    Other(String),
}

impl FieldError {
    fn new(kind: FieldErrorKind) -> FieldError {
        FieldError { key: None, kind }
    }

    fn at(mut self, key: &str) -> FieldError {
        self.key.get_or_insert_with(|| key.to_owned());
        self
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.key.as_deref().unwrap_or("?");
        match &self.kind {
            FieldErrorKind::UnknownKey { known } => {
                write!(f, "unknown key `{key}` (known: {known})")
            }
            FieldErrorKind::WrongType { expected, found } => {
                write!(f, "`{key}` must be {expected}, found {found}")
            }
            FieldErrorKind::OutOfRange { range, found } => {
                write!(f, "`{key}` must be {range}, found {found}")
            }
            FieldErrorKind::UnknownValue { allowed, found } => {
                write!(f, "`{key}` must be one of {allowed}, found `{found}`")
            }
            FieldErrorKind::Other(message) => write!(f, "`{key}`: {message}"),
        }
    }
}

impl std::error::Error for FieldError {}

impl de::Error for FieldError {
    fn custom<T: fmt::Display>(message: T) -> FieldError {
        FieldError::new(FieldErrorKind::Other(message.to_string()))
    }

    fn invalid_type(found: Unexpected<'_>, expected: &dyn Expected) -> FieldError {
        FieldError::new(FieldErrorKind::WrongType {
            expected: expected_in_words(&expected.to_string()),
            found: type_of(&found).to_owned(),
        })
    }

    fn invalid_value(found: Unexpected<'_>, expected: &dyn Expected) -> FieldError {
        let expected = expected.to_string();
        let number = match found {
            Unexpected::Signed(n) => Some(n.to_string()),
            Unexpected::Unsigned(n) => Some(n.to_string()),
            _ => None,
        };
        match number {
            // A number a narrower integer type cannot hold, or one a field's own
            // deserializer refused with its range as the expectation.
            Some(found) => FieldError::new(FieldErrorKind::OutOfRange {
                range: integer_range(&expected).unwrap_or(expected),
                found,
            }),
            None => FieldError::new(FieldErrorKind::WrongType {
                expected: expected_in_words(&expected),
                found: type_of(&found).to_owned(),
            }),
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> FieldError {
        FieldError::new(FieldErrorKind::UnknownValue {
            allowed: expected.join(", "),
            found: variant.to_owned(),
        })
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> FieldError {
        FieldError {
            key: Some(field.to_owned()),
            kind: FieldErrorKind::UnknownKey {
                known: expected.join(", "),
            },
        }
    }
}

/// serde's name for what a field takes, in words a config file's reader knows.
fn expected_in_words(expected: &str) -> String {
    match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => "an integer".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "a string" | "a borrowed string" | "a character" => "a string".to_owned(),
        other => other.to_owned(),
    }
}

/// The range of a primitive integer type named by serde, in words.
fn integer_range(expected: &str) -> Option<String> {
    let (min, max): (i128, i128) = match expected {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        _ => return None,
    };
    Some(format!("between {min} and {max}"))
}

/// The TOML name of what serde found.
fn type_of(found: &Unexpected<'_>) -> &'static str {
    match found {
        Unexpected::Bool(_) => "boolean",
        Unexpected::Unsigned(_) | Unexpected::Signed(_) => "integer",
        Unexpected::Float(_) => "float",
        Unexpected::Char(_) | Unexpected::Str(_) => "string",
        Unexpected::Seq => "array",
        Unexpected::Map => "table",
        _ => "another type",
    }
}

/// The TOML name of a value's type.
pub(crate) fn toml_type(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "string",
        toml::Value::Integer(_) => "integer",
        toml::Value::Float(_) => "float",
        toml::Value::Boolean(_) => "boolean",
        toml::Value::Datetime(_) => "datetime",
        toml::Value::Array(_) => "array",
        toml::Value::Table(_) => "table",
    }
}

/// Deserializes an owner's struct from its table; errors name the key (without the table).
pub(crate) fn from_table<'de, T: de::Deserialize<'de>>(
    table: &'de toml::Table,
) -> Result<T, FieldError> {
    T::deserialize(TableDeserializer(table))
}

struct TableDeserializer<'de>(&'de toml::Table);

impl<'de> Deserializer<'de> for TableDeserializer<'de> {
    type Error = FieldError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        visitor.visit_map(Entries {
            entries: self.0.iter(),
            value: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// A table's entries; an error from a value, however the field deserializes it (a
/// `deserialize_with` function included), is put under the value's key.
struct Entries<'de> {
    entries: toml::map::Iter<'de, String, toml::Value>,
    value: Option<(&'de str, &'de toml::Value)>,
}

impl<'de> MapAccess<'de> for Entries<'de> {
    type Error = FieldError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, FieldError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        seed.deserialize(StrDeserializer::<FieldError>::new(key))
            .map(Some)
            .map_err(|error| error.at(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, FieldError> {
        let Some((key, value)) = self.value.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        seed.deserialize(Field { key, value })
            .map_err(|error| error.at(key))
    }
}

/// One value of a table, under its key.
struct Field<'de> {
    key: &'de str,
    value: &'de toml::Value,
}

impl<'de> IntoDeserializer<'de, FieldError> for Field<'de> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for Field<'de> {
    type Error = FieldError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        let key = self.key;
        let result = match self.value {
            toml::Value::String(text) => visitor.visit_borrowed_str(text),
            toml::Value::Integer(number) => visitor.visit_i64(*number),
            toml::Value::Float(number) => visitor.visit_f64(*number),
            toml::Value::Boolean(flag) => visitor.visit_bool(*flag),
            toml::Value::Datetime(datetime) => visitor
                .visit_string(datetime.to_string())
                .map_err(|error| found_instead(error, "datetime")),
            toml::Value::Array(items) => visitor.visit_seq(SeqDeserializer::new(
                items.iter().map(|value| Field { key, value }),
            )),
            toml::Value::Table(table) => visitor.visit_map(Entries {
                entries: table.iter(),
                value: None,
            }),
        };
        result.map_err(|error| error.at(key))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        let key = self.key;
        visitor.visit_some(self).map_err(|error| error.at(key))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        match self.value {
            toml::Value::String(text) => visitor
                .visit_enum(StrDeserializer::<FieldError>::new(text))
                .map_err(|error| error.at(self.key)),
            other => Err(FieldError::new(FieldErrorKind::WrongType {
                expected: "a string".to_owned(),
                found: toml_type(other).to_owned(),
            })
            .at(self.key)),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A datetime is handed over as text; a field that wanted something else found a datetime.
fn found_instead(mut error: FieldError, found: &str) -> FieldError {
    if let FieldErrorKind::WrongType { found: what, .. } = &mut error.kind {
        *what = found.to_owned();
    }
    error
}
