//! Generated files: JSON Schemas and their TypeScript declarations, sample instances (as JSON
//! and as a TypeScript file `tsc` checks) and rendered prompts.
//!
//! Every generated file is produced in memory by [`generated_files`]; `Write` mode writes the
//! ones that changed and deletes stale ones, `Check` mode only compares. A `#[test]` runs the
//! check so plain `cargo test` fails on drift.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::project_root;

/// What `run` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Write changed files, delete stale ones.
    Write,
    /// Change nothing; fail on any difference.
    Check,
}

/// Folders whose every file is generated (stale files in them are drift too).
const GENERATED_DIRS: [&str; 4] = [
    "schemas",
    "fixtures/protocol",
    "fixtures/typescript",
    "fixtures/prompts",
];

pub(crate) fn run(mode: Mode) -> Result<()> {
    let root = project_root();
    let files = generated_files()?;
    let mut drift = Vec::new();
    for (relative, contents) in &files {
        let path = root.join(relative);
        let current = fs::read_to_string(&path).ok();
        if current.as_deref() == Some(contents.as_str()) {
            continue;
        }
        match mode {
            Mode::Check => drift.push(format!("{} is not up to date", relative.display())),
            Mode::Write => {
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)
                        .with_context(|| format!("creating {}", parent.display()))?;
                }
                fs::write(&path, contents)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", relative.display());
            }
        }
    }
    for dir in GENERATED_DIRS {
        for stale in files_under(&root, Path::new(dir))? {
            if files.contains_key(&stale) {
                continue;
            }
            match mode {
                Mode::Check => drift.push(format!("{} is stale", stale.display())),
                Mode::Write => {
                    fs::remove_file(root.join(&stale))
                        .with_context(|| format!("removing {}", stale.display()))?;
                    eprintln!("removed {}", stale.display());
                }
            }
        }
    }
    if !drift.is_empty() {
        bail!(
            "generated files differ from the sources:\n  {}\nrun `cargo xtask codegen` and commit the result",
            drift.join("\n  ")
        );
    }
    Ok(())
}

/// Every generated file, by path relative to the workspace root.
pub(crate) fn generated_files() -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    let schemas = crate::samples::schemas();
    for (name, schema) in &schemas {
        files.insert(
            PathBuf::from(format!("schemas/{name}.schema.json")),
            pretty(schema)?,
        );
        files.insert(
            PathBuf::from(format!("schemas/{name}.d.ts")),
            crate::typescript::declarations(name, schema)?,
        );
    }
    let names: Vec<&str> = schemas.iter().map(|(name, _)| *name).collect();
    files.insert(
        PathBuf::from("schemas/index.d.ts"),
        crate::typescript::index(&names),
    );
    for tool in memory_protocol::tools::all_tools() {
        files.insert(
            PathBuf::from(format!("schemas/tools/{}.openai.json", tool.name)),
            pretty(&tool.openai_function())?,
        );
        files.insert(
            PathBuf::from(format!("schemas/tools/{}.mcp.json", tool.name)),
            pretty(&tool.mcp_tool())?,
        );
    }
    let instances = crate::samples::instances()?;
    for (name, values) in &instances {
        files.insert(
            PathBuf::from(format!("fixtures/protocol/{name}.json")),
            pretty(&serde_json::Value::Array(values.clone()))?,
        );
    }
    files.insert(
        PathBuf::from("fixtures/typescript/samples.ts"),
        crate::typescript::samples(&instances)?,
    );
    for (name, text) in memory_prompts::fixtures::rendered_examples()? {
        files.insert(PathBuf::from(format!("fixtures/prompts/{name}")), text);
    }
    Ok(files)
}

fn pretty(value: &serde_json::Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}

/// Files under `dir` (relative to `root`), as paths relative to `root`.
fn files_under(root: &Path, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(relative) = pending.pop() {
        let absolute = root.join(&relative);
        if !absolute.is_dir() {
            continue;
        }
        for entry in
            fs::read_dir(&absolute).with_context(|| format!("listing {}", absolute.display()))?
        {
            let entry = entry?;
            let child = relative.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                pending.push(child);
            } else {
                found.push(child);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_files_are_up_to_date() {
        if let Err(err) = super::run(super::Mode::Check) {
            panic!("{err:#}");
        }
    }
}
