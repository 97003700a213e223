//! Installing our hooks in Claude Code's `settings.json`, and removing exactly them.
//!
//! The hooks live under `hooks.<Event>` as groups `{"hooks": [{"type": "command", "command"}]}`.
//! [`install`] adds one group per event of [`HOOK_EVENTS`] running our command, leaving every
//! other key, event and hook as it was; a hook of ours already there is updated in place. So
//! that [`uninstall`] can give back the file exactly as it was, install keeps the original
//! bytes beside the hash of what it wrote; when the file is still what install wrote, uninstall
//! restores those bytes (or removes the file install created). When someone changed it since,
//! uninstall removes our hooks from the JSON and keeps their change (the file is then written
//! back as formatted JSON).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::session_state::write_atomically;
use crate::error::{Error, Result};

/// The events our hook answers.
pub const HOOK_EVENTS: [&str; 5] = [
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "PreCompact",
    "SessionEnd",
];

/// How every command of ours ends: the subcommand that answers Claude Code's hooks.
pub const HOOK_SUBCOMMAND: &str = "hook claude-code";

/// What install or uninstall did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The file was written.
    Written,
    /// The file was given back exactly as it was before install (or removed, when install
    /// created it).
    Restored,
    /// Nothing needed doing.
    Unchanged,
}

/// Whether `command` is one of ours (any path to the binary, our subcommand after it).
pub fn is_our_command(command: &str) -> bool {
    command.contains("agent-memory") && command.contains(&format!(" {HOOK_SUBCOMMAND}"))
}

/// The command line that runs `program`'s hook answer (with `--home` when one is given),
/// quoted for the shell Claude Code runs it with.
pub fn hook_command(program: &Path, home: Option<&Path>) -> String {
    let mut command = format!(
        "{} {HOOK_SUBCOMMAND}",
        shell_word(&program.to_string_lossy())
    );
    if let Some(home) = home {
        command.push_str(" --home ");
        command.push_str(&shell_word(&home.to_string_lossy()));
    }
    command
}

/// `text` as one shell word: as is when it holds only safe characters, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// What install kept to undo itself.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Backup {
    /// The settings file.
    path: PathBuf,
    /// Its text before install; `None` when install created it.
    original: Option<String>,
    /// SHA-256 of what install wrote.
    installed_sha256: String,
}

/// Adds our hooks (running `command`) to the settings file at `settings`, creating it when
/// missing. `backup_dir` keeps what uninstall needs to restore the file.
pub fn install(settings: &Path, command: &str, backup_dir: &Path) -> Result<Change> {
    let original = read_text(settings)?;
    let mut root = parse(settings, original.as_deref().unwrap_or("{}"))?;
    let hooks = object_entry(settings, &mut root, "hooks")?;
    let mut changed = false;
    for event in HOOK_EVENTS {
        let groups = match hooks
            .entry(event.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            Value::Array(groups) => groups,
            _ => return Err(shape(settings, &format!("hooks.{event} is not a list"))),
        };
        let mut found = false;
        for group in groups.iter_mut() {
            for hook in our_hooks_mut(group) {
                found = true;
                if hook.get("command").and_then(Value::as_str) != Some(command) {
                    hook.insert("command".to_owned(), Value::String(command.to_owned()));
                    changed = true;
                }
            }
        }
        if !found {
            groups.push(json!({"hooks": [{"type": "command", "command": command}]}));
            changed = true;
        }
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    let text = render(&root);
    let backup = backup_path(backup_dir, settings);
    // A second install over our own earlier one keeps the first original.
    let original = match read_backup(&backup)? {
        Some(earlier) => earlier.original,
        None => original,
    };
    let record = Backup {
        path: settings.to_owned(),
        original,
        installed_sha256: sha256(text.as_bytes()),
    };
    let record = serde_json::to_vec_pretty(&record).map_err(|e| shape(settings, &e.to_string()))?;
    write_atomically(&backup, &record)?;
    write_atomically(settings, text.as_bytes())?;
    Ok(Change::Written)
}

/// Removes our hooks from the settings file at `settings`: restores the file install found
/// when it is unchanged since, else removes exactly our hooks.
pub fn uninstall(settings: &Path, backup_dir: &Path) -> Result<Change> {
    let backup = backup_path(backup_dir, settings);
    let record = read_backup(&backup)?;
    let current = read_text(settings)?;
    if let (Some(record), Some(current)) = (&record, &current)
        && record.installed_sha256 == sha256(current.as_bytes())
    {
        match &record.original {
            Some(original) => write_atomically(settings, original.as_bytes())?,
            None => std::fs::remove_file(settings).map_err(|error| Error::Io {
                path: settings.to_owned(),
                error,
            })?,
        }
        remove_if_present(&backup)?;
        return Ok(Change::Restored);
    }
    remove_if_present(&backup)?;
    let Some(current) = current else {
        return Ok(Change::Unchanged);
    };
    let mut root = parse(settings, &current)?;
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return Ok(Change::Unchanged);
    };
    let mut changed = false;
    for event in HOOK_EVENTS {
        let Some(Value::Array(groups)) = hooks.get_mut(event) else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(Value::Array(list)) = group.get_mut("hooks") {
                let before = list.len();
                list.retain(|hook| !is_ours(hook));
                changed |= list.len() != before;
            }
        }
        groups.retain(
            |group| !matches!(group.get("hooks"), Some(Value::Array(list)) if list.is_empty()),
        );
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    write_atomically(settings, render(&root).as_bytes())?;
    Ok(Change::Written)
}

fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(is_our_command)
}

fn our_hooks_mut(group: &mut Value) -> Vec<&mut Map<String, Value>> {
    match group.get_mut("hooks") {
        Some(Value::Array(list)) => list
            .iter_mut()
            .filter(|hook| is_ours(hook))
            .filter_map(Value::as_object_mut)
            .collect(),
        _ => Vec::new(),
    }
}

fn object_entry<'a>(
    settings: &Path,
    root: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>> {
    match root
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(map) => Ok(map),
        _ => Err(shape(settings, &format!("`{key}` is not an object"))),
    }
}

fn parse(settings: &Path, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(shape(settings, "the file is not a JSON object")),
        Err(error) => Err(shape(settings, &error.to_string())),
    }
}

fn render(root: &Map<String, Value>) -> String {
    let mut text = serde_json::to_string_pretty(root).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

fn shape(settings: &Path, message: &str) -> Error {
    Error::Settings {
        path: settings.to_owned(),
        message: message.to_owned(),
    }
}

fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| shape(path, "the file is not UTF-8")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(Error::Io {
            path: path.to_owned(),
            error,
        }),
    }
}

fn read_backup(path: &Path) -> Result<Option<Backup>> {
    Ok(read_text(path)?.and_then(|text| serde_json::from_str(&text).ok()))
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(Error::Io {
            path: path.to_owned(),
            error,
        }),
    }
}

/// The backup of one settings file, named by a hash of its path.
fn backup_path(backup_dir: &Path, settings: &Path) -> PathBuf {
    let hash = sha256(settings.to_string_lossy().as_bytes());
    backup_dir.join(format!("settings-{}.json", &hash[..16]))
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
