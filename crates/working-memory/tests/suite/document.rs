//! The document model: seven sections in a fixed order, lenient parsing, canonical rendering,
//! and content under headers we do not know kept instead of lost.

use memory_protocol::working_memory::WorkingMemorySection::{self, *};
use working_memory::WorkingMemoryDocument;

fn headers(rendered: &str) -> Vec<&str> {
    rendered
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .collect()
}

#[test]
fn rendering_has_the_seven_headers_in_order() {
    let rendered = WorkingMemoryDocument::new().render();
    assert!(rendered.starts_with("# Working Memory\n"));
    let expected: Vec<&str> = WorkingMemorySection::ALL
        .iter()
        .map(|section| section.header())
        .collect();
    assert_eq!(headers(&rendered), expected);
    assert_eq!(
        expected,
        [
            "Session Title",
            "Current State",
            "Task & Goals",
            "Key Facts & Decisions",
            "Files & Context",
            "Errors & Corrections",
            "Open Issues",
        ]
    );
}

/// The reference drops the content of a `##` section it does not know. Here it is kept in the
/// known section before it, under a `###` heading, and survives a render and a parse.
#[test]
fn content_under_an_unknown_header_is_kept_in_the_section_before_it() {
    let text = "# Working Memory\n\n## Key Facts & Decisions\n- the ledger closes on Fridays\n\n## Scratchpad\n- compare March totals with the bank export\n\n## Files & Context\n- ledger/close.py\n";
    let document = WorkingMemoryDocument::parse(text);
    assert_eq!(
        document.body(KeyFactsAndDecisions),
        "- the ledger closes on Fridays\n\n### Scratchpad\n- compare March totals with the bank export"
    );
    assert_eq!(document.body(FilesAndContext), "- ledger/close.py");
    let rendered = document.render();
    assert_eq!(headers(&rendered).len(), 7);
    assert_eq!(WorkingMemoryDocument::parse(&rendered), document);
}

#[test]
fn an_unknown_header_before_any_known_one_goes_to_the_first_known_section() {
    let text = "## Preface\nwritten by hand\n\n## Current State\n- importing\n";
    let document = WorkingMemoryDocument::parse(text);
    assert_eq!(
        document.body(CurrentState),
        "### Preface\nwritten by hand\n\n- importing"
    );
}

#[test]
fn a_document_with_no_known_header_keeps_everything_in_key_facts() {
    let document =
        WorkingMemoryDocument::parse("## Notes\n- keep receipts\n\n## Ideas\n- none yet\n");
    assert_eq!(
        document.body(KeyFactsAndDecisions),
        "### Notes\n- keep receipts\n\n### Ideas\n- none yet"
    );
}

#[test]
fn level_three_headings_stay_in_the_body_and_none_bodies_are_empty() {
    let text = "## Session Title\nTide importer\n\n## Current State\n### Today\n- parser done\n\n## Task & Goals\nnone\n\n## Open Issues\n(none)\n\n## Errors & Corrections\n_none_\n";
    let document = WorkingMemoryDocument::parse(text);
    assert_eq!(document.body(CurrentState), "### Today\n- parser done");
    for section in [TaskAndGoals, OpenIssues, ErrorsAndCorrections] {
        assert_eq!(document.body(section), "", "{section:?}");
    }
}

#[test]
fn headers_are_matched_leniently_and_a_repeated_header_keeps_both_bodies() {
    let text = "## key facts and decisions\n- first\n\n## KEY FACTS & DECISIONS ##\n- second\n";
    let document = WorkingMemoryDocument::parse(text);
    assert_eq!(document.body(KeyFactsAndDecisions), "- first\n\n- second");
}

#[test]
fn front_matter_and_carriage_returns_do_not_leak_into_bodies() {
    let text = "---\r\ntitle: x\r\n---\r\n## Session Title\r\nLedger close\r\n\r\n## Files & Context\r\n- ledger/close.py\r\n";
    let document = WorkingMemoryDocument::parse(text);
    assert_eq!(document.body(SessionTitle), "Ledger close");
    assert_eq!(document.body(FilesAndContext), "- ledger/close.py");
}

#[test]
fn a_header_inside_a_body_is_demoted_so_a_render_keeps_seven_headers() {
    let mut document = WorkingMemoryDocument::new();
    document.set_body(CurrentState, "- step one\n## Session Title\n- step two");
    assert_eq!(
        document.body(CurrentState),
        "- step one\n### Session Title\n- step two"
    );
    assert_eq!(headers(&document.render()).len(), 7);
}

/// Issue 27 (Deliver 3): a document that opens with a `---` rule lost every section up to the
/// next `---`, even when every operation was KEEP. Only YAML front matter is skipped.
#[test]
fn a_leading_rule_is_not_front_matter() {
    let text = "---\n## Session Title\nTide importer\n\n## Current State\nParsing April.\n---\n## Open Issues\n- May format\n";
    let document = WorkingMemoryDocument::parse(text);
    assert_eq!(
        document.body(WorkingMemorySection::SessionTitle),
        "Tide importer"
    );
    assert_eq!(
        document.body(WorkingMemorySection::CurrentState),
        "Parsing April.\n---"
    );
    assert_eq!(
        document.body(WorkingMemorySection::OpenIssues),
        "- May format"
    );
    let yaml = "---\ntitle: tides\n---\n## Session Title\nTide importer\n";
    assert_eq!(
        WorkingMemoryDocument::parse(yaml).body(WorkingMemorySection::SessionTitle),
        "Tide importer"
    );
}
