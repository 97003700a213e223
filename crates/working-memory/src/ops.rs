//! Reading the model's operations leniently.
//!
//! The strict schema is what a model is asked for; what comes back is read more kindly: op
//! names in any case (`keep` is `KEEP`), section names in any case or with `and` for `&`, an
//! APPEND that carries `content` instead of `items`, items with a bullet marker. What cannot be
//! read (a missing or unknown op, an UPDATE without a string `content`, an op that is not an
//! object) keeps the section and says why. Non-string items are dropped, never stringified.

use memory_protocol::working_memory::{SectionOp, WorkingMemorySection, WorkingMemoryUpdate};
use serde_json::{Map, Value};

use super::document::section_named;
use super::text::{clean_item, items};

/// One section's operation as read, with what the model wrote and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOp {
    /// The operation to apply (KEEP when the input could not be read).
    pub op: SectionOp,
    /// The op name as written, upper-cased; empty when there was none.
    pub op_in: String,
    /// Why the input could not be read as written, when it could not.
    pub problem: Option<String>,
}

impl ReadOp {
    /// An operation that was read as it was written.
    pub fn exact(op: SectionOp) -> Self {
        Self {
            op_in: op.name().as_str().to_owned(),
            op,
            problem: None,
        }
    }

    fn kept(op_in: String, problem: impl Into<String>) -> Self {
        Self {
            op: SectionOp::Keep,
            op_in,
            problem: Some(problem.into()),
        }
    }
}

/// One operation per section; a section without one is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SectionOps {
    ops: [Option<ReadOp>; 7],
}

impl SectionOps {
    /// No operations: every section is kept.
    pub fn new() -> Self {
        Self::default()
    }

    /// The typed operations of a well-formed update.
    pub fn from_update(update: &WorkingMemoryUpdate) -> Self {
        let mut ops = Self::new();
        for (section, op) in update.sections.iter() {
            ops.set(section, ReadOp::exact(op.clone()));
        }
        ops
    }

    /// The operations of a `sections` object, read leniently. Keys that name no section are
    /// ignored; when two keys name the same section, the first wins.
    pub fn from_sections(sections: &Map<String, Value>) -> Self {
        let mut ops = Self::new();
        for (key, value) in sections {
            if let Some(section) = section_named(key.trim())
                && ops.get(section).is_none()
            {
                ops.set(section, read_op(value));
            }
        }
        ops
    }

    /// Sets the operation of `section`.
    pub fn set(&mut self, section: WorkingMemorySection, op: ReadOp) {
        self.ops[section as usize] = Some(op);
    }

    /// The operation of `section`, when there is one.
    pub fn get(&self, section: WorkingMemorySection) -> Option<&ReadOp> {
        self.ops[section as usize].as_ref()
    }

    /// How many sections have an operation.
    pub fn len(&self) -> usize {
        self.ops.iter().flatten().count()
    }

    /// True when no section has an operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The operations as tool arguments; a section without one is `KEEP`.
    pub fn to_update(&self) -> WorkingMemoryUpdate {
        let op = |section: WorkingMemorySection| {
            self.get(section)
                .map(|read| read.op.clone())
                .unwrap_or(SectionOp::Keep)
        };
        WorkingMemoryUpdate {
            sections: memory_protocol::working_memory::WorkingMemorySections {
                session_title: op(WorkingMemorySection::SessionTitle),
                current_state: op(WorkingMemorySection::CurrentState),
                task_and_goals: op(WorkingMemorySection::TaskAndGoals),
                key_facts_and_decisions: op(WorkingMemorySection::KeyFactsAndDecisions),
                files_and_context: op(WorkingMemorySection::FilesAndContext),
                errors_and_corrections: op(WorkingMemorySection::ErrorsAndCorrections),
                open_issues: op(WorkingMemorySection::OpenIssues),
            },
        }
    }
}

/// Reads one section's operation (see the module docs).
pub(crate) fn read_op(value: &Value) -> ReadOp {
    let Some(object) = value.as_object() else {
        return ReadOp::kept(String::new(), "the operation is not an object");
    };
    let op_in = match object.get("op") {
        Some(Value::String(name)) => name.trim().to_ascii_uppercase(),
        Some(_) => return ReadOp::kept(String::new(), "`op` is not a string"),
        None => return ReadOp::kept(String::new(), "the operation has no `op`"),
    };
    match op_in.as_str() {
        "KEEP" => ReadOp {
            op: SectionOp::Keep,
            op_in,
            problem: None,
        },
        "UPDATE" => match object.get("content") {
            Some(Value::String(content)) => ReadOp {
                op: SectionOp::Update {
                    content: content.clone(),
                },
                op_in,
                problem: None,
            },
            Some(_) => ReadOp::kept(op_in, "UPDATE `content` is not a string"),
            None => ReadOp::kept(op_in, "UPDATE without `content`"),
        },
        "APPEND" => read_append(object, op_in),
        "" => ReadOp::kept(op_in, "the operation's `op` is empty"),
        other => {
            let problem = format!("unknown op `{other}`");
            ReadOp::kept(op_in, problem)
        }
    }
}

fn read_append(object: &Map<String, Value>, op_in: String) -> ReadOp {
    let mut dropped = 0usize;
    let raw: Vec<String> = match (object.get("items"), object.get("content")) {
        (Some(Value::Array(values)), _) => values
            .iter()
            .filter_map(|value| match value {
                Value::String(item) => Some(item.clone()),
                _ => {
                    dropped += 1;
                    None
                }
            })
            .collect(),
        (Some(Value::String(text)), _) | (None, Some(Value::String(text))) => {
            items(text).map(str::to_owned).collect()
        }
        (Some(_), _) => return ReadOp::kept(op_in, "APPEND `items` is not a list"),
        (None, _) => return ReadOp::kept(op_in, "APPEND without `items`"),
    };
    let items: Vec<String> = raw.iter().filter_map(|item| clean_item(item)).collect();
    let problem = (dropped > 0).then(|| format!("{dropped} item(s) that were not text dropped"));
    if items.is_empty() {
        return ReadOp {
            op: SectionOp::Keep,
            op_in,
            problem: Some(problem.unwrap_or_else(|| "APPEND with no items".to_owned())),
        };
    }
    ReadOp {
        op: SectionOp::Append { items },
        op_in,
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn op_names_are_case_insensitive() {
        assert_eq!(read_op(&json!({"op": "keep"})).op, SectionOp::Keep);
        assert_eq!(
            read_op(&json!({"op": " Update ", "content": "x"})).op,
            SectionOp::Update {
                content: "x".into()
            }
        );
    }

    #[test]
    fn unreadable_ops_keep_the_section() {
        for value in [
            json!(5),
            json!({"op": 5}),
            json!({"op": "DELETE"}),
            json!({"op": "UPDATE", "content": ["a"]}),
            json!({"op": "UPDATE"}),
            json!({"op": "APPEND", "items": 7}),
            json!({}),
        ] {
            let read = read_op(&value);
            assert_eq!(read.op, SectionOp::Keep, "{value}");
            assert!(read.problem.is_some(), "{value}");
        }
    }

    #[test]
    fn append_items_are_cleaned_and_non_strings_dropped() {
        let read =
            read_op(&json!({"op": "APPEND", "items": ["- a", 42, null, {"x": 1}, "  ", "b\nc"]}));
        assert_eq!(
            read.op,
            SectionOp::Append {
                items: vec!["a".into(), "b c".into()]
            }
        );
        assert_eq!(
            read.problem.as_deref(),
            Some("3 item(s) that were not text dropped")
        );
        let from_content = read_op(&json!({"op": "APPEND", "content": "- x\n- y"}));
        assert_eq!(
            from_content.op,
            SectionOp::Append {
                items: vec!["x".into(), "y".into()]
            }
        );
    }
}
