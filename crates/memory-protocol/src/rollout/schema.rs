//! JSON Schemas of the rollout types, written by hand to match the tolerant reader.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use super::*;

/// `{"if": {type == tag}, "then": schema}` for one variant of a `type`-tagged union.
fn tagged_branch(tag_field: &str, tag: &str, then: Schema) -> Value {
    serde_json::json!({
        "if": {
            "properties": { tag_field: { "const": tag } },
            "required": [tag_field]
        },
        "then": then
    })
}

fn tag_property_then(field: &str, schema: Schema) -> Schema {
    json_schema!({ "properties": { field: schema } })
}

impl JsonSchema for RolloutLine {
    fn schema_name() -> Cow<'static, str> {
        "RolloutLine".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let branches = vec![
            tagged_branch(
                "type",
                "session_meta",
                tag_property_then("payload", generator.subschema_for::<SessionMeta>()),
            ),
            tagged_branch(
                "type",
                "response_item",
                tag_property_then("payload", generator.subschema_for::<ResponseItem>()),
            ),
            tagged_branch(
                "type",
                "compacted",
                tag_property_then("payload", generator.subschema_for::<Compacted>()),
            ),
            tagged_branch(
                "type",
                "turn_context",
                tag_property_then("payload", generator.subschema_for::<TurnContext>()),
            ),
            tagged_branch(
                "type",
                "event_msg",
                tag_property_then("payload", generator.subschema_for::<EventMsg>()),
            ),
        ];
        json_schema!({
            "description": "One line of a codex rollout file, as written (the envelope form). \
                Readers also accept the oldest format: a bare `{id, timestamp, instructions, git}` \
                header, bare response items, and `{\"record_type\": ...}` lines.",
            "type": "object",
            "properties": {
                "timestamp": { "type": "string", "description": "RFC 3339, 3 to 9 fractional digits" },
                "ordinal": { "type": "integer", "minimum": 0 },
                "type": { "type": "string" },
                "payload": true,
                "metadata": true
            },
            "anyOf": [
                { "required": ["type", "payload"] },
                { "required": ["record_type"] }
            ],
            "allOf": branches
        })
    }
}

impl JsonSchema for ResponseItem {
    fn schema_name() -> Cow<'static, str> {
        "ResponseItem".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let branches = vec![
            tagged_branch("type", "message", generator.subschema_for::<MessageItem>()),
            tagged_branch(
                "type",
                "reasoning",
                generator.subschema_for::<ReasoningItem>(),
            ),
            tagged_branch(
                "type",
                "function_call",
                generator.subschema_for::<FunctionCallItem>(),
            ),
            tagged_branch(
                "type",
                "function_call_output",
                generator.subschema_for::<FunctionCallOutputItem>(),
            ),
            tagged_branch(
                "type",
                "custom_tool_call",
                generator.subschema_for::<CustomToolCallItem>(),
            ),
            tagged_branch(
                "type",
                "custom_tool_call_output",
                generator.subschema_for::<CustomToolCallOutputItem>(),
            ),
            tagged_branch(
                "type",
                "local_shell_call",
                generator.subschema_for::<LocalShellCallItem>(),
            ),
            tagged_branch(
                "type",
                "web_search_call",
                generator.subschema_for::<WebSearchCallItem>(),
            ),
        ];
        json_schema!({
            "description": "A model input or output item, tagged by `type`. Types other than the \
                modelled ones are accepted and kept as JSON.",
            "type": "object",
            "required": ["type"],
            "properties": { "type": { "type": "string" } },
            "allOf": branches
        })
    }
}

impl JsonSchema for ContentItem {
    fn schema_name() -> Cow<'static, str> {
        "ContentItem".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let text = json_schema!({ "properties": { "text": { "type": "string" } } });
        let image = json_schema!({
            "properties": {
                "image_url": { "type": "string" },
                "detail": { "type": "string" }
            }
        });
        json_schema!({
            "description": "A part of a message or tool output, tagged by `type`. Types other \
                than `input_text`, `output_text` and `input_image` are accepted and kept as JSON.",
            "type": "object",
            "required": ["type"],
            "properties": { "type": { "type": "string" } },
            "allOf": [
                tagged_branch("type", "input_text", text.clone()),
                tagged_branch("type", "output_text", text),
                tagged_branch("type", "input_image", image)
            ]
        })
    }
}

impl JsonSchema for EventMsg {
    fn schema_name() -> Cow<'static, str> {
        "EventMsg".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A UI or lifecycle event, tagged by its own `type`.",
            "type": "object",
            "properties": { "type": { "type": "string" } }
        })
    }
}
