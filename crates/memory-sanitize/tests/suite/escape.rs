use memory_protocol::names::boundary_tags;
use memory_sanitize::{escape_boundary_tags, escape_control_tokens, escape_xml_text};
use proptest::prelude::*;
use regex::Regex;

/// Any opening or closing form of one of `tags`, as the escaping documents it.
fn tag_form(tags: &[&str]) -> Regex {
    let names: Vec<String> = tags.iter().map(|t| regex::escape(t)).collect();
    Regex::new(&format!(
        r"(?i)<[\t\n\x0C\r ]*/?[\t\n\x0C\r ]*(?:{})(?:[\t\n\x0C\r />]|\z)",
        names.join("|")
    ))
    .unwrap()
}

/// Text rich in tag fragments, whitespace, case changes and attributes.
fn tagged_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("<".to_owned()),
        Just("</".to_owned()),
        Just("< / ".to_owned()),
        Just(">".to_owned()),
        Just("/>".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just(" id=\"1\"".to_owned()),
        Just("&lt;".to_owned()),
        prop::sample::select(boundary_tags::ALL).prop_map(str::to_owned),
        prop::sample::select(boundary_tags::ALL).prop_map(str::to_uppercase),
        "\\PC{0,6}",
    ];
    prop::collection::vec(fragment, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn no_boundary_tag_form_survives(text in tagged_text()) {
        let out = escape_boundary_tags(&text, boundary_tags::ALL);
        prop_assert!(!tag_form(boundary_tags::ALL).is_match(&out), "{out:?}");
    }

    #[test]
    fn boundary_tag_escaping_is_idempotent_and_changes_only_angle_brackets(
        text in tagged_text()
    ) {
        let once = escape_boundary_tags(&text, boundary_tags::ALL);
        let twice = escape_boundary_tags(&once, boundary_tags::ALL);
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(once.replace("&lt;", "<"), text.replace("&lt;", "<"));
    }

    #[test]
    fn arbitrary_tag_names_are_escaped(
        text in "\\PC{0,40}",
        tag in "[a-z][a-z_-]{0,10}",
    ) {
        let input = format!("{text}<{tag}>{text}</ {}>", tag.to_uppercase());
        let out = escape_boundary_tags(&input, &[tag.as_str()]);
        prop_assert!(!tag_form(&[tag.as_str()]).is_match(&out), "{out:?}");
    }

    #[test]
    fn control_token_escaping_is_idempotent_and_leaves_no_token(
        parts in prop::collection::vec(
            prop_oneof![
                Just("<|".to_owned()),
                Just("|>".to_owned()),
                Just("\\".to_owned()),
                Just("im_start".to_owned()),
                Just(" ".to_owned()),
                Just("<".to_owned()),
                "\\PC{0,5}",
            ],
            0..20,
        )
    ) {
        let text = parts.concat();
        let once = escape_control_tokens(&text);
        prop_assert_eq!(&escape_control_tokens(&once), &once);
        let token = Regex::new(r"<\|[^\s|<>]{1,64}\|>").unwrap();
        prop_assert!(!token.is_match(&once), "{once:?}");
    }

    #[test]
    fn xml_text_escaping_round_trips(text in "\\PC{0,60}") {
        let out = escape_xml_text(&text);
        prop_assert!(!out.contains('<') && !out.contains('>'));
        let back = out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
        prop_assert_eq!(back, text);
    }
}

#[test]
fn control_tokens_with_nested_openers_stay_idempotent() {
    let once = escape_control_tokens("<|a<|b|>");
    assert_eq!(once, "<|a<\\|b\\|>");
    assert_eq!(escape_control_tokens(&once), once);
    assert_eq!(escape_control_tokens("f <| x |> g"), "f <| x |> g");
}
