//! Repository rules checked by `cargo test`.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use crate::project_root;

/// The rank of each workspace crate: its DESIGN.md layer times ten, plus its order within the
/// layer. A crate may depend only on crates of a lower rank. Layer 1 is ordered because
/// DESIGN.md lets `memory-prompts` use `memory-sanitize` (its escaping); that is the only edge
/// inside a layer, and the reverse edge is refused.
const LAYERS: [(&str, u32); 8] = [
    ("memory-protocol", 0),
    ("memory-sanitize", 10),
    ("memory-prompts", 11),
    ("memory-write", 20),
    ("memory-compaction", 20),
    ("goal-steering", 20),
    ("memory-introspect", 20),
    ("agent-memory", 30),
];

/// Reads `cargo metadata` for the workspace.
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(project_root())
        .output()
        .expect("running cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("parsing cargo metadata")
}

/// Every dependency edge between workspace crates, including dev-dependencies, violates no
/// layer: it points to a strictly lower layer.
#[test]
fn crates_depend_only_on_lower_layers() {
    let layers: BTreeMap<&str, u32> = LAYERS.into_iter().collect();
    let metadata = metadata();
    let packages = metadata["packages"].as_array().expect("packages array");
    let mut violations = Vec::new();
    for package in packages {
        let name = package["name"].as_str().expect("package name");
        if name == "xtask" {
            continue;
        }
        let Some(&layer) = layers.get(name) else {
            violations.push(format!(
                "{name} is not assigned a layer in xtask/src/tidy.rs"
            ));
            continue;
        };
        for dep in package["dependencies"]
            .as_array()
            .expect("dependencies array")
        {
            let dep_name = dep["name"].as_str().expect("dependency name");
            if let Some(&dep_layer) = layers.get(dep_name)
                && dep_layer >= layer
            {
                violations.push(format!(
                    "{name} (rank {layer}) depends on {dep_name} (rank {dep_layer})"
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layer violations:\n{}",
        violations.join("\n")
    );
}

/// Folder name = package name, and every crate inherits the workspace lints.
#[test]
fn crate_folders_are_named_after_their_packages_and_use_workspace_lints() {
    let metadata = metadata();
    let root = project_root();
    for package in metadata["packages"].as_array().expect("packages array") {
        let name = package["name"].as_str().expect("package name");
        let manifest = std::path::PathBuf::from(package["manifest_path"].as_str().expect("path"));
        let folder = manifest
            .parent()
            .and_then(|dir| dir.file_name())
            .and_then(|f| f.to_str())
            .expect("folder name");
        assert_eq!(folder, name, "crate {name} lives in folder {folder}");
        let text = std::fs::read_to_string(&manifest).expect("reading manifest");
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{} does not inherit the workspace lints",
            manifest.strip_prefix(&root).unwrap_or(&manifest).display()
        );
    }
}
