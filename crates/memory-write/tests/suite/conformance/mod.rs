//! The store conformance suite: the same tests against every backend of
//! [`memory_write::store::WriteStore`].
//!
//! SQLite always runs. PostgreSQL runs when `AGENT_MEMORY_TEST_PG_URL` names a server (CI starts
//! one with `.ci/postgres.sh`); each test then works in a schema of its own, so tests run in
//! parallel on one database. Without the variable the PostgreSQL half is skipped, and the run
//! says so on standard error (uncaptured, so it shows even when the tests pass).

mod forget;
mod phase_two;
mod postgres_errors;
mod schema;
mod shared_store;
mod stage_one;
mod threads;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use memory_protocol::StageOneOutput;
use memory_write::store::postgres::{PgStore, PgStoreOptions};
use memory_write::store::{
    ActivityWindow, ClaimParams, ClaimedJob, Heartbeat, LeaseOwner, MemoryMode, PhaseTwoFailure,
    SessionFacts, SharedStore, StageOneFailure, StageOneSuccess, StateStore, StoredRollout,
    ThreadRegistration, UpsertCounts, WriteStore,
};

/// The environment variable naming a PostgreSQL server for these tests.
pub(crate) const PG_URL_VAR: &str = "AGENT_MEMORY_TEST_PG_URL";

pub(crate) const NOW: i64 = 1_800_000_000;
pub(crate) const HOUR: i64 = 3600;

/// One backend's database for one test; [`Backend::open`] gives handles on it.
pub(crate) enum Backend {
    Sqlite {
        _dir: tempfile::TempDir,
        path: PathBuf,
    },
    Postgres {
        url: String,
        schema: String,
    },
}

impl Backend {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite { .. } => "sqlite",
            Backend::Postgres { .. } => "postgres",
        }
    }

    /// A new handle (a new connection or pool: another process, as far as the store can tell,
    /// except for the lease owner) recording leases as this process.
    pub(crate) async fn open(&self) -> SharedStore {
        self.open_as(LeaseOwner::current()).await
    }

    /// A new handle (see [`Backend::open`]) with `rows` registered on it at [`NOW`].
    pub(crate) async fn registered(&self, rows: &[ThreadRegistration]) -> SharedStore {
        let store = self.open().await;
        register(&*store, rows, NOW).await;
        store
    }

    /// A new handle recording leases under `owner`.
    pub(crate) async fn open_as(&self, owner: LeaseOwner) -> SharedStore {
        match self {
            Backend::Sqlite { path, .. } => {
                let store = StateStore::open(path).unwrap();
                store.set_lease_owner(owner);
                std::sync::Arc::new(store)
            }
            Backend::Postgres { url, schema } => {
                let options = PgStoreOptions {
                    schema: Some(schema.clone()),
                    pool_size: 12,
                    ..PgStoreOptions::default()
                };
                let mut store = PgStore::connect_with(url, &options).await.unwrap();
                store.set_lease_owner(owner);
                std::sync::Arc::new(store)
            }
        }
    }
}

/// The backends a test runs against: SQLite, and PostgreSQL when a server is configured.
pub(crate) fn backends(test: &str) -> Vec<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    let mut backends = vec![Backend::Sqlite { _dir: dir, path }];
    match pg_url() {
        Some(url) => backends.push(Backend::Postgres {
            url,
            schema: unique_schema(test),
        }),
        None => say_skipped(),
    }
    backends
}

/// The configured server, if any.
pub(crate) fn pg_url() -> Option<String> {
    std::env::var(PG_URL_VAR).ok().filter(|url| !url.is_empty())
}

/// A schema name no other test or run uses.
pub(crate) fn unique_schema(test: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let short: String = test.chars().take(24).collect();
    format!(
        "t_{short}_{}_{nanos}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

pub(crate) fn say_skipped() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: PostgreSQL store conformance tests ({PG_URL_VAR} is not set; \
             `source .ci/postgres.sh start` starts a server); SQLite ran"
        );
    });
}

pub(crate) fn thread(id: &str, activity: i64, fingerprint: &str) -> ThreadRegistration {
    ThreadRegistration {
        session: SessionFacts {
            id: id.to_owned(),
            rollout_path: format!("/sessions/{id}.jsonl"),
            cwd: Some("/work".to_owned()),
            git_branch: Some("main".to_owned()),
            source: Some("cli".to_owned()),
            exclusion: None,
            created_at: activity - 60,
        },
        last_activity_at: activity,
        memory_mode: MemoryMode::Enabled,
        fingerprint: fingerprint.to_owned(),
        file_size: 10,
        file_mtime_ns: 7,
    }
}

/// A thread last active `hours` before [`NOW`], with fingerprint `f`.
pub(crate) fn idle(id: &str, hours: i64) -> ThreadRegistration {
    thread(id, NOW - hours * HOUR, "f")
}

/// Registers rows as a scan does: on a store that shares rollouts, each row's items (one user
/// message naming the thread, see [`items_of`]) are uploaded first.
pub(crate) async fn register(
    store: &dyn WriteStore,
    rows: &[ThreadRegistration],
    now: i64,
) -> UpsertCounts {
    if store.is_shared() {
        let uploads: Vec<StoredRollout> = rows
            .iter()
            .map(|row| StoredRollout {
                thread_id: row.session.id.clone(),
                source_fingerprint: row.fingerprint.clone(),
                items: items_of(&row.session.id, &row.fingerprint),
            })
            .collect();
        store.store_rollouts(&uploads, now).await.unwrap();
    }
    store.upsert_threads(rows, now).await.unwrap()
}

/// Stored items of one user message, `thread ID at FINGERPRINT`.
pub(crate) fn items_of(id: &str, fingerprint: &str) -> String {
    serde_json::json!([{
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": format!("thread {id} at {fingerprint}")}],
    }])
    .to_string()
}

/// How many jobs `store` could claim with `params` at `now`.
pub(crate) async fn candidates(store: &dyn WriteStore, params: &ClaimParams, now: i64) -> usize {
    store.count_stage_one_candidates(params, now).await.unwrap()
}

/// The next job `store` claims with `params` at `now`, if any.
pub(crate) async fn claim(
    store: &dyn WriteStore,
    params: &ClaimParams,
    now: i64,
) -> Option<ClaimedJob> {
    store.claim_next_stage_one_job(params, now).await.unwrap()
}

pub(crate) fn params() -> ClaimParams {
    ClaimParams {
        min_idle_hours: 6,
        max_age_days: Some(10),
        ..ClaimParams::default()
    }
}

pub(crate) fn output(text: &str) -> StageOneOutput {
    StageOneOutput {
        raw_memory: format!("memory {text}"),
        rollout_summary: format!("# summary {text}"),
        rollout_slug: Some(text.to_owned()),
    }
}

/// A successful extraction at `now` whose output is [`output`] of `text`.
pub(crate) fn succeeded(text: &str, now: i64) -> StageOneSuccess {
    StageOneSuccess {
        now,
        output: output(text),
    }
}

/// A heartbeat at `now` for `lease_seconds`.
pub(crate) fn beat(now: i64, lease_seconds: i64) -> Heartbeat {
    Heartbeat { now, lease_seconds }
}

/// The memories active within `max_unused_days` of the memory clock at `now`.
pub(crate) fn window(now: i64, max_unused_days: i64) -> ActivityWindow {
    ActivityWindow {
        now,
        max_unused_days,
    }
}

/// A failed extraction at `now`, retried after `retry_delay`.
pub(crate) fn job_failure(error: &str, retry_delay: Duration, now: i64) -> StageOneFailure {
    StageOneFailure {
        now,
        error: error.to_owned(),
        retry_delay,
    }
}

/// A failed phase-2 pass at `now` with a first back-off of `backoff_seconds`.
pub(crate) fn pass_failure(now: i64, error: &str, backoff_seconds: i64) -> PhaseTwoFailure {
    PhaseTwoFailure {
        now,
        error: error.to_owned(),
        backoff_seconds,
    }
}

/// Another machine: leases it records are never judged by this host's process table.
pub(crate) fn other_machine(name: &str) -> LeaseOwner {
    LeaseOwner {
        host: format!("machine-{name}"),
        pid: 4242,
        started: None,
    }
}

/// A process of this host that has exited.
pub(crate) fn exited_process() -> LeaseOwner {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    let owner = LeaseOwner::of_process(pid);
    child.wait().unwrap();
    owner
}

/// Records `success` for `job`; whether the store took it (not once the job's lease is lost).
pub(crate) async fn finish(
    store: &dyn WriteStore,
    job: &ClaimedJob,
    success: &StageOneSuccess,
) -> bool {
    store.mark_stage_one_succeeded(job, success).await.unwrap()
}

/// Records a success of `job` at `now` whose output is [`output`] of `text`; whether the store
/// took it.
pub(crate) async fn succeed(
    store: &dyn WriteStore,
    job: &ClaimedJob,
    text: &str,
    now: i64,
) -> bool {
    finish(store, job, &succeeded(text, now)).await
}

/// Records `failure` for `job`; whether the store took it.
pub(crate) async fn fail(
    store: &dyn WriteStore,
    job: &ClaimedJob,
    failure: &StageOneFailure,
) -> bool {
    store.mark_stage_one_failed(job, failure).await.unwrap()
}

/// Registers `rows` at `now` (see [`register`]) and claims the next job with `params` then;
/// panics when there is none.
pub(crate) async fn register_and_claim(
    store: &dyn WriteStore,
    rows: &[ThreadRegistration],
    params: &ClaimParams,
    now: i64,
) -> ClaimedJob {
    register(store, rows, now).await;
    claim(store, params, now).await.expect("a claimable job")
}

/// Claims and records a success until no job is left; the ids of the threads this store took.
pub(crate) async fn claim_until_empty(
    store: &dyn WriteStore,
    params: &ClaimParams,
    success: &StageOneSuccess,
) -> Vec<String> {
    claim_and_succeed_all(store, params, success.now, |_| success.clone()).await
}

/// Claims and records a success until no job is left, each output named after its thread (so
/// every thread has a stored output of its own); the ids of the threads this store took.
pub(crate) async fn extract_all(
    store: &dyn WriteStore,
    params: &ClaimParams,
    now: i64,
) -> Vec<String> {
    claim_and_succeed_all(store, params, now, |id| succeeded(id, now)).await
}

/// Claims at `now` until no job is left, recording for each the success `success` gives for its
/// thread id; the ids taken.
async fn claim_and_succeed_all(
    store: &dyn WriteStore,
    params: &ClaimParams,
    now: i64,
    success: impl Fn(&str) -> StageOneSuccess,
) -> Vec<String> {
    let mut mine = Vec::new();
    while let Some(job) = claim(store, params, now).await {
        assert!(finish(store, &job, &success(&job.thread_id)).await);
        mine.push(job.thread_id);
    }
    mine
}

/// The thread ids of the stored stage-one outputs, in the store's order.
pub(crate) async fn output_ids(store: &dyn WriteStore) -> Vec<String> {
    let outputs = store.stage_one_outputs().await.unwrap();
    outputs.into_iter().map(|record| record.thread_id).collect()
}

/// The thread ids phase 2 would consolidate: at most `limit` within `window`.
pub(crate) async fn selected_ids(
    store: &dyn WriteStore,
    window: ActivityWindow,
    limit: usize,
) -> Vec<String> {
    let selected = store.select_phase_two_inputs(window, limit).await.unwrap();
    selected
        .into_iter()
        .map(|record| record.thread_id)
        .collect()
}
