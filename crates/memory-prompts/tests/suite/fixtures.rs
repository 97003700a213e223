use memory_prompts::fixtures;

#[test]
fn every_template_renders_with_its_fixture() {
    let examples = fixtures::rendered_examples().unwrap();
    // Every file under `prompts/` is a registered template with a fixture, and nothing else is.
    let mut on_disk = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../prompts");
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let name = path.strip_prefix(&root).unwrap().to_string_lossy();
                on_disk.push(name.replace('\\', "/"));
            }
        }
    }
    on_disk.sort();
    let mut registered: Vec<String> = examples.iter().map(|(name, _)| name.to_string()).collect();
    registered.sort();
    assert_eq!(registered, on_disk, "prompts/ and the registry differ");
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
        "hooks/",
    ];
    for (name, _) in fixtures::rendered_examples().unwrap() {
        assert!(
            families.iter().any(|family| name.starts_with(family)),
            "{name} is outside the template families"
        );
    }
}
