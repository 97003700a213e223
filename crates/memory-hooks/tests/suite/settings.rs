//! Installing and removing our hooks in Claude Code's `settings.json`.

use std::path::Path;

use memory_hooks::claude_code::settings::{
    Change, HOOK_EVENTS, hook_command, install, is_our_command, uninstall,
};
use proptest::prelude::*;
use serde_json::Value;

const COMMAND: &str = "/opt/bin/agent-memory hook claude-code --home /home/u/.agent-memory";

/// A settings file a user wrote by hand: other keys, other hooks on our events and others,
/// four-space indentation and keys in no sorted order.
const THEIRS: &str = r#"{
    "model": "opus",
    "hooks": {
        "Stop": [
            {
                "hooks": [
                    { "type": "command", "command": "notify-send done" }
                ]
            }
        ],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    { "type": "command", "command": "./check-bash.sh" }
                ]
            }
        ]
    },
    "env": { "FOO": "1" }
}
"#;

fn commands(settings: &Path, event: &str) -> Vec<String> {
    let value: Value = serde_json::from_slice(&std::fs::read(settings).unwrap()).unwrap();
    value["hooks"][event]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .flat_map(|group| group["hooks"].as_array().unwrap().clone())
                .map(|hook| hook["command"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn install_then_uninstall_leaves_a_file_with_other_hooks_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let backups = dir.path().join("home/hooks");
    std::fs::write(&settings, THEIRS).unwrap();

    assert_eq!(
        install(&settings, COMMAND, &backups).unwrap(),
        Change::Written
    );
    for event in HOOK_EVENTS {
        assert!(
            commands(&settings, event).contains(&COMMAND.to_owned()),
            "{event}"
        );
    }
    assert_eq!(
        commands(&settings, "Stop"),
        ["notify-send done", COMMAND],
        "their Stop hook stays first"
    );
    assert_eq!(commands(&settings, "PreToolUse"), ["./check-bash.sh"]);
    // A second install changes nothing.
    assert_eq!(
        install(&settings, COMMAND, &backups).unwrap(),
        Change::Unchanged
    );

    assert_eq!(uninstall(&settings, &backups).unwrap(), Change::Restored);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), THEIRS);
    assert_eq!(uninstall(&settings, &backups).unwrap(), Change::Unchanged);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), THEIRS);
}

#[test]
fn a_file_install_created_is_removed_again() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    let backups = dir.path().join("backups");
    assert_eq!(
        install(&settings, COMMAND, &backups).unwrap(),
        Change::Written
    );
    assert!(settings.exists());
    assert_eq!(uninstall(&settings, &backups).unwrap(), Change::Restored);
    assert!(!settings.exists());
}

#[test]
fn a_file_changed_after_install_loses_only_our_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let backups = dir.path().join("backups");
    std::fs::write(&settings, THEIRS).unwrap();
    install(&settings, COMMAND, &backups).unwrap();
    // The user adds a hook of their own to an event we also use.
    let mut value: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    value["hooks"]["SessionStart"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"hooks": [{"type": "command", "command": "echo hi"}]}));
    std::fs::write(&settings, serde_json::to_string(&value).unwrap()).unwrap();

    assert_eq!(uninstall(&settings, &backups).unwrap(), Change::Written);
    for event in HOOK_EVENTS {
        assert!(
            !commands(&settings, event).iter().any(|c| is_our_command(c)),
            "{event}"
        );
    }
    assert_eq!(commands(&settings, "SessionStart"), ["echo hi"]);
    assert_eq!(commands(&settings, "Stop"), ["notify-send done"]);
    assert_eq!(
        commands(&settings, "UserPromptSubmit"),
        Vec::<String>::new()
    );
    let value: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(value["model"], "opus");
    assert_eq!(value["env"]["FOO"], "1");
    assert!(value["hooks"].get("UserPromptSubmit").is_none(), "{value}");
}

#[test]
fn a_settings_file_of_another_shape_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    for text in [
        "[1, 2]",
        "{\"hooks\": 3}",
        "{\"hooks\": {\"Stop\": {}}}",
        "{not json",
    ] {
        std::fs::write(&settings, text).unwrap();
        let error = install(&settings, COMMAND, dir.path()).unwrap_err();
        assert!(error.to_string().contains("settings file"), "{error}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    }
}

#[test]
fn the_command_quotes_paths_for_the_shell() {
    assert_eq!(
        hook_command(Path::new("/usr/local/bin/agent-memory"), None),
        "/usr/local/bin/agent-memory hook claude-code"
    );
    let command = hook_command(
        Path::new("/home/o'neil/my tools/agent-memory"),
        Some(Path::new("/tmp/h")),
    );
    assert_eq!(
        command,
        "'/home/o'\\''neil/my tools/agent-memory' hook claude-code --home /tmp/h"
    );
    assert!(is_our_command(&command));
    assert!(!is_our_command("notify-send done"));
}

fn other_hooks() -> impl Strategy<Value = Value> {
    let hook = "[a-z ./-]{1,20}"
        .prop_map(|command| serde_json::json!({"type": "command", "command": command}));
    let group =
        proptest::collection::vec(hook, 1..3).prop_map(|hooks| serde_json::json!({"hooks": hooks}));
    let event = prop_oneof![
        Just("Stop"),
        Just("SessionStart"),
        Just("PreToolUse"),
        Just("Notification")
    ];
    proptest::collection::btree_map(event, proptest::collection::vec(group, 1..3), 0..4)
        .prop_map(|events| serde_json::json!({"hooks": events, "theme": "dark"}))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_settings_with_other_hooks_come_back_byte_identical(value in other_hooks(), pretty in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        std::fs::write(&settings, &text).unwrap();
        install(&settings, COMMAND, dir.path()).unwrap();
        uninstall(&settings, dir.path()).unwrap();
        prop_assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    }
}
