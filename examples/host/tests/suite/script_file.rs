//! `scripts/long.json` is what `long_script()` generates.

use reference_host::Script;
use reference_host::long_script::long_script;

fn script_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/long.json")
}

/// The checked-in script equals the generator's; `UPDATE_SCRIPTS=1` rewrites it.
#[test]
fn long_json_is_generated_by_long_script() {
    let mut expected = serde_json::to_string_pretty(&long_script()).unwrap();
    expected.push('\n');
    if std::env::var_os("UPDATE_SCRIPTS").is_some() {
        std::fs::write(script_path(), &expected).unwrap();
    }
    let actual = std::fs::read_to_string(script_path()).unwrap();
    assert!(
        actual == expected,
        "scripts/long.json is stale; run UPDATE_SCRIPTS=1 cargo test -p reference-host"
    );
    let script = Script::from_json(&actual).unwrap();
    let turns: usize = script.sessions.iter().map(|s| s.turns.len()).sum();
    assert_eq!(turns, 200);
    assert_eq!(script.projects.len(), 2);
}
