//! Phase 2 end to end with a fake model: files, the no-change skip, new input, failures and
//! backoff, the guard, a crash mid-write, heartbeats, a lost lease, redaction, notes, usage.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use memory_protocol::consolidation::{ConsolidationInput, ConsolidationOutput};
use memory_protocol::names::memory_root as names;
use memory_protocol::{ModelClient, ModelError, ModelRequest, ModelResponse, TaskKind};
use memory_write::citations::record_citations;
use memory_write::memory_root::MemoryRoot;
use memory_write::phase_two::{PhaseTwoOptions, PhaseTwoReport, run_phase_two};
use memory_write::store::{PhaseTwoClaim, PhaseTwoClaimParams, WriteStore, now_unix};
use memory_write::{Error, StateStore};
use rusqlite::{Connection, params};

pub(crate) type Reply =
    Box<dyn Fn(&ConsolidationInput) -> Result<String, ModelError> + Send + Sync>;

/// A model that answers consolidation requests with `reply`, after `delay`.
pub(crate) struct FakeModel {
    reply: Reply,
    delay: Duration,
    calls: AtomicUsize,
    pub(crate) requests: Mutex<Vec<ModelRequest>>,
    during_call: Option<Box<dyn Fn() + Send + Sync>>,
    pub(crate) window: Option<u64>,
}

impl FakeModel {
    pub(crate) fn new(
        reply: impl Fn(&ConsolidationInput) -> Result<String, ModelError> + Send + Sync + 'static,
    ) -> Self {
        FakeModel {
            reply: Box::new(reply),
            delay: Duration::ZERO,
            calls: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
            during_call: None,
            window: Some(100_000),
        }
    }

    /// Answers with a MEMORY.md listing every selected raw memory after the old text.
    fn appending() -> Self {
        FakeModel::new(|input| {
            let mut memory_md = input.memory_md.clone();
            for record in &input.selected {
                if !memory_md.contains(&record.raw_memory) {
                    memory_md.push_str(&format!("\n- {}\n", record.raw_memory));
                }
            }
            answer(&memory_md, "## What's in memory\n- things", &[])
        })
    }

    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

pub(crate) fn answer(
    memory_md: &str,
    summary: &str,
    obsolete: &[&str],
) -> Result<String, ModelError> {
    Ok(serde_json::to_string(&ConsolidationOutput {
        memory_md: memory_md.to_owned(),
        memory_summary_md: summary.to_owned(),
        obsolete: obsolete.iter().map(|entry| (*entry).to_owned()).collect(),
    })
    .unwrap())
}

#[async_trait]
impl ModelClient for FakeModel {
    fn name(&self) -> String {
        "fake".to_owned()
    }

    fn context_window(&self) -> Option<u64> {
        self.window
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.task, TaskKind::Consolidation);
        assert_eq!(
            request.output_schema,
            Some(ConsolidationOutput::output_schema())
        );
        let input: ConsolidationInput =
            serde_json::from_value(request.structured_input.clone()).unwrap();
        self.requests.lock().unwrap().push(request);
        if let Some(hook) = &self.during_call {
            tokio::time::sleep(self.delay / 2).await;
            hook();
            tokio::time::sleep(self.delay / 2).await;
        } else {
            tokio::time::sleep(self.delay).await;
        }
        (self.reply)(&input).map(|text| ModelResponse { text, usage: None })
    }
}

pub(crate) struct Home {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) store: StateStore,
    pub(crate) root: MemoryRoot,
}

impl Home {
    pub(crate) fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open_home(dir.path()).unwrap();
        let root = MemoryRoot::under_home(dir.path());
        Home { dir, store, root }
    }

    fn db_path(&self) -> PathBuf {
        self.dir.path().join("state.sqlite")
    }

    pub(crate) fn sql(&self) -> Connection {
        Connection::open(self.db_path()).unwrap()
    }

    /// Stores a thread and its stage-one output, as phase 1 would, and signals phase 2.
    pub(crate) fn output(&self, id: &str, raw_memory: &str) {
        let now = now_unix();
        let sql = self.sql();
        sql.execute(
            "INSERT OR REPLACE INTO threads (id, rollout_path, cwd, created_at, updated_at,
                 last_activity_at, memory_mode, source_watermark, source_fingerprint, file_size,
                 file_mtime_ns)
             VALUES (?1, ?2, '/work/repo', 0, 0, 0, 'enabled', 0, '', 0, 0)",
            params![id, format!("/sessions/{id}.jsonl")],
        )
        .unwrap();
        sql.execute(
            "INSERT OR REPLACE INTO stage1_outputs (thread_id, raw_memory, rollout_summary,
                 rollout_slug, source_updated_at, generated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            params![
                id,
                raw_memory,
                format!("# Session {id}"),
                format!("slug {id}"),
                now - 60
            ],
        )
        .unwrap();
        sql.execute(
            "UPDATE phase2_lease SET input_watermark = input_watermark + 1 WHERE id = 1",
            [],
        )
        .unwrap();
    }

    pub(crate) fn read(&self, name: &str) -> Option<String> {
        self.root.read(name).unwrap()
    }

    pub(crate) async fn run(
        &self,
        model: &FakeModel,
        options: &PhaseTwoOptions,
    ) -> memory_write::Result<PhaseTwoReport> {
        run_phase_two(&self.store, &self.root, model, options).await
    }
}

/// No cooldown, so every run claims; the hash alone decides whether the model is called.
pub(crate) fn eager() -> PhaseTwoOptions {
    PhaseTwoOptions {
        cooldown_seconds: 0,
        failure_backoff_seconds: 0,
        ..PhaseTwoOptions::default()
    }
}

fn summaries(root: &MemoryRoot) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.rollout_summaries_dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_pass_writes_the_memory_root_and_a_second_makes_no_model_call() {
    let home = Home::new();
    home.output("thread-b", "use `cargo nextest run` in /work/repo");
    home.output("thread-a", "the build needs protoc installed");
    let model = FakeModel::appending();
    let report = home
        .run(
            &model,
            &PhaseTwoOptions {
                force: true,
                ..PhaseTwoOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(report.ran);
    assert_eq!((report.selected, report.model_calls), (2, 1));
    // Two rollout summaries, raw_memories.md, MEMORY.md and memory_summary.md.
    assert_eq!(report.files_written, 5);
    let memory = home.read(names::MEMORY_FILE).unwrap();
    assert!(memory.contains("cargo nextest run") && memory.contains("protoc"));
    assert_eq!(
        home.read(names::MEMORY_SUMMARY_FILE)
            .unwrap()
            .lines()
            .next(),
        Some("v1")
    );
    let raw = home.read(names::RAW_MEMORIES_FILE).unwrap();
    assert!(raw.find("thread-a").unwrap() < raw.find("thread-b").unwrap());
    assert_eq!(summaries(&home.root).len(), 2);
    // The structured input lists the selection in thread-id order.
    let request = model.requests.lock().unwrap()[0].clone();
    let input: ConsolidationInput = serde_json::from_value(request.structured_input).unwrap();
    let ids: Vec<&str> = input
        .selected
        .iter()
        .map(|r| r.thread_id.as_str())
        .collect();
    assert_eq!(ids, vec!["thread-a", "thread-b"]);
    assert!(request.input.contains("protoc"));
    let selected = home.store.stage_one_outputs().await.unwrap();
    assert!(selected.iter().all(|record| record.selected));

    // Default cooldown, no new input: skipped without claiming.
    let again = home
        .run(
            &model,
            &PhaseTwoOptions {
                force: true,
                ..PhaseTwoOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(!again.ran && again.skipped.is_some());
    // No cooldown: claimed, but the inputs are unchanged, so no model call and no writes.
    let again = home.run(&model, &eager()).await.unwrap();
    assert!(again.ran && again.unchanged);
    assert_eq!((again.model_calls, again.files_written), (0, 0));
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn nothing_remembered_yet_needs_no_model_call_and_input_later_runs_at_once() {
    let home = Home::new();
    let model = FakeModel::appending();
    let report = home.run(&model, &PhaseTwoOptions::default()).await.unwrap();
    assert_eq!((report.ran, report.model_calls), (false, 0), "{report:?}");
    assert_eq!(
        report.skipped.as_deref(),
        Some("no memories to consolidate yet")
    );
    assert_eq!(home.read("MEMORY.md"), None);

    // The empty pass must not start a cooldown that delays the first real consolidation.
    home.output("thread-a", "the build needs protoc installed");
    let report = home.run(&model, &PhaseTwoOptions::default()).await.unwrap();
    assert_eq!((report.ran, report.model_calls), (true, 1), "{report:?}");
    assert!(home.read("MEMORY.md").is_some());
}

#[tokio::test]
async fn new_input_or_a_deleted_file_brings_the_model_back() {
    let home = Home::new();
    home.output("t1", "first fact");
    let model = FakeModel::appending();
    home.run(&model, &eager()).await.unwrap();
    home.output("t2", "second fact");
    let forced = PhaseTwoOptions {
        force: true,
        ..PhaseTwoOptions::default()
    };
    let report = home.run(&model, &forced).await.unwrap();
    assert_eq!(
        (report.ran, report.model_calls),
        (true, 1),
        "new input skips the cooldown"
    );
    assert!(
        home.read(names::MEMORY_FILE)
            .unwrap()
            .contains("second fact")
    );
    std::fs::remove_file(home.root.file(names::MEMORY_FILE)).unwrap();
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.model_calls, 1, "a missing MEMORY.md is rebuilt");
    assert_eq!(model.calls(), 3);
}

#[tokio::test]
async fn forgotten_outputs_lose_their_rollout_summary() {
    let home = Home::new();
    home.output("t1", "one");
    home.output("t2", "two");
    let model = FakeModel::appending();
    home.run(&model, &eager()).await.unwrap();
    assert_eq!(summaries(&home.root).len(), 2);
    home.sql()
        .execute("DELETE FROM stage1_outputs WHERE thread_id = 't1'", [])
        .unwrap();
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.selected, 1);
    let left = summaries(&home.root);
    assert_eq!(left.len(), 1);
    assert!(left[0].ends_with("-slug_t2.md"), "{left:?}");
    assert!(
        !home
            .read(names::RAW_MEMORIES_FILE)
            .unwrap()
            .contains("`t1`")
    );
}

#[tokio::test]
async fn invalid_model_output_fails_with_backoff_and_keeps_the_files() {
    let home = Home::new();
    home.output("t1", "fact");
    home.run(&FakeModel::appending(), &eager()).await.unwrap();
    let memory_before = home.read(names::MEMORY_FILE).unwrap();
    home.output("t2", "another fact");
    let broken = FakeModel::new(|_| Ok(r#"{"memory_md": "x", "unexpected": 1}"#.to_owned()));
    let options = PhaseTwoOptions {
        failure_backoff_seconds: 3600,
        ..eager()
    };
    let error = home.run(&broken, &options).await.unwrap_err();
    assert!(matches!(error, Error::InvalidModelOutput(_)), "{error}");
    assert_eq!(home.read(names::MEMORY_FILE).unwrap(), memory_before);
    let state = home.store.phase_two_state().await.unwrap();
    assert!(state.last_error.unwrap().contains("invalid model output"));
    assert!(state.retry_after_at.unwrap() > now_unix());
    let skipped = home.run(&FakeModel::appending(), &options).await.unwrap();
    let reason = skipped.skipped.unwrap();
    assert!(
        reason.starts_with("backing off after a failure until 20"),
        "{reason}"
    );

    let failing = FakeModel::new(|_| {
        Err(ModelError::Transient {
            message: "timeout".into(),
        })
    });
    let forced = PhaseTwoOptions {
        force: true,
        ..options
    };
    let error = home.run(&failing, &forced).await.unwrap_err();
    assert!(error.to_string().contains("timeout"), "{error}");
    assert_eq!(home.read(names::MEMORY_FILE).unwrap(), memory_before);
}

#[tokio::test]
async fn a_lossy_rewrite_is_rejected_and_the_new_material_appended() {
    let home = Home::new();
    home.output("t1", "deploy with `make release` from tools/deploy.sh");
    home.run(&FakeModel::appending(), &eager()).await.unwrap();
    let old = home.read(names::MEMORY_FILE).unwrap();
    home.output("t2", "the staging host is staging-01");
    let lossy = FakeModel::new(|_| answer("# Memory\nonly the staging host\n", "summary", &[]));
    let report = home.run(&lossy, &eager()).await.unwrap();
    assert!(
        report.guard_missing.contains(&"make release".to_owned()),
        "{:?}",
        report.guard_missing
    );
    let memory = home.read(names::MEMORY_FILE).unwrap();
    assert!(memory.starts_with(old.trim_end()));
    assert!(memory.contains("staging-01") && memory.contains("Thread `t2`"));
    assert!(!memory.contains("only the staging host"));

    // Marking the dropped anchors obsolete makes the same rewrite acceptable.
    home.output("t3", "one more");
    let honest = FakeModel::new(|input| {
        let mut obsolete =
            memory_transcript::anchors::missing_anchors(&input.memory_md, "# Memory\nshort\n", &[]);
        obsolete.sort();
        let obsolete: Vec<&str> = obsolete.iter().map(String::as_str).collect();
        answer("# Memory\nshort\n", "summary", &obsolete)
    });
    let report = home.run(&honest, &eager()).await.unwrap();
    assert!(report.guard_missing.is_empty());
    assert_eq!(home.read(names::MEMORY_FILE).unwrap(), "# Memory\nshort\n");
}

#[tokio::test]
async fn a_crash_while_writing_the_memory_files_leaves_the_old_ones() {
    let home = Home::new();
    home.output("t1", "old fact");
    home.run(&FakeModel::appending(), &eager()).await.unwrap();
    let memory_before = home.read(names::MEMORY_FILE).unwrap();
    let summary_before = home.read(names::MEMORY_SUMMARY_FILE).unwrap();
    home.output("t2", "new fact");
    let crashing_root = home
        .root
        .clone()
        .with_crash_before_rename(Arc::new(|target: &Path| {
            if target.ends_with(names::MEMORY_FILE) {
                Err(std::io::Error::other("simulated crash"))
            } else {
                Ok(())
            }
        }));
    let model = FakeModel::appending();
    let error = run_phase_two(&home.store, &crashing_root, &model, &eager())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("simulated crash"), "{error}");
    assert_eq!(home.read(names::MEMORY_FILE).unwrap(), memory_before);
    assert_eq!(
        home.read(names::MEMORY_SUMMARY_FILE).unwrap(),
        summary_before
    );
    // The failure was recorded and the next pass (forced past the backoff) finishes the job.
    let state = home.store.phase_two_state().await.unwrap();
    assert!(state.last_error.is_some());
    let report = home
        .run(
            &model,
            &PhaseTwoOptions {
                force: true,
                ..eager()
            },
        )
        .await
        .unwrap();
    assert!(report.ran);
    assert!(home.read(names::MEMORY_FILE).unwrap().contains("new fact"));
    let leftovers = std::fs::read_dir(home.root.dir())
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .count();
    assert_eq!(leftovers, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_hold_the_lease_while_the_model_runs() {
    let home = Home::new();
    home.output("t1", "fact");
    let db = home.db_path();
    let competitor: Arc<Mutex<Option<PhaseTwoClaim>>> = Arc::default();
    let seen = competitor.clone();
    let mut model = FakeModel::appending();
    model.delay = Duration::from_millis(5_000);
    // Halfway through the call, past the 2 s lease, another worker tries to claim.
    model.during_call = Some(Box::new(move || {
        // Another process's claim: its own connection, on a thread of its own.
        let db = db.clone();
        let claim = std::thread::spawn(move || {
            let store = StateStore::open(&db).unwrap();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime.block_on(store.claim_phase_two(PhaseTwoClaimParams {
                now: now_unix(),
                lease_seconds: 2,
                cooldown_seconds: 0,
                force: true,
            }))
        })
        .join()
        .unwrap()
        .unwrap();
        *seen.lock().unwrap() = Some(claim);
    }));
    let options = PhaseTwoOptions {
        lease_seconds: 2,
        heartbeat_interval: Duration::from_millis(100),
        ..eager()
    };
    let report = home.run(&model, &options).await.unwrap();
    assert!(report.ran);
    let claim = competitor.lock().unwrap().clone().unwrap();
    assert!(
        matches!(claim, PhaseTwoClaim::SkippedRunning { .. }),
        "{claim:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_abandons_the_pass_without_writing() {
    let home = Home::new();
    home.output("t1", "fact");
    let db = home.db_path();
    let mut model = FakeModel::appending();
    model.delay = Duration::from_millis(600);
    model.during_call = Some(Box::new(move || {
        Connection::open(&db)
            .unwrap()
            .execute(
                "UPDATE phase2_lease SET owner_token = 'someone-else' WHERE id = 1",
                [],
            )
            .unwrap();
    }));
    let options = PhaseTwoOptions {
        heartbeat_interval: Duration::from_millis(100),
        ..eager()
    };
    let error = home.run(&model, &options).await.unwrap_err();
    assert!(matches!(error, Error::LeaseLost), "{error}");
    assert_eq!(home.read(names::MEMORY_FILE), None);
    let state = home.store.phase_two_state().await.unwrap();
    assert_eq!(
        state.owner_token.as_deref(),
        Some("someone-else"),
        "the new owner is untouched"
    );
}

#[tokio::test]
async fn secrets_are_redacted_going_in_and_coming_out() {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let home = Home::new();
    home.output("t1", &format!("token was {secret}"));
    std::fs::create_dir_all(home.root.dir()).unwrap();
    std::fs::write(
        home.root.file(names::MEMORY_FILE),
        format!("hand edit: {secret}\n"),
    )
    .unwrap();
    let model = FakeModel::new(move |input| {
        answer(
            &format!("{}\nleaked {secret}\n", input.memory_md),
            "v1\nok",
            &[],
        )
    });
    home.run(&model, &eager()).await.unwrap();
    let request = model.requests.lock().unwrap()[0].clone();
    assert!(!request.input.contains(secret));
    assert!(!request.structured_input.to_string().contains(secret));
    let memory = home.read(names::MEMORY_FILE).unwrap();
    assert!(!memory.contains(secret), "{memory}");
    assert!(memory.contains(memory_protocol::names::REDACTED_SECRET));
}

#[tokio::test]
async fn the_summary_is_cut_to_its_budget() {
    let home = Home::new();
    home.output("t1", "fact");
    let huge = "word ".repeat(20_000);
    let model = FakeModel::new(move |_| answer("# Memory\n", &huge, &[]));
    let options = PhaseTwoOptions {
        summary_token_budget: 300,
        ..eager()
    };
    home.run(&model, &options).await.unwrap();
    let summary = home.read(names::MEMORY_SUMMARY_FILE).unwrap();
    assert!(summary.starts_with("v1\n"));
    assert!(summary.len() < 3_000, "{} bytes", summary.len());
}

#[tokio::test]
async fn notes_are_consolidated_and_a_new_note_is_new_input() {
    let home = Home::new();
    home.output("t1", "fact one");
    std::fs::create_dir_all(home.root.dir().join(names::NOTES_DIR)).unwrap();
    let note = home
        .root
        .dir()
        .join(names::NOTES_DIR)
        .join("2026-03-15T08-02-11Z-1a2b.md");
    std::fs::write(
        &note,
        "# Agent note\n\nThe April export uses semicolons; key sk-proj-EXAMPLEonlyNotARealKey0123456789\n",
    )
    .unwrap();
    // A link in notes/ is not read.
    let outside = home.dir.path().join("outside.md");
    std::fs::write(&outside, "never read").unwrap();
    std::os::unix::fs::symlink(&outside, home.root.dir().join("notes/link.md")).unwrap();
    let model = FakeModel::new(|input| {
        let notes: String = input.notes.iter().map(|note| note.text.clone()).collect();
        answer(&format!("# Memory\n{notes}"), "## Notes\n- semicolons", &[])
    });
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.model_calls, 1);
    let request = model.requests.lock().unwrap()[0].clone();
    let input: ConsolidationInput = serde_json::from_value(request.structured_input).unwrap();
    assert_eq!(input.notes.len(), 1);
    assert_eq!(input.notes[0].path, "notes/2026-03-15T08-02-11Z-1a2b.md");
    assert!(
        input.notes[0].text.contains("[REDACTED_SECRET]"),
        "notes are redacted"
    );
    assert!(request.input.contains("<raw-memory source=\"notes\">"));
    assert!(!request.input.contains("never read"));
    assert!(
        home.read(names::MEMORY_FILE)
            .unwrap()
            .contains("semicolons")
    );

    // Unchanged notes: no call. A new note: a new pass.
    home.run(&model, &eager()).await.unwrap();
    assert_eq!(model.calls(), 1);
    std::fs::write(
        home.root.dir().join("notes/2026-03-16T08-00-00Z-0001.md"),
        "second note",
    )
    .unwrap();
    home.run(&model, &eager()).await.unwrap();
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn notes_alone_are_worth_a_first_pass() {
    let home = Home::new();
    std::fs::create_dir_all(home.root.dir().join(names::NOTES_DIR)).unwrap();
    std::fs::write(home.root.dir().join("notes/a.md"), "use tabs").unwrap();
    let model = FakeModel::new(|input| answer(&input.notes[0].text, "## Notes", &[]));
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.skipped, None);
    assert_eq!(report.model_calls, 1);
    assert_eq!(home.read(names::MEMORY_FILE).as_deref(), Some("use tabs"));
}

#[tokio::test]
async fn codex_ad_hoc_notes_are_consolidated_like_our_own() {
    let home = Home::new();
    home.output("t1", "fact one");
    std::fs::create_dir_all(home.root.dir().join(names::NOTES_DIR)).unwrap();
    std::fs::write(home.root.dir().join("notes/a.md"), "our note").unwrap();
    let ad_hoc = home.root.dir().join(names::AD_HOC_NOTES_DIR);
    std::fs::create_dir_all(&ad_hoc).unwrap();
    // As codex's add_ad_hoc_note writes it: the note text alone, a timestamped name.
    std::fs::write(
        ad_hoc.join("2026-12-04T07-00-00-deploys-need-vpn.md"),
        "Deploys to staging need the VPN up first.",
    )
    .unwrap();
    // codex's instructions for the extension are not a note.
    std::fs::write(
        home.root.dir().join("extensions/ad_hoc/instructions.md"),
        "instructions",
    )
    .unwrap();
    let model = FakeModel::new(|input| {
        let notes: String = input.notes.iter().map(|note| note.text.clone()).collect();
        answer(&format!("# Memory\n{notes}"), "## Notes", &[])
    });
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.model_calls, 1);
    let request = model.requests.lock().unwrap()[0].clone();
    let input: ConsolidationInput = serde_json::from_value(request.structured_input).unwrap();
    let paths: Vec<&str> = input.notes.iter().map(|note| note.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "extensions/ad_hoc/notes/2026-12-04T07-00-00-deploys-need-vpn.md",
            "notes/a.md"
        ]
    );
    assert!(
        home.read(names::MEMORY_FILE)
            .unwrap()
            .contains("need the VPN up first")
    );

    // A new ad-hoc note is new input, as a new note of ours is.
    home.run(&model, &eager()).await.unwrap();
    assert_eq!(model.calls(), 1);
    std::fs::write(ad_hoc.join("2026-12-05T07-00-00-second.md"), "second").unwrap();
    home.run(&model, &eager()).await.unwrap();
    assert_eq!(model.calls(), 2);

    // A symlinked folder on the way is refused, not followed out of the root.
    std::fs::remove_dir_all(home.root.dir().join("extensions")).unwrap();
    let outside = home.dir.path().join("outside");
    std::fs::create_dir_all(outside.join("ad_hoc/notes")).unwrap();
    std::os::unix::fs::symlink(&outside, home.root.dir().join("extensions")).unwrap();
    assert!(home.root.read_notes().is_err());
}

#[tokio::test]
async fn usage_is_recorded() {
    let home = Home::new();
    home.output("t1", "fact");
    let message =
        "Answer.\n<memory-citation>\n<rollout_ids>\nt1\nnope\n</rollout_ids>\n</memory-citation>";
    let usage = record_citations(&home.store, &home.root, message)
        .await
        .unwrap();
    assert_eq!(usage.recorded, 1);
    assert_eq!(usage.cited_threads, ["nope", "t1"]);
    let record = home.store.stage_one_output("t1").await.unwrap().unwrap();
    assert_eq!(record.usage_count, 1);
    assert!(record.last_used_at.is_some());
}

#[tokio::test]
async fn no_control_or_bidi_character_reaches_a_memory_file() {
    let home = Home::new();
    home.output(
        "thread-a",
        "ran `make`\u{1b}[2J\u{7} then \u{202E}txt.exe\u{0} and \u{9b}31m",
    );
    let model = FakeModel::new(|input| {
        let raw = &input.selected[0].raw_memory;
        answer(
            &format!("# Memory\n\n- {raw}\r\n- bell\u{7}\u{7f}\n"),
            "v1\n\u{1b}]0;title\u{7}summary",
            &[],
        )
    });
    let report = home.run(&model, &eager()).await.unwrap();
    assert!(report.ran);
    let mut files = vec![
        home.root.file(names::MEMORY_FILE),
        home.root.file(names::MEMORY_SUMMARY_FILE),
        home.root.file(names::RAW_MEMORIES_FILE),
    ];
    files.extend(
        std::fs::read_dir(home.root.rollout_summaries_dir())
            .unwrap()
            .map(|entry| entry.unwrap().path()),
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text
                .chars()
                .any(memory_sanitize::safe_text::is_unsafe_for_display),
            "{}: {text:?}",
            file.display()
        );
    }
    let memory = home.read(names::MEMORY_FILE).unwrap();
    assert!(memory.contains("ran `make`␛[2J␇"), "{memory}");
}

#[tokio::test]
async fn deleted_or_damaged_memory_files_are_rebuilt_whatever_the_cooldown() {
    let home = Home::new();
    home.output("thread-a", "the build needs protoc installed");
    let model = FakeModel::appending();
    let cooling = PhaseTwoOptions {
        cooldown_seconds: 6 * 3600,
        ..PhaseTwoOptions::default()
    };
    assert!(home.run(&model, &cooling).await.unwrap().ran);
    let skipped = home.run(&model, &cooling).await.unwrap();
    let reason = skipped.skipped.as_deref().unwrap();
    assert!(
        reason.starts_with("cooling down after a recent success until 20")
            && reason.ends_with("(consolidate --now runs it anyway)"),
        "{reason}"
    );
    assert!(skipped.repaired.is_empty() && !skipped.pending);
    let now = PhaseTwoOptions {
        now: true,
        ..cooling.clone()
    };
    let forced = home.run(&model, &now).await.unwrap();
    assert!(forced.ran && forced.skipped.is_none(), "{forced:?}");

    std::fs::remove_file(home.root.file(names::MEMORY_FILE)).unwrap();
    let repaired = home.run(&model, &cooling).await.unwrap();
    assert!(repaired.ran, "{repaired:?}");
    assert_eq!(repaired.repaired, vec!["MEMORY.md is missing".to_owned()]);
    assert!(home.read(names::MEMORY_FILE).unwrap().contains("protoc"));

    // A summary without its version line, a rollout summary gone, bytes that are not UTF-8.
    std::fs::write(home.root.file(names::MEMORY_SUMMARY_FILE), "no version").unwrap();
    std::fs::write(home.root.file(names::RAW_MEMORIES_FILE), b"\xff\xfe").unwrap();
    for entry in std::fs::read_dir(home.root.rollout_summaries_dir()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let repaired = home.run(&model, &cooling).await.unwrap();
    assert!(repaired.ran);
    assert_eq!(repaired.repaired.len(), 3, "{:?}", repaired.repaired);
    assert!(
        home.root
            .damage(&home.store.stage_one_outputs().await.unwrap())
            .is_empty()
    );
    assert_eq!(summaries(&home.root).len(), 1);
}

#[tokio::test]
async fn outputs_that_arrive_during_a_pass_are_consolidated_before_the_lease_is_released() {
    let home = Arc::new(Home::new());
    home.output("thread-a", "the build needs protoc installed");
    let mut model = FakeModel::appending();
    let during = Arc::clone(&home);
    let added = AtomicUsize::new(0);
    model.during_call = Some(Box::new(move || {
        if added.fetch_add(1, Ordering::SeqCst) == 0 {
            during.output("thread-b", "deploys go through `make release`");
        }
    }));
    model.delay = Duration::from_millis(20);
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!((report.passes, report.model_calls), (2, 2), "{report:?}");
    assert!(report.ran && !report.pending);
    let memory = home.read(names::MEMORY_FILE).unwrap();
    assert!(
        memory.contains("protoc") && memory.contains("make release"),
        "{memory}"
    );
}
