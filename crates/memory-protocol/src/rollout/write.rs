//! Writing rollout lines: always the envelope form.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::*;

impl Serialize for RolloutLine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(ts) = &self.timestamp {
            map.serialize_entry("timestamp", ts)?;
        }
        if let Some(ordinal) = self.ordinal {
            map.serialize_entry("ordinal", &ordinal)?;
        }
        match &self.item {
            RolloutItem::StateRecord(fields) => {
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
            }
            item => {
                map.serialize_entry("type", item.item_type())?;
                match item {
                    RolloutItem::SessionMeta(meta) => map.serialize_entry("payload", meta)?,
                    RolloutItem::ResponseItem(item) => map.serialize_entry("payload", item)?,
                    RolloutItem::Compacted(c) => map.serialize_entry("payload", c)?,
                    RolloutItem::TurnContext(t) => map.serialize_entry("payload", t)?,
                    RolloutItem::EventMsg(e) => map.serialize_entry("payload", e)?,
                    RolloutItem::Other(other) => map.serialize_entry("payload", &other.payload)?,
                    RolloutItem::StateRecord(_) => {}
                }
            }
        }
        if let Some(metadata) = &self.metadata {
            map.serialize_entry("metadata", metadata)?;
        }
        map.end()
    }
}

impl Serialize for EventMsg {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len() + 1))?;
        map.serialize_entry("type", &self.event_type)?;
        for (key, value) in &self.fields {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Writes `{"type": tag, ...fields of value}`; `value` must serialize as a map.
struct Tagged<'a, T> {
    tag: &'a str,
    value: &'a T,
}

impl<T: Serialize> Serialize for Tagged<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wrapper<'a, T> {
            #[serde(rename = "type")]
            tag: &'a str,
            #[serde(flatten)]
            value: &'a T,
        }
        Wrapper {
            tag: self.tag,
            value: self.value,
        }
        .serialize(serializer)
    }
}

impl Serialize for ResponseItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tag = self.item_type();
        match self {
            ResponseItem::Message(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::Reasoning(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::FunctionCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::FunctionCallOutput(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::CustomToolCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::CustomToolCallOutput(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::LocalShellCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::WebSearchCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::Other(other) => Tagged {
                tag,
                value: &other.fields,
            }
            .serialize(serializer),
        }
    }
}

impl Serialize for ContentItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                let mut map = serializer.serialize_map(Some(2))?;
                let tag = if matches!(self, ContentItem::InputText { .. }) {
                    "input_text"
                } else {
                    "output_text"
                };
                map.serialize_entry("type", tag)?;
                map.serialize_entry("text", text)?;
                map.end()
            }
            ContentItem::InputImage { image_url, detail } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "input_image")?;
                map.serialize_entry("image_url", image_url)?;
                if let Some(detail) = detail {
                    map.serialize_entry("detail", detail)?;
                }
                map.end()
            }
            ContentItem::Other(other) => Tagged {
                tag: &other.item_type,
                value: &other.fields,
            }
            .serialize(serializer),
        }
    }
}
