//! Arbitrary `RolloutLine` values survive a trip through JSON text.

use std::collections::BTreeMap;

use memory_protocol::rollout::{
    BaseInstructions, Compacted, ContentItem, CustomToolCallItem, CustomToolCallOutputItem,
    EventMsg, FunctionCallItem, FunctionCallOutputItem, GitInfo, LocalShellAction,
    LocalShellCallItem, MessageItem, ReasoningItem, ReasoningText, ResponseItem, RolloutItem,
    RolloutLine, SessionMeta, SessionSource, ToolOutput, TurnContext, UnknownItem,
    UnknownRolloutItem, WebSearchCallItem,
};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,12}", "[a-z_]{1,8}", Just(String::new()), "\\PC{0,6}"]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn json_value() -> BoxedStrategy<Value> {
    json_value_unboxed().boxed()
}

fn json_value_unboxed() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An object whose keys avoid `reserved`.
fn json_object(reserved: &'static [&'static str]) -> impl Strategy<Value = Map<String, Value>> {
    btree_map("x_[a-z]{1,6}", json_value(), 0..3).prop_map(move |m| {
        m.into_iter()
            .filter(|(k, _)| !reserved.contains(&k.as_str()))
            .collect()
    })
}

fn unknown_type(known: &'static [&'static str]) -> impl Strategy<Value = String> {
    "[a-z_]{0,14}".prop_filter("must not be a modelled type", move |t| {
        !known.contains(&t.as_str())
    })
}

fn content_item() -> BoxedStrategy<ContentItem> {
    content_item_unboxed().boxed()
}

fn content_item_unboxed() -> impl Strategy<Value = ContentItem> {
    prop_oneof![
        text().prop_map(|text| ContentItem::InputText { text }),
        text().prop_map(|text| ContentItem::OutputText { text }),
        (text(), option::of(text()))
            .prop_map(|(image_url, detail)| ContentItem::InputImage { image_url, detail }),
        (
            unknown_type(&["input_text", "output_text", "input_image"]),
            json_object(&[])
        )
            .prop_map(|(item_type, fields)| ContentItem::Other(UnknownItem { item_type, fields })),
    ]
}

fn tool_output() -> BoxedStrategy<ToolOutput> {
    tool_output_unboxed().boxed()
}

fn tool_output_unboxed() -> impl Strategy<Value = ToolOutput> {
    prop_oneof![
        text().prop_map(ToolOutput::Text),
        vec(content_item(), 0..3).prop_map(ToolOutput::Parts),
        json_object(&[]).prop_map(ToolOutput::Object),
    ]
}

fn reasoning_text() -> impl Strategy<Value = ReasoningText> {
    (text(), text()).prop_map(|(text_type, text)| ReasoningText { text_type, text })
}

fn response_item() -> BoxedStrategy<ResponseItem> {
    response_item_unboxed().boxed()
}

fn response_item_unboxed() -> impl Strategy<Value = ResponseItem> {
    let id = || option::of(text());
    prop_oneof![
        (id(), text(), vec(content_item(), 0..3), option::of(text())).prop_map(
            |(id, role, content, phase)| ResponseItem::Message(MessageItem {
                id,
                role,
                content,
                phase
            })
        ),
        (
            id(),
            vec(reasoning_text(), 0..2),
            option::of(vec(reasoning_text(), 0..2)),
            option::of(text())
        )
            .prop_map(|(id, summary, content, encrypted_content)| {
                ResponseItem::Reasoning(ReasoningItem {
                    id,
                    summary,
                    content,
                    encrypted_content,
                })
            }),
        (id(), text(), option::of(text()), text(), text()).prop_map(
            |(id, name, namespace, arguments, call_id)| {
                ResponseItem::FunctionCall(FunctionCallItem {
                    id,
                    name,
                    namespace,
                    arguments,
                    call_id,
                })
            }
        ),
        (id(), text(), tool_output()).prop_map(|(id, call_id, output)| {
            ResponseItem::FunctionCallOutput(FunctionCallOutputItem {
                id,
                call_id,
                output,
            })
        }),
        (
            id(),
            option::of(text()),
            text(),
            text(),
            option::of(text()),
            text()
        )
            .prop_map(|(id, status, call_id, name, namespace, input)| {
                ResponseItem::CustomToolCall(CustomToolCallItem {
                    id,
                    status,
                    call_id,
                    name,
                    namespace,
                    input,
                })
            }),
        (id(), text(), option::of(text()), tool_output()).prop_map(
            |(id, call_id, name, output)| {
                ResponseItem::CustomToolCallOutput(CustomToolCallOutputItem {
                    id,
                    call_id,
                    name,
                    output,
                })
            }
        ),
        (
            id(),
            option::of(text()),
            option::of(text()),
            text(),
            vec(text(), 0..3),
            option::of(any::<u64>()),
            option::of(btree_map("[A-Z]{1,4}", text(), 0..2)),
        )
            .prop_map(
                |(id, call_id, status, action_type, command, timeout_ms, env)| {
                    ResponseItem::LocalShellCall(LocalShellCallItem {
                        id,
                        call_id,
                        status,
                        action: LocalShellAction {
                            action_type,
                            command,
                            timeout_ms,
                            working_directory: None,
                            env,
                            user: None,
                        },
                    })
                }
            ),
        (
            id(),
            option::of(text()),
            option::of(json_value().prop_filter("null reads as absent", |v| !v.is_null()))
        )
            .prop_map(|(id, status, action)| {
                ResponseItem::WebSearchCall(WebSearchCallItem { id, status, action })
            }),
        (unknown_type(&ResponseItem::KNOWN_TYPES), json_object(&[]))
            .prop_map(|(item_type, fields)| ResponseItem::Other(UnknownItem { item_type, fields })),
    ]
}

const META_FIELDS: &[&str] = &[
    "id",
    "session_id",
    "timestamp",
    "cwd",
    "originator",
    "cli_version",
    "source",
    "model_provider",
    "instructions",
    "base_instructions",
    "git",
];

fn session_meta() -> BoxedStrategy<SessionMeta> {
    session_meta_unboxed().boxed()
}

fn session_meta_unboxed() -> impl Strategy<Value = SessionMeta> {
    (
        (
            option::of(text()),
            option::of(text()),
            option::of(text()),
            option::of(text()),
        ),
        (
            option::of(prop_oneof![
                text().prop_map(SessionSource::Named),
                json_object(&[]).prop_map(SessionSource::Structured),
            ]),
            option::of(prop_oneof![
                text().prop_map(BaseInstructions::Text),
                text().prop_map(|text| BaseInstructions::Object { text }),
            ]),
            option::of((option::of(text()), option::of(text())).prop_map(
                |(commit_hash, branch)| GitInfo {
                    commit_hash,
                    branch,
                    repository_url: None,
                },
            )),
        ),
        json_object(META_FIELDS),
    )
        .prop_map(
            |((id, session_id, timestamp, cwd), (source, base_instructions, git), extra)| {
                SessionMeta {
                    id,
                    session_id,
                    timestamp,
                    cwd,
                    originator: None,
                    cli_version: None,
                    source,
                    model_provider: None,
                    instructions: None,
                    base_instructions,
                    git,
                    extra: extra.into_iter().collect::<BTreeMap<_, _>>(),
                }
            },
        )
}

fn rollout_item() -> BoxedStrategy<RolloutItem> {
    rollout_item_unboxed().boxed()
}

fn rollout_item_unboxed() -> impl Strategy<Value = RolloutItem> {
    prop_oneof![
        session_meta().prop_map(RolloutItem::SessionMeta),
        response_item().prop_map(RolloutItem::ResponseItem),
        (text(), json_object(&["message"])).prop_map(|(message, extra)| {
            RolloutItem::Compacted(Compacted {
                message,
                extra: extra.into_iter().collect(),
            })
        }),
        (
            option::of(text()),
            option::of(text()),
            json_object(&["cwd", "model"])
        )
            .prop_map(|(cwd, model, extra)| {
                RolloutItem::TurnContext(TurnContext {
                    cwd,
                    model,
                    extra: extra.into_iter().collect(),
                })
            }),
        (text(), json_object(&[])).prop_map(|(event_type, fields)| RolloutItem::EventMsg(
            EventMsg { event_type, fields }
        )),
        (unknown_type(&RolloutItem::KNOWN_TYPES), json_value()).prop_map(|(item_type, payload)| {
            RolloutItem::Other(UnknownRolloutItem { item_type, payload })
        }),
    ]
}

fn rollout_line() -> impl Strategy<Value = RolloutLine> {
    let enveloped = (
        option::of(text()),
        option::of(any::<u64>()),
        option::of(json_value()),
        rollout_item(),
    )
        .prop_map(|(timestamp, ordinal, metadata, item)| RolloutLine {
            timestamp,
            ordinal,
            metadata,
            item,
        });
    // A state record of the oldest format carries no envelope and no metadata.
    let state = (
        option::of(text()),
        option::of(any::<u64>()),
        json_object(&[]),
        text(),
    )
        .prop_map(|(timestamp, ordinal, mut fields, record_type)| {
            fields.insert("record_type".to_owned(), Value::String(record_type));
            RolloutLine {
                timestamp,
                ordinal,
                metadata: None,
                item: RolloutItem::StateRecord(fields),
            }
        });
    prop_oneof![4 => enveloped, 1 => state]
}

proptest! {
    #[test]
    fn rollout_lines_round_trip_through_json(line in rollout_line()) {
        let text = serde_json::to_string(&line).unwrap();
        let parsed = RolloutLine::parse(&text).unwrap();
        prop_assert_eq!(&parsed, &line);
        // Deserialize goes through the same conversion.
        let via_serde: RolloutLine = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(via_serde, line);
    }

    #[test]
    fn any_json_object_line_parses_or_gives_a_typed_error(value in json_value()) {
        // Never panics; objects of unknown shape are kept.
        let text = value.to_string();
        match RolloutLine::parse(&text) {
            Ok(_) => {}
            Err(err) => prop_assert!(!err.to_string().is_empty()),
        }
    }
}
