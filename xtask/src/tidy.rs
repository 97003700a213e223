//! Repository rules checked by `cargo test`.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use crate::project_root;

/// The rank of each workspace crate: its layer (docs/ARCHITECTURE.md) times ten, plus its order
/// within the layer. A crate may depend only on crates of a lower rank. Layer 1 is ordered
/// because `memory-prompts` uses `memory-sanitize` (its escaping) and `memory-transcript` uses
/// it too (the paths it reports are redacted); those are the only edges inside a layer, the
/// reverse edges are refused, and prompts and transcript share a rank so neither uses the other.
/// The reference host (`examples/host`) is a host like the CLI: the top layer.
const LAYERS: [(&str, u32); 18] = [
    ("memory-protocol", 0),
    ("memory-config", 10),
    ("memory-store", 10),
    ("memory-sanitize", 10),
    ("memory-prompts", 11),
    ("memory-transcript", 11),
    ("memory-write", 20),
    ("memory-compaction", 20),
    ("working-memory", 20),
    ("goal-steering", 20),
    ("memory-introspect", 20),
    ("memory-models", 20),
    ("memory-offline", 20),
    ("memory-mcp", 30),
    ("memory-hooks", 30),
    ("agent-memory", 40),
    ("agent-memory-cli", 50),
    ("reference-host", 50),
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
            // A crate's dev-dependency on itself only turns on test features for its tests.
            let on_itself = dep_name == name && dep["kind"] == "dev";
            if let Some(&dep_layer) = layers.get(dep_name)
                && dep_layer >= layer
                && !on_itself
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

/// Folder name = package name (a package under `examples/` is `reference-<folder>`: the
/// examples are reference hosts, and `examples/host` reads better than a repeated prefix), and
/// every crate inherits the workspace lints.
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
        let in_examples = manifest
            .parent()
            .and_then(|dir| dir.parent())
            .is_some_and(|parent| parent == root.join("examples"));
        let expected = if in_examples {
            format!("reference-{folder}")
        } else {
            folder.to_owned()
        };
        assert_eq!(expected, name, "crate {name} lives in folder {folder}");
        let text = std::fs::read_to_string(&manifest).expect("reading manifest");
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{} does not inherit the workspace lints",
            manifest.strip_prefix(&root).unwrap_or(&manifest).display()
        );
    }
}

/// The facade holds crate docs and re-exports only: every line of its `lib.rs` is a comment,
/// an inner attribute, a `pub use`, or blank.
#[test]
fn the_facade_lib_is_docs_and_re_exports_only() {
    let path = project_root().join("crates/agent-memory/src/lib.rs");
    let text = std::fs::read_to_string(&path).expect("reading the facade's lib.rs");
    let offending: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| {
            !(line.is_empty()
                || line.starts_with("//")
                || line.starts_with("#![")
                || (line.starts_with("pub use ") && line.ends_with(';')))
        })
        .collect();
    assert!(
        offending.is_empty(),
        "crates/agent-memory/src/lib.rs may hold only docs and `pub use` lines; found:\n{}",
        offending.join("\n")
    );
    assert!(
        !project_root()
            .join("crates/agent-memory/src/main.rs")
            .exists()
            && std::fs::read_dir(project_root().join("crates/agent-memory/src"))
                .expect("listing the facade's sources")
                .count()
                == 1,
        "the facade's src/ holds lib.rs alone"
    );
}

/// The facade's own dependencies are workspace crates, or optional ones behind a feature, so a
/// host that depends on it compiles nothing it did not ask for.
#[test]
fn the_facade_depends_only_on_workspace_crates() {
    let layers: BTreeMap<&str, u32> = LAYERS.into_iter().collect();
    let metadata = metadata();
    let facade = metadata["packages"]
        .as_array()
        .expect("packages array")
        .iter()
        .find(|package| package["name"] == "agent-memory")
        .expect("the agent-memory package");
    let outside: Vec<&str> = facade["dependencies"]
        .as_array()
        .expect("dependencies array")
        .iter()
        .filter(|dep| dep["kind"].is_null() && dep["optional"] != true)
        .filter_map(|dep| dep["name"].as_str())
        .filter(|name| !layers.contains_key(name))
        .collect();
    assert!(
        outside.is_empty(),
        "the facade gained non-optional dependencies outside the workspace: {outside:?}"
    );
}

/// Without default features the facade's normal dependency tree holds no CLI parser, progress
/// bar or HTTP stack.
#[test]
fn the_facade_without_default_features_pulls_no_cli_or_http_crates() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "agent-memory",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(project_root())
        .output()
        .expect("running cargo tree");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8_lossy(&output.stdout);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"memory-models"), "{tree}");
    for unwanted in ["clap", "indicatif", "reqwest", "hyper", "rustls", "anyhow"] {
        assert!(
            !crates.contains(&unwanted),
            "{unwanted} is in the facade's tree without default features:\n{tree}"
        );
    }
}

/// Names a CLI module must not use. The CLI parses arguments and prints; the state store, the
/// run pipeline and the MCP server are libraries a host embeds too, so the binary reaches them
/// only through their entry points (`store_selection`, `runner::Runner`, `mcp::MemoryServer`,
/// single passes such as `run_phase_two`). A store backend or driver here (`rusqlite`,
/// `tokio_postgres`, `StateStore`, `PgStore`), a pipeline step the `Runner` owns (scanning,
/// pruning, claiming, phase 1) or the MCP SDK (`rmcp`) means behaviour grew in the binary that
/// a host would have to copy.
const CLI_FORBIDDEN: [&str; 12] = [
    "rusqlite",
    "tokio_postgres",
    "deadpool",
    "rmcp",
    "StateStore",
    "PgStore",
    "run_phase_one",
    "scan_rollouts",
    "prune_stale_memories",
    "prune_phase_two_outputs",
    "ClaimParams",
    "ServerHandler",
];

/// Every source file of the CLI, tests excepted (they may drive the binary with an MCP client
/// or inspect the store it wrote).
fn cli_sources(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("listing the CLI's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            cli_sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The CLI stays argument handling and output: no module of `agent-memory-cli/src` names a
/// store backend, a step of the run pipeline or the MCP SDK (see [`CLI_FORBIDDEN`]). Comments
/// may mention them.
#[test]
fn cli_modules_are_argument_handling_and_output_only() {
    let src = project_root().join("crates/agent-memory-cli/src");
    let mut files = Vec::new();
    cli_sources(&src, &mut files);
    assert!(!files.is_empty(), "no CLI sources under {}", src.display());
    let mut offending = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("reading a CLI source");
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for name in CLI_FORBIDDEN {
                if line.contains(name) {
                    offending.push(format!(
                        "{}:{}: `{name}`",
                        path.strip_prefix(project_root()).unwrap_or(&path).display(),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        offending.is_empty(),
        "CLI modules may parse arguments and print only; move these into a library:\n{}",
        offending.join("\n")
    );
}
