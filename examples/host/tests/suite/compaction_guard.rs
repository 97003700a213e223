//! codex #40619: a compaction that would leave the context larger is not applied.

use reference_host::{Host, HostOptions, Script, ScriptedModel, Seam};

#[test]
fn a_compaction_of_a_small_context_that_would_grow_it_is_not_applied() {
    // A case the property test found: after goal edits, pauses and a giant output, the user
    // asks for a compaction of a context the offline summary would not make smaller.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compaction_grows.json");
    let script = Script::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let host = Host::new(
        HostOptions::for_script(&script, home.path()),
        ScriptedModel::new(script.replies()),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(host.run_script(&script)).unwrap();
    assert!(report.compactions_not_applied >= 1, "{report:#?}");
    assert_eq!(report.count(Seam::CompactionShrinks), 0, "{report:#?}");
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
}
