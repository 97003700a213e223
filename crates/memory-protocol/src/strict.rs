//! The strict subset of JSON Schema that structured-output APIs accept.
//!
//! A schema sent to a model as the required output shape, or exported as a tool's parameters,
//! must stay inside the subset OpenAI's strict mode (and the servers that copy it) enforce:
//!
//! - the root is an object schema;
//! - every object schema sets `additionalProperties: false` and lists every property in
//!   `required` (an optional value is a union with `null`, not a missing key);
//! - alternatives use `anyOf`, never `oneOf` or `allOf`;
//! - a fixed value is a one-value `enum`, never `const`;
//! - `$ref` points into the schema's own `$defs` (`#/$defs/NAME`) and nowhere else;
//! - none of `not`, `if`/`then`/`else`, `patternProperties`, `dependentRequired`,
//!   `dependentSchemas`, `unevaluatedProperties` or `propertyNames`.
//!
//! [`violations`] lists every breach with its JSON pointer; [`make_strict`] rewrites what
//! schemars derives (`oneOf` for tagged enums, `const` for tags, optional fields) into the
//! subset.

use serde_json::{Map, Value};

/// Keywords the strict subset refuses outright.
const REFUSED_KEYWORDS: [&str; 10] = [
    "oneOf",
    "allOf",
    "const",
    "not",
    "if",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "propertyNames",
];

/// Every way `schema` leaves the strict subset, as `pointer: what` lines. Empty means strict.
pub fn violations(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if !is_object_schema(schema) {
        found.push("(root): the root must be an object schema".to_owned());
    }
    walk(schema, schema, "", &mut found);
    found
}

fn walk(root: &Value, node: &Value, pointer: &str, found: &mut Vec<String>) {
    let Some(map) = node.as_object() else {
        if !node.is_boolean() {
            found.push(format!("{}: a schema must be an object", shown(pointer)));
        }
        return;
    };
    for keyword in REFUSED_KEYWORDS {
        if map.contains_key(keyword) {
            found.push(format!("{}: `{keyword}` is not allowed", shown(pointer)));
        }
    }
    if let Some(target) = map.get("$ref") {
        match target.as_str().and_then(|t| t.strip_prefix("#/$defs/")) {
            Some(name) if root.pointer(&format!("/$defs/{name}")).is_some() => {}
            _ => found.push(format!(
                "{}: `$ref` must point to an entry of the root's `$defs`",
                shown(pointer)
            )),
        }
    }
    if is_object_schema(node) {
        check_object(map, pointer, found);
    }
    for (keyword, child) in map {
        let here = format!("{pointer}/{}", escape_pointer(keyword));
        match keyword.as_str() {
            "properties" | "$defs" | "definitions" => {
                if let Some(children) = child.as_object() {
                    for (name, schema) in children {
                        walk(
                            root,
                            schema,
                            &format!("{here}/{}", escape_pointer(name)),
                            found,
                        );
                    }
                }
            }
            "items" | "additionalProperties" | "contains" if child.is_object() => {
                walk(root, child, &here, found);
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(children) = child.as_array() {
                    for (index, schema) in children.iter().enumerate() {
                        walk(root, schema, &format!("{here}/{index}"), found);
                    }
                }
            }
            _ => {}
        }
    }
}

fn check_object(map: &Map<String, Value>, pointer: &str, found: &mut Vec<String>) {
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        found.push(format!(
            "{}: an object must set `additionalProperties: false`",
            shown(pointer)
        ));
    }
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for name in properties.keys() {
            if !required.contains(&name.as_str()) {
                found.push(format!(
                    "{}: property `{name}` must be listed in `required`",
                    shown(pointer)
                ));
            }
        }
    }
}

/// True for a schema that describes a JSON object.
fn is_object_schema(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => node.get("properties").is_some(),
    }
}

fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Rewrites a derived schema into the strict subset:
///
/// - `oneOf` becomes `anyOf` (a tagged enum's variants differ by their tag, so "any" and "one"
///   accept the same documents), and an `allOf` of one schema is inlined;
/// - `const: X` becomes `enum: [X]`;
/// - every object gets `additionalProperties: false`, and a property missing from `required`
///   is added to it with `null` allowed, so the model may still leave it empty;
/// - `default`, `$schema` and `title` annotations are dropped below the root, and `format`
///   (which strict mode ignores or refuses) everywhere.
///
/// The result still accepts every document the original schema described and a serde
/// `Deserialize` impl reads (`null` for an `Option` field reads as `None`).
pub fn make_strict(schema: Value) -> Value {
    rewrite(schema, true)
}

fn rewrite(node: Value, is_root: bool) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    if let Some(alternatives) = map.remove("oneOf") {
        map.insert("anyOf".to_owned(), alternatives);
    }
    if let Some(Value::Array(mut parts)) = map.remove("allOf") {
        if parts.len() == 1 {
            if let Some(Value::Object(inner)) = parts.pop() {
                for (key, value) in inner {
                    map.entry(key).or_insert(value);
                }
            }
        } else {
            map.insert("allOf".to_owned(), Value::Array(parts));
        }
    }
    if let Some(value) = map.remove("const") {
        map.insert("enum".to_owned(), Value::Array(vec![value]));
    }
    map.remove("format");
    if !is_root {
        map.remove("$schema");
        map.remove("default");
    }
    let mut out = Map::new();
    for (keyword, child) in map {
        let child = match keyword.as_str() {
            "properties" | "$defs" | "definitions" => match child {
                Value::Object(children) => Value::Object(
                    children
                        .into_iter()
                        .map(|(name, schema)| (name, rewrite(schema, false)))
                        .collect(),
                ),
                other => other,
            },
            "items" | "additionalProperties" | "contains" => rewrite(child, false),
            "anyOf" | "allOf" | "prefixItems" => match child {
                Value::Array(children) => Value::Array(
                    children
                        .into_iter()
                        .map(|schema| rewrite(schema, false))
                        .collect(),
                ),
                other => other,
            },
            _ => child,
        };
        out.insert(keyword, child);
    }
    let node = Value::Object(out);
    if is_object_schema(&node) {
        close_object(node)
    } else {
        node
    }
}

/// Closes an object schema and requires every property, making the formerly optional ones
/// nullable.
fn close_object(node: Value) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    let mut required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, schema) in properties.iter_mut() {
            if !required.contains(name) {
                *schema = nullable(std::mem::take(schema));
                required.push(name.clone());
            }
        }
    }
    if map.contains_key("properties") {
        map.insert(
            "required".to_owned(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
    Value::Object(map)
}

/// `schema` or `null`.
fn nullable(schema: Value) -> Value {
    if accepts_null(&schema) {
        return schema;
    }
    match schema {
        Value::Object(mut map) if map.get("type").is_some_and(Value::is_string) => {
            if let Some(Value::String(kind)) = map.remove("type") {
                map.insert(
                    "type".to_owned(),
                    Value::Array(vec![Value::String(kind), Value::String("null".to_owned())]),
                );
            }
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.push(Value::Null);
            }
            Value::Object(map)
        }
        other => serde_json::json!({ "anyOf": [other, { "type": "null" }] }),
    }
}

fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "null"),
        None => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|alternatives| alternatives.iter().any(accepts_null)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_closed_object_with_every_property_required_is_strict() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": ["string", "null"]},
                "c": {"type": "array", "items": {"$ref": "#/$defs/Item"}}
            },
            "required": ["a", "b", "c"],
            "additionalProperties": false,
            "$defs": {"Item": {"type": "string", "enum": ["x"]}}
        });
        assert_eq!(violations(&schema), Vec::<String>::new());
    }

    #[test]
    fn each_breach_is_named_with_its_pointer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "open": {"type": "object", "properties": {"x": {"type": "string"}}},
                "tag": {"const": "a"},
                "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "away": {"$ref": "https://example.com/schema"}
            },
            "required": ["open", "tag", "either"],
            "additionalProperties": false
        });
        let found = violations(&schema).join("\n");
        for expected in [
            "/properties/open: an object must set `additionalProperties: false`",
            "/properties/open: property `x` must be listed in `required`",
            "/properties/tag: `const` is not allowed",
            "/properties/either: `oneOf` is not allowed",
            "/properties/away: `$ref` must point to an entry of the root's `$defs`",
            "(root): property `away` must be listed in `required`",
        ] {
            assert!(
                found.contains(expected),
                "missing `{expected}` in:\n{found}"
            );
        }
        assert!(!violations(&json!({"type": "string"})).is_empty());
    }

    #[test]
    fn make_strict_turns_derived_shapes_into_the_subset() {
        let derived = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "status": {"oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "done"}}, "required": ["kind"]},
                    {"type": "object", "properties": {"kind": {"const": "blocked"}, "reason": {"type": "string"}}, "required": ["kind", "reason"]}
                ]},
                "note": {"type": "string", "default": null, "format": "uri"},
                "budget": {"$ref": "#/$defs/Budget"}
            },
            "required": ["status"],
            "$defs": {"Budget": {"type": "integer", "format": "int64"}}
        });
        let strict = make_strict(derived);
        assert_eq!(violations(&strict), Vec::<String>::new(), "{strict:#}");
        assert_eq!(
            strict["properties"]["note"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            strict["properties"]["budget"],
            json!({"anyOf": [{"$ref": "#/$defs/Budget"}, {"type": "null"}]})
        );
        assert_eq!(
            strict["properties"]["status"]["anyOf"][1]["properties"]["kind"],
            json!({"enum": ["blocked"]})
        );
        assert_eq!(strict["title"], "Args", "root annotations stay");
    }

    #[test]
    fn make_strict_is_idempotent() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"enum": ["x", "y"]}},
            "required": ["a"]
        });
        let once = make_strict(schema);
        assert_eq!(make_strict(once.clone()), once);
    }
}
