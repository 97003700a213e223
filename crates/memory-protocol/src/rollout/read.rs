//! Reading rollout lines: every format version, tolerantly.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::error::Error;

use super::*;

impl RolloutLine {
    /// Parses one line of a rollout file (any format version).
    pub fn parse(line: &str) -> Result<RolloutLine, Error> {
        let value: Value = serde_json::from_str(line).map_err(Error::Json)?;
        RolloutLine::from_value(value)
    }

    /// Converts one parsed line (any format version).
    pub fn from_value(value: Value) -> Result<RolloutLine, Error> {
        let Value::Object(mut map) = value else {
            return Err(Error::NotAnObject(json_kind(&value)));
        };
        let timestamp = match map.remove("timestamp") {
            Some(Value::String(ts)) => Some(ts),
            Some(other) => {
                // Not a line-level timestamp we understand: keep it with the item.
                map.insert("timestamp".to_owned(), other);
                None
            }
            None => None,
        };
        let ordinal = match map.get("ordinal").and_then(Value::as_u64) {
            Some(n) => {
                map.remove("ordinal");
                Some(n)
            }
            None => None,
        };
        let has_string_type = matches!(map.get("type"), Some(Value::String(_)));

        if has_string_type && map.contains_key("payload") {
            let metadata = map.remove("metadata");
            let item_type = take_string(&mut map, "type");
            let payload = map.remove("payload").unwrap_or(Value::Null);
            let item = RolloutItem::from_envelope(item_type, payload)?;
            return Ok(RolloutLine {
                timestamp,
                ordinal,
                metadata,
                item,
            });
        }
        if map.contains_key("record_type") {
            return Ok(RolloutLine {
                timestamp,
                ordinal,
                metadata: None,
                item: RolloutItem::StateRecord(map),
            });
        }
        if has_string_type {
            // Oldest format: a bare response item.
            let item = ResponseItem::from_map(map)?;
            return Ok(RolloutLine {
                timestamp,
                ordinal,
                metadata: None,
                item: RolloutItem::ResponseItem(item),
            });
        }
        if map.contains_key("id") || map.contains_key("instructions") {
            // Oldest format: the session header `{id, timestamp, instructions, git}`.
            if let Some(ts) = timestamp {
                map.insert("timestamp".to_owned(), Value::String(ts));
            }
            let meta =
                serde_json::from_value(Value::Object(map)).map_err(|e| Error::InvalidItem {
                    item_type: "session_meta".to_owned(),
                    message: e.to_string(),
                })?;
            return Ok(RolloutLine {
                timestamp: None,
                ordinal,
                metadata: None,
                item: RolloutItem::SessionMeta(meta),
            });
        }
        // No type at all (`{}` has been seen): keep it as an untyped line.
        Ok(RolloutLine {
            timestamp,
            ordinal,
            metadata: None,
            item: RolloutItem::Other(UnknownRolloutItem {
                item_type: String::new(),
                payload: Value::Object(map),
            }),
        })
    }
}

impl RolloutItem {
    /// The envelope `type` names this crate models.
    pub const KNOWN_TYPES: [&'static str; 5] = [
        "session_meta",
        "response_item",
        "compacted",
        "turn_context",
        "event_msg",
    ];

    fn from_envelope(item_type: String, payload: Value) -> Result<RolloutItem, Error> {
        let invalid = |e: serde_json::Error| Error::InvalidItem {
            item_type: item_type.clone(),
            message: e.to_string(),
        };
        Ok(match item_type.as_str() {
            "session_meta" => RolloutItem::SessionMeta(
                serde_json::from_value(null_to_object(payload)).map_err(invalid)?,
            ),
            "response_item" => RolloutItem::ResponseItem(ResponseItem::from_value(payload)?),
            "compacted" => RolloutItem::Compacted(
                serde_json::from_value(null_to_object(payload)).map_err(invalid)?,
            ),
            "turn_context" => RolloutItem::TurnContext(
                serde_json::from_value(null_to_object(payload)).map_err(invalid)?,
            ),
            "event_msg" => {
                let Value::Object(mut fields) = payload else {
                    return Err(Error::InvalidItem {
                        item_type,
                        message: format!(
                            "payload must be an object, found {}",
                            json_kind(&payload)
                        ),
                    });
                };
                let event_type = match fields.remove("type") {
                    Some(Value::String(t)) => t,
                    Some(other) => {
                        fields.insert("type".to_owned(), other);
                        String::new()
                    }
                    None => String::new(),
                };
                RolloutItem::EventMsg(EventMsg { event_type, fields })
            }
            _ => RolloutItem::Other(UnknownRolloutItem { item_type, payload }),
        })
    }

    /// The envelope `type` this item is written with (`record_type` lines answer `state`).
    pub fn item_type(&self) -> &str {
        match self {
            RolloutItem::SessionMeta(_) => "session_meta",
            RolloutItem::ResponseItem(_) => "response_item",
            RolloutItem::Compacted(_) => "compacted",
            RolloutItem::TurnContext(_) => "turn_context",
            RolloutItem::EventMsg(_) => "event_msg",
            RolloutItem::StateRecord(_) => "state",
            RolloutItem::Other(other) => &other.item_type,
        }
    }
}

impl ResponseItem {
    /// The item `type` names this crate models.
    pub const KNOWN_TYPES: [&'static str; 8] = [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    ];

    /// Converts a parsed item.
    pub fn from_value(value: Value) -> Result<ResponseItem, Error> {
        match value {
            Value::Object(map) => ResponseItem::from_map(map),
            other => Err(Error::InvalidItem {
                item_type: "response_item".to_owned(),
                message: format!("payload must be an object, found {}", json_kind(&other)),
            }),
        }
    }

    fn from_map(mut map: Map<String, Value>) -> Result<ResponseItem, Error> {
        let item_type = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(Error::InvalidItem {
                    item_type: "response_item".to_owned(),
                    message: "missing string field `type`".to_owned(),
                });
            }
        };
        fn typed<T: serde::de::DeserializeOwned>(
            item_type: &str,
            map: Map<String, Value>,
        ) -> Result<T, Error> {
            serde_json::from_value(Value::Object(map)).map_err(|e| Error::InvalidItem {
                item_type: item_type.to_owned(),
                message: e.to_string(),
            })
        }
        Ok(match item_type.as_str() {
            "message" => ResponseItem::Message(typed(&item_type, map)?),
            "reasoning" => ResponseItem::Reasoning(typed(&item_type, map)?),
            "function_call" => ResponseItem::FunctionCall(typed(&item_type, map)?),
            "function_call_output" => ResponseItem::FunctionCallOutput(typed(&item_type, map)?),
            "custom_tool_call" => ResponseItem::CustomToolCall(typed(&item_type, map)?),
            "custom_tool_call_output" => {
                ResponseItem::CustomToolCallOutput(typed(&item_type, map)?)
            }
            "local_shell_call" => ResponseItem::LocalShellCall(typed(&item_type, map)?),
            "web_search_call" => ResponseItem::WebSearchCall(typed(&item_type, map)?),
            _ => {
                map.remove("type");
                ResponseItem::Other(UnknownItem {
                    item_type,
                    fields: map,
                })
            }
        })
    }

    /// The item's `type`.
    pub fn item_type(&self) -> &str {
        match self {
            ResponseItem::Message(_) => "message",
            ResponseItem::Reasoning(_) => "reasoning",
            ResponseItem::FunctionCall(_) => "function_call",
            ResponseItem::FunctionCallOutput(_) => "function_call_output",
            ResponseItem::CustomToolCall(_) => "custom_tool_call",
            ResponseItem::CustomToolCallOutput(_) => "custom_tool_call_output",
            ResponseItem::LocalShellCall(_) => "local_shell_call",
            ResponseItem::WebSearchCall(_) => "web_search_call",
            ResponseItem::Other(other) => &other.item_type,
        }
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> String {
    match map.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn null_to_object(value: Value) -> Value {
    match value {
        Value::Null => Value::Object(Map::new()),
        other => other,
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'de> Deserialize<'de> for RolloutLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RolloutLine::from_value(value).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for ResponseItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ResponseItem::from_value(value).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for ContentItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct ImageFields {
            #[serde(default)]
            image_url: String,
            #[serde(default)]
            detail: Option<String>,
        }
        let value = Value::deserialize(deserializer)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom(format!(
                "content item must be an object, found {}",
                json_kind(&value)
            )));
        };
        let item_type = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(D::Error::custom(
                    "content item is missing string field `type`",
                ));
            }
        };
        let text = |map: &mut Map<String, Value>| match map.remove("text") {
            Some(Value::String(text)) => Ok(text),
            None => Ok(String::new()),
            Some(other) => Err(D::Error::custom(format!(
                "`{item_type}` text must be a string, found {}",
                json_kind(&other)
            ))),
        };
        Ok(match item_type.as_str() {
            "input_text" => ContentItem::InputText {
                text: text(&mut map)?,
            },
            "output_text" => ContentItem::OutputText {
                text: text(&mut map)?,
            },
            "input_image" => {
                let fields: ImageFields =
                    serde_json::from_value(Value::Object(map)).map_err(D::Error::custom)?;
                ContentItem::InputImage {
                    image_url: fields.image_url,
                    detail: fields.detail,
                }
            }
            _ => {
                map.remove("type");
                ContentItem::Other(UnknownItem {
                    item_type,
                    fields: map,
                })
            }
        })
    }
}

impl<'de> Deserialize<'de> for EventMsg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match RolloutItem::from_envelope("event_msg".to_owned(), Value::deserialize(deserializer)?)
        {
            Ok(RolloutItem::EventMsg(event)) => Ok(event),
            Ok(_) => Err(D::Error::custom("not an event")),
            Err(e) => Err(D::Error::custom(e)),
        }
    }
}
