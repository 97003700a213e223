use memory_prompts::UntrustedText;
use memory_prompts::working_memory::{
    CreateContext, SectionLimits, SectionSizeWarning, UPDATE_TOOL, UpdateContext, create, update,
};
use memory_protocol::working_memory::WorkingMemorySection;

use super::between;

#[test]
fn create_lists_the_seven_headers_in_document_order() {
    let ctx = CreateContext {
        conversation: UntrustedText::new("[User]: hi"),
        previous_summary: None,
        limits: SectionLimits {
            bullets: 30,
            tokens: 2_000,
        },
    };
    let prompt = create(&ctx).unwrap();
    let skeleton = &prompt[prompt.find("# Working Memory\n").unwrap()..];
    let positions: Vec<usize> = WorkingMemorySection::ALL
        .iter()
        .map(|s| skeleton.find(&format!("\n## {}\n", s.header())).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    assert!(prompt.contains("about 2000 tokens and 30 bullets"));
    assert!(!prompt.contains("<previous-summary>"));
    assert_eq!(
        between(&prompt, "<conversation>\n", "\n</conversation>"),
        "[User]: hi"
    );
}

#[test]
fn create_carries_a_previous_summary_when_given() {
    let ctx = CreateContext {
        conversation: UntrustedText::new("[User]: hi"),
        previous_summary: Some(UntrustedText::new("## Goal\nold goal")),
        limits: SectionLimits::default(),
    };
    let prompt = create(&ctx).unwrap();
    assert_eq!(
        between(&prompt, "<previous-summary>\n", "\n</previous-summary>"),
        "## Goal\nold goal"
    );
}

fn update_context(warnings: Vec<SectionSizeWarning>) -> UpdateContext {
    UpdateContext {
        working_memory: UntrustedText::new("# Working Memory\n## Session Title\nx"),
        conversation: UntrustedText::new("[User]: more"),
        warnings,
        limits: SectionLimits::default(),
    }
}

#[test]
fn update_renders_the_warnings_block_only_when_warned() {
    let quiet = update(&update_context(Vec::new())).unwrap();
    assert!(!quiet.contains("<section_size_warnings>"));
    let warned = update(&update_context(vec![SectionSizeWarning {
        section: WorkingMemorySection::KeyFactsAndDecisions,
        bullets: 41,
        tokens: 1_870,
    }]))
    .unwrap();
    let block = between(
        &warned,
        "<section_size_warnings>\n",
        "\n</section_size_warnings>",
    );
    assert!(block.starts_with("\"Key Facts & Decisions\" has 41 bullets (about 1870 tokens)"));
    assert!(block.contains("limit of 25 bullets or 1500 tokens"));
    assert!(block.contains("Consolidate it with UPDATE"));
}

#[test]
fn update_asks_for_one_tool_call_with_a_rule_per_section() {
    let prompt = update(&update_context(Vec::new())).unwrap();
    assert!(prompt.contains(&format!("Call `{UPDATE_TOOL}` exactly once")));
    for op in ["`KEEP`", "`APPEND`", "`UPDATE`"] {
        assert!(prompt.contains(op), "{op}");
    }
    for section in WorkingMemorySection::ALL {
        assert!(
            prompt.contains(&format!("\n- {}: ", section.header())),
            "{section}"
        );
    }
    assert!(prompt.contains("- Errors & Corrections: APPEND only, never UPDATE"));
    assert_eq!(
        between(&prompt, "<working-memory>\n", "\n</working-memory>"),
        "# Working Memory\n## Session Title\nx"
    );
}
