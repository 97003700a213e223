use memory_prompts::fixtures;

#[test]
fn every_template_renders_with_its_fixture() {
    let examples = fixtures::rendered_examples().unwrap();
    assert_eq!(examples.len(), 25);
    for (name, text) in &examples {
        assert!(name.ends_with(".md"), "{name}");
        assert!(
            text.trim().len() > 40,
            "{name} rendered almost nothing:\n{text}"
        );
        assert!(
            text.ends_with('\n') && !text.ends_with("\n\n\n"),
            "{name} ending"
        );
        for leftover in ["{{", "}}", "{%", "%}", "{#"] {
            assert!(
                !text.contains(leftover),
                "{name} has template syntax left:\n{text}"
            );
        }
    }
}

#[test]
fn examples_follow_the_prompts_folder_layout() {
    let families = [
        "memories/",
        "compaction/",
        "working_memory/",
        "goals/",
        "introspect/",
    ];
    for (name, _) in fixtures::rendered_examples().unwrap() {
        assert!(
            families.iter().any(|family| name.starts_with(family)),
            "{name} is outside the template families"
        );
    }
}
