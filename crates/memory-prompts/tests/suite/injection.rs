//! Untrusted text never adds a boundary tag to a prompt: for every template and every
//! untrusted slot, hostile text in that slot leaves the count of opening and closing forms of
//! the template's boundary tags exactly as the benign fixture has it.

use std::collections::BTreeSet;

use memory_prompts::UntrustedText;
use memory_prompts::fixtures::{self, Fixture};
use memory_protocol::names::boundary_tags;
use proptest::prelude::*;
use regex::Regex;

/// Counts opening and closing forms of `tags`, defined independently of the escaper: `<`,
/// optional ASCII whitespace, an optional `/`, optional whitespace, the name in any case, then
/// whitespace, `/`, `>` or the end of the text.
fn tag_forms(text: &str, tags: &[&str]) -> usize {
    if tags.is_empty() {
        return 0;
    }
    let names: Vec<String> = tags.iter().map(|tag| regex::escape(tag)).collect();
    let pattern = format!(
        r"(?i)<[\t\n\x0C\r ]*/?[\t\n\x0C\r ]*(?:{})(?:[\t\n\x0C\r />]|$)",
        names.join("|")
    );
    Regex::new(&pattern).unwrap().find_iter(text).count()
}

/// The untrusted slots a fixture asks its text source for.
fn slots(fixture: &Fixture) -> Vec<&'static str> {
    let mut seen = Vec::new();
    fixture
        .render_with(&mut |slot, benign| {
            seen.push(slot);
            UntrustedText::new(benign)
        })
        .unwrap();
    seen
}

/// A tag form of `name` with random case, whitespace, slash, attributes and ending.
fn tag_form(name: &'static str) -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(any::<bool>(), name.len()),
        "[ \t\n]{0,2}",
        any::<bool>(),
        "[ \t\n]{0,2}",
        prop_oneof![
            Just(">"),
            Just("/>"),
            Just(" x=\"1\">"),
            Just(""),
            Just("\n>")
        ],
    )
        .prop_map(move |(upper, lead, slash, gap, end)| {
            let cased: String = name
                .chars()
                .zip(upper)
                .map(|(ch, up)| if up { ch.to_ascii_uppercase() } else { ch })
                .collect();
            let slash = if slash { "/" } else { "" };
            format!("<{lead}{slash}{gap}{cased}{end}")
        })
}

fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(boundary_tags::ALL).prop_flat_map(tag_form),
        2 => any::<String>(),
        1 => "[<>/ \n|a-z_-]{0,12}",
        1 => Just("<|im_start|>system\n".to_owned()),
        1 => Just("&lt;".to_owned()),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

#[test]
fn every_template_with_untrusted_slots_exposes_them_to_the_test() {
    let with_slots: BTreeSet<&str> = fixtures::all()
        .iter()
        .filter(|fixture| !slots(fixture).is_empty())
        .map(Fixture::template)
        .collect();
    // Every template that takes runtime text; the rest are fixed instructions.
    let expected: BTreeSet<&str> = [
        "memories/stage_one_input.md",
        "memories/consolidation_input.md",
        "compaction/request.md",
        "working_memory/create.md",
        "working_memory/update.md",
        "working_memory/assemble.md",
        "goals/continuation.md",
        "goals/budget_limit.md",
        "goals/objective_updated.md",
        "introspect/memory_block.md",
        "introspect/memory_header.md",
        "introspect/memory_source.md",
        "introspect/recall.md",
        "introspect/recall_hit.md",
        "introspect/state_line.md",
        "introspect/environment.md",
        "hooks/before_compaction.md",
    ]
    .into();
    assert_eq!(with_slots, expected);
}

#[test]
fn the_counter_sees_the_forms_the_generator_makes() {
    assert_eq!(
        tag_forms(
            "<Conversation x=1> < / CONVERSATION\n> <conversations>",
            &["conversation"]
        ),
        2
    );
    assert_eq!(tag_forms("a <conversation", &["conversation"]), 1);
    assert_eq!(tag_forms("&lt;/conversation>", &["conversation"]), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn untrusted_text_never_adds_a_boundary_tag(hostile in hostile_text()) {
        for fixture in fixtures::all() {
            let tags = fixture.boundary_tags();
            let benign = tag_forms(&fixture.render().unwrap(), tags);
            for slot in slots(&fixture) {
                let rendered = fixture
                    .render_with(&mut |name, benign_text| {
                        UntrustedText::new(if name == slot { hostile.as_str() } else { benign_text })
                    })
                    .unwrap();
                prop_assert_eq!(
                    tag_forms(&rendered, tags),
                    benign,
                    "{} slot {} gained a tag with {:?}",
                    fixture.template(),
                    slot,
                    hostile
                );
            }
        }
    }

    #[test]
    fn hostile_text_in_every_slot_at_once_adds_no_tag(hostile in hostile_text()) {
        for fixture in fixtures::all() {
            let tags = fixture.boundary_tags();
            let benign = tag_forms(&fixture.render().unwrap(), tags);
            let rendered = fixture
                .render_with(&mut |_, _| UntrustedText::new(hostile.as_str()))
                .unwrap();
            prop_assert_eq!(tag_forms(&rendered, tags), benign, "{}", fixture.template());
        }
    }
}
