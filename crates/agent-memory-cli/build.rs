//! Sets `AGENT_MEMORY_VERSION`: the package version, plus the git commit when built from a
//! checkout (`0.1.0 (commit 1a2b3c4d5e6f)`), so `--version` says which build is running.

use std::path::Path;
use std::process::Command;

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let full = match git(&manifest_dir, &["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            // Rebuild when HEAD moves: its own file (a branch switch) and the branch's ref.
            for name in ["HEAD", "packed-refs"] {
                watch(&manifest_dir, name);
            }
            if let Some(branch) = git(&manifest_dir, &["symbolic-ref", "-q", "HEAD"]) {
                watch(&manifest_dir, &branch);
            }
            format!("{version} (commit {commit})")
        }
        None => version,
    };
    println!("cargo:rustc-env=AGENT_MEMORY_VERSION={full}");
}

/// Tells cargo to rerun this script when the git file `name` (resolved by git, so a worktree's
/// own HEAD and the shared refs are both found) changes.
fn watch(dir: &str, name: &str) {
    if let Some(path) = git(dir, &["rev-parse", "--git-path", name]) {
        let path = Path::new(dir).join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// `git ARGS` in `dir`, its trimmed output when it succeeds.
fn git(dir: &str, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}
