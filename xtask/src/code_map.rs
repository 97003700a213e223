//! `docs/ARCHITECTURE.md`'s code map is checked against the tree, so it cannot drift.
//!
//! The map has one `### `crates/NAME`` section per crate (`### `examples/NAME`` per reference
//! host, and `### `xtask``). The rules:
//! - every crate folder has a section, and every section names a crate folder that exists;
//! - every module directly under a crate's `src/` (a file `name.rs` or a folder `name/`) is
//!   named in its section, in backticks, except the roots and the error enum (`lib.rs`,
//!   `main.rs`, `mod.rs`, `error.rs`), so a new module cannot be added without a line that says
//!   what it is for;
//! - every nested source folder is named too (as `name/`, alone or as the end of a path);
//! - every `.rs` file a section names exists in that crate, so a renamed or deleted module cannot
//!   linger in the map.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::project_root;

/// Files every crate may have without a line in the map: roots and the one error enum.
const UNLISTED_FILES: [&str; 4] = ["lib.rs", "main.rs", "mod.rs", "error.rs"];

/// The map's sections: folder (`crates/NAME` or `xtask`) to the section's text.
fn sections(map: &str) -> BTreeMap<String, String> {
    let mut sections = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in map.lines() {
        let heading = line
            .strip_prefix("### `")
            .and_then(|rest| rest.strip_suffix('`'));
        if (heading.is_some() || line.starts_with("## "))
            && let Some((name, text)) = current.take()
        {
            sections.insert(name, text);
        }
        if let Some(folder) = heading {
            current = Some((folder.to_owned(), String::new()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some((name, text)) = current {
        sections.insert(name, text);
    }
    sections
}

/// Every backticked span of a section.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Whether a section names `name` (a file `x.rs` or a folder `x/`): as a whole span, or as the
/// last part of a path in a span (`src/x/`, `store/postgres/`, `redact/rules/*.rs`).
fn names(spans: &[&str], name: &str) -> bool {
    spans.iter().any(|span| {
        span.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
            .any(|word| {
                word == name
                    || word.ends_with(&format!("/{name}"))
                    || (name.ends_with('/') && word.contains(&format!("/{name}")))
                    || (name.ends_with('/') && word.starts_with(name))
            })
    })
}

/// Every file and folder below `dir`, as paths relative to it.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            if let Ok(relative) = path.strip_prefix(dir) {
                found.push(relative.to_path_buf());
            }
        }
    }
    found
}

/// The crate folders of the workspace (crates, the reference hosts under `examples/`, xtask),
/// as the map names them.
fn crate_folders(root: &Path) -> Vec<String> {
    let mut folders: Vec<String> = std::fs::read_dir(root.join("crates"))
        .expect("listing crates/")
        .flatten()
        .filter(|entry| entry.path().join("Cargo.toml").is_file())
        .map(|entry| format!("crates/{}", entry.file_name().to_string_lossy()))
        .collect();
    if let Ok(examples) = std::fs::read_dir(root.join("examples")) {
        folders.extend(
            examples
                .flatten()
                .filter(|entry| entry.path().join("Cargo.toml").is_file())
                .map(|entry| format!("examples/{}", entry.file_name().to_string_lossy())),
        );
    }
    folders.push("xtask".to_owned());
    folders.sort();
    folders
}

/// What the code map gets wrong about the tree, one line each.
fn code_map_problems(root: &Path, map: &str) -> Vec<String> {
    let sections = sections(map);
    let folders = crate_folders(root);
    let mut problems = Vec::new();
    for name in sections.keys() {
        if !folders.contains(name) {
            problems.push(format!(
                "the map has a section for `{name}`, which is not a crate"
            ));
        }
    }
    for folder in &folders {
        let Some(text) = sections.get(folder) else {
            problems.push(format!("`{folder}` has no section in the map"));
            continue;
        };
        let spans = code_spans(text);
        let src = root.join(folder).join("src");
        let sources = walk(&src);
        for path in &sources {
            let Some(file_name) = path.file_name().map(|f| f.to_string_lossy().into_owned()) else {
                continue;
            };
            let top_level = path.components().count() == 1;
            if src.join(path).is_dir() {
                let folder_name = format!("{file_name}/");
                if !names(&spans, &folder_name) {
                    problems.push(format!(
                        "`{folder}`: the source folder `src/{}/` is not in the map",
                        path.display()
                    ));
                }
            } else if top_level
                && file_name.ends_with(".rs")
                && !UNLISTED_FILES.contains(&file_name.as_str())
                && !names(&spans, &file_name)
            {
                problems.push(format!(
                    "`{folder}`: the module `src/{file_name}` is not in the map"
                ));
            }
        }
        let crate_files: Vec<String> = walk(&root.join(folder))
            .iter()
            .filter_map(|path| path.file_name().map(|f| f.to_string_lossy().into_owned()))
            .collect();
        for span in &spans {
            for word in span.split(|c: char| c.is_whitespace() || c == ',') {
                let Some(file) = word.rsplit('/').next() else {
                    continue;
                };
                let is_rust_file = file.ends_with(".rs")
                    && file.len() > 3
                    && file
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
                if is_rust_file && !crate_files.iter().any(|f| f == file) {
                    problems.push(format!(
                        "`{folder}`: the map names `{word}`, which is not in the crate"
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn the_code_map_names_every_crate_and_module_and_nothing_else() {
    let root = project_root();
    let map = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md"))
        .expect("reading docs/ARCHITECTURE.md");
    let problems = code_map_problems(&root, &map);
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md's code map disagrees with the tree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_missing_module_a_stale_file_and_an_unknown_crate_are_each_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    for path in ["crates/alpha/src/store", "xtask/src"] {
        std::fs::create_dir_all(root.join(path)).expect("mkdir");
    }
    std::fs::write(root.join("crates/alpha/Cargo.toml"), "").expect("write");
    for file in [
        "crates/alpha/src/lib.rs",
        "crates/alpha/src/scan.rs",
        "crates/alpha/src/store/mod.rs",
        "xtask/src/main.rs",
    ] {
        std::fs::write(root.join(file), "").expect("write");
    }
    let complete = "### `crates/alpha`\n\n- `scan.rs`: scans.\n- `store/`: stores.\n\n\
                    ### `xtask`\n\nTasks.\n";
    assert_eq!(code_map_problems(root, complete), Vec::<String>::new());

    let drifted = "### `crates/alpha`\n\n- `store/`: stores; `gone.rs` went.\n\n\
                   ### `crates/beta`\n\n### `xtask`\n";
    let problems = code_map_problems(root, drifted);
    assert_eq!(
        problems,
        vec![
            "the map has a section for `crates/beta`, which is not a crate".to_owned(),
            "`crates/alpha`: the module `src/scan.rs` is not in the map".to_owned(),
            "`crates/alpha`: the map names `gone.rs`, which is not in the crate".to_owned(),
        ]
    );
}
