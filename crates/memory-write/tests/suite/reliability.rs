//! Reliability across processes: workers killed with SIGKILL at chosen points, and two
//! processes sharing one database.
//!
//! The tests re-run this test binary as worker processes, filtered to the ignored
//! `worker_process` test, configured through environment variables. Each worker scans the
//! rollouts, runs phase 1 with a fake model, and appends one line per recorded outcome to its
//! log (synced before the next job), so the parent can check that no job was recorded twice.
//!
//! Kills do not race the clock: a worker told to stop at a named point (its n-th model request,
//! or right after recording its n-th outcome) writes a marker file there and waits; the parent
//! kills it once the marker exists. The schedule comes from a fixed seed, so every run of the
//! test interrupts the same work at the same places, however fast the machine is.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memory_protocol::stage_one::JobStatus;
use memory_write::phase_one::{JobReport, PhaseOneHooks, PhaseOneObserver};
use memory_write::store::{ClaimParams, SharedStore, WriteStore, now_unix};
use memory_write::{PhaseOneOptions, ScanOptions, StateStore, run_phase_one, scan_rollouts};

use super::fake_model::{Answer, FakeModel, sorted_thread_ids, write_rollouts};

const ENV_HOME: &str = "MEMORY_WRITE_WORKER_HOME";
const ENV_ROLLOUTS: &str = "MEMORY_WRITE_WORKER_ROLLOUTS";
const ENV_LOG: &str = "MEMORY_WRITE_WORKER_LOG";
const ENV_LEASE: &str = "MEMORY_WRITE_WORKER_LEASE_SECS";
const ENV_DELAY: &str = "MEMORY_WRITE_WORKER_DELAY_MS";
const ENV_FAIL_EVERY: &str = "MEMORY_WRITE_WORKER_FAIL_EVERY";
/// `request:N` or `recorded:N`: where the worker stops and waits to be killed.
const ENV_STOP_AT: &str = "MEMORY_WRITE_WORKER_STOP_AT";
/// The marker file a stopped worker writes.
const ENV_MARKER: &str = "MEMORY_WRITE_WORKER_MARKER";

/// Where a worker stops and waits to be killed.
#[derive(Debug, Clone, Copy)]
enum StopAt {
    /// Inside its n-th model request: claimed jobs are in flight, not recorded.
    Request(usize),
    /// Right after its n-th outcome is recorded and logged, before the next claim.
    Recorded(usize),
}

impl StopAt {
    fn env(self) -> String {
        match self {
            StopAt::Request(n) => format!("request:{n}"),
            StopAt::Recorded(n) => format!("recorded:{n}"),
        }
    }
}

/// Appends `thread_id outcome` per finished job, synced to disk; with a stop point, writes the
/// marker after the n-th line and blocks.
pub(super) struct OutcomeLog {
    pub(super) file: Mutex<std::fs::File>,
    pub(super) stop_after: Option<(usize, PathBuf)>,
    pub(super) logged: std::sync::atomic::AtomicUsize,
}

impl PhaseOneObserver for OutcomeLog {
    fn job_finished(&self, job: &JobReport) {
        let mut file = self.file.lock().unwrap();
        writeln!(file, "{} {:?}", job.thread_id, job.outcome).unwrap();
        file.sync_data().unwrap();
        let logged = self
            .logged
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        if let Some((at, marker)) = &self.stop_after
            && logged == *at
        {
            std::fs::write(marker, "waiting to be killed").unwrap();
            loop {
                std::thread::park();
            }
        }
    }
}

/// Threads the fake model fails for: every `every`-th one (0 = none).
pub(super) fn failing_ids(ids: &[String], every: usize) -> BTreeSet<String> {
    if every == 0 {
        return BTreeSet::new();
    }
    ids.iter().step_by(every).cloned().collect()
}

async fn thread_ids(rollouts: &Path) -> Vec<String> {
    let store = StateStore::open_home(&rollouts.join("..").join("probe")).unwrap();
    scan_rollouts(&store, rollouts, &ScanOptions::default(), now_unix())
        .await
        .unwrap();
    sorted_thread_ids(&store).await
}

/// Not a test on its own: the body of the worker processes the tests below start. Without
/// their environment it does nothing.
#[test]
#[ignore = "worker process of the reliability tests"]
fn worker_process() {
    let Some(home) = std::env::var_os(ENV_HOME).map(PathBuf::from) else {
        return;
    };
    let rollouts = PathBuf::from(std::env::var_os(ENV_ROLLOUTS).unwrap());
    let log = PathBuf::from(std::env::var_os(ENV_LOG).unwrap());
    let number = |name: &str| -> u64 { std::env::var(name).unwrap().parse().unwrap() };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store = StateStore::open_home(&home).unwrap();
    let (scan, ids) = runtime.block_on(async {
        let scan = scan_rollouts(&store, &rollouts, &ScanOptions::default(), now_unix()).await;
        (scan.unwrap(), sorted_thread_ids(&store).await)
    });
    let mut model = FakeModel::new(Answer::Echo);
    model.delay = Duration::from_millis(number(ENV_DELAY));
    model.failing = failing_ids(&ids, usize::try_from(number(ENV_FAIL_EVERY)).unwrap())
        .into_iter()
        .collect();
    let marker = std::env::var_os(ENV_MARKER).map(PathBuf::from);
    let stop_at = std::env::var(ENV_STOP_AT).ok();
    let stop = stop_at
        .as_deref()
        .and_then(|text| text.split_once(':'))
        .map(|(point, n)| (point.to_owned(), n.parse::<usize>().unwrap()));
    let mut stop_after_recorded = None;
    match (stop, marker) {
        (Some((point, n)), Some(marker)) if point == "request" => {
            model.hang_at_request = Some((n, marker));
        }
        (Some((point, n)), Some(marker)) if point == "recorded" => {
            stop_after_recorded = Some((n, marker));
        }
        (None, _) => {}
        other => panic!("bad stop point {other:?}"),
    }
    let options = PhaseOneOptions {
        claim: ClaimParams {
            min_idle_hours: 1,
            max_age_days: None,
            rollout_prefix: Some(scan.rollout_prefix()),
            lease_seconds: i64::try_from(number(ENV_LEASE)).unwrap(),
            ..ClaimParams::default()
        },
        max_claims: None,
        ..PhaseOneOptions::default()
    };
    let file = std::fs::File::options()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    let hooks = PhaseOneHooks {
        rate_limit: None,
        observer: Some(Arc::new(OutcomeLog {
            file: Mutex::new(file),
            stop_after: stop_after_recorded,
            logged: std::sync::atomic::AtomicUsize::new(0),
        })),
    };
    let store: SharedStore = Arc::new(store);
    let report = runtime
        .block_on(run_phase_one(&store, Arc::new(model), &options, hooks))
        .expect("phase 1 must not fail on the store");
    for job in &report.jobs {
        if let Some(message) = &job.message {
            assert!(
                !message.contains("locked") && !message.contains("busy"),
                "{message}"
            );
        }
    }
}

fn spawn_worker(
    home: &Path,
    rollouts: &Path,
    log: &Path,
    lease: u64,
    delay_ms: u64,
    fail_every: usize,
) -> Child {
    worker_command(home, rollouts, log, lease, delay_ms, fail_every)
        .spawn()
        .unwrap()
}

/// Starts a worker that stops at `stop`, waits until it is there, and kills it. Returns false
/// when the worker finished all its work before reaching the point.
fn kill_at(home: &Path, rollouts: &Path, log: &Path, stop: StopAt, marker: &Path) -> bool {
    let _ = std::fs::remove_file(marker);
    let mut child = worker_command(home, rollouts, log, 1, 0, 5)
        .env(ENV_STOP_AT, stop.env())
        .env(ENV_MARKER, marker)
        .spawn()
        .unwrap();
    // A hang guard only: the marker normally appears within milliseconds.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if marker.exists() {
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            return true;
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(
                status.success(),
                "worker stopped at {stop:?} failed: {status}"
            );
            return false;
        }
        assert!(Instant::now() < deadline, "worker never reached {stop:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn worker_command(
    home: &Path,
    rollouts: &Path,
    log: &Path,
    lease: u64,
    delay_ms: u64,
    fail_every: usize,
) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "suite::reliability::worker_process",
            "--exact",
            "--ignored",
            "--test-threads",
            "1",
            "-q",
        ])
        .env(ENV_HOME, home)
        .env(ENV_ROLLOUTS, rollouts)
        .env(ENV_LOG, log)
        .env(ENV_LEASE, lease.to_string())
        .env(ENV_DELAY, delay_ms.to_string())
        .env(ENV_FAIL_EVERY, fail_every.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn wait_ok(child: Child) {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "worker failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `(thread id, outcome)` -> how many times a log recorded it.
pub(super) fn read_logs(logs: &[PathBuf]) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for log in logs {
        let Ok(text) = std::fs::read_to_string(log) else {
            continue;
        };
        for line in text.lines() {
            // A kill can cut the last line short; only whole lines count.
            if let Some((id, outcome)) = line.split_once(' ') {
                *counts
                    .entry((id.to_owned(), outcome.to_owned()))
                    .or_default() += 1;
            }
        }
    }
    counts
}

/// A small deterministic generator for the kill schedule.
pub(super) struct XorShift(pub(super) u64);

impl XorShift {
    pub(super) fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[tokio::test]
async fn workers_killed_at_chosen_points_lose_nothing_and_do_nothing_twice() {
    const ROLLOUTS: usize = 160;
    /// Fixed, so every run kills at the same places.
    const SEED: u64 = 0x5EED_CAFE_F00D_0001;
    let root = tempfile::tempdir().unwrap();
    let (home, rollouts) = (root.path().join("home"), root.path().join("rollouts"));
    write_rollouts(&rollouts, ROLLOUTS);
    let ids = thread_ids(&rollouts).await;
    assert_eq!(ids.len(), ROLLOUTS);
    let failing = failing_ids(&ids, 5);
    let log = root.path().join("outcomes.log");
    let marker = root.path().join("stopped");
    let mut random = XorShift(SEED);
    let mut kills = 0;
    // The kills interrupt real work: right after some kill, jobs are left running under a
    // lease nobody will finish. Checked after each kill, since a later round may reclaim them
    // once their one-second leases expire.
    let mut orphaned_after_a_kill = false;
    for round in 0..24 {
        // Alternate: killed with jobs in flight, and killed between recording and claiming.
        let n = 1 + usize::try_from(random.below(6)).unwrap();
        let stop = if round % 2 == 0 {
            StopAt::Request(n)
        } else {
            StopAt::Recorded(n)
        };
        if kill_at(&home, &rollouts, &log, stop, &marker) {
            kills += 1;
        }
        let store = StateStore::open_home(&home).unwrap();
        let jobs = store.stage_one_jobs().await.unwrap();
        orphaned_after_a_kill |= jobs.iter().any(|j| j.status == JobStatus::Running);
    }
    assert_eq!(kills, 24, "every worker reached its stop point");
    assert!(orphaned_after_a_kill, "no kill left a job running");
    let store = StateStore::open_home(&home).unwrap();
    let recorded = store
        .stage_one_jobs()
        .await
        .unwrap()
        .iter()
        .filter(|j| j.status != JobStatus::Running)
        .count();
    assert!(
        recorded > 0,
        "no outcome was recorded before the last worker"
    );
    drop(store);
    // Leases of killed workers (one second) expire; a last worker finishes everything, and
    // one more finds nothing left.
    std::thread::sleep(Duration::from_millis(1_100));
    wait_ok(spawn_worker(&home, &rollouts, &log, 1, 0, 5));
    wait_ok(spawn_worker(&home, &rollouts, &log, 1, 0, 5));

    let store = StateStore::open_home(&home).unwrap();
    let outputs: BTreeSet<String> = store
        .stage_one_outputs()
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.thread_id)
        .collect();
    let jobs = store.stage_one_jobs().await.unwrap();
    assert_eq!(
        jobs.len(),
        ROLLOUTS,
        "every rollout has exactly one job row"
    );
    for job in &jobs {
        if failing.contains(&job.thread_id) {
            assert_eq!(job.status, JobStatus::Error, "{job:?}");
            assert!(!outputs.contains(&job.thread_id));
            assert_eq!(job.attempts, 1, "{job:?}");
        } else {
            assert_eq!(job.status, JobStatus::Done, "{job:?}");
            assert!(outputs.contains(&job.thread_id), "{job:?}");
        }
    }
    assert_eq!(outputs.len(), ROLLOUTS - failing.len());
    for ((id, outcome), count) in read_logs(&[log]) {
        assert_eq!(count, 1, "{id} recorded {outcome} {count} times");
    }
}

#[tokio::test]
async fn two_processes_on_one_database_never_run_a_job_twice() {
    let root = tempfile::tempdir().unwrap();
    let (home, rollouts) = (root.path().join("home"), root.path().join("rollouts"));
    write_rollouts(&rollouts, 120);
    let logs = [root.path().join("a.log"), root.path().join("b.log")];
    // Collected so both start before either is waited for.
    #[allow(clippy::needless_collect)]
    let workers: Vec<Child> = logs
        .iter()
        .map(|log| spawn_worker(&home, &rollouts, log, 3600, 25, 0))
        .collect();
    workers.into_iter().for_each(wait_ok);

    let counts = read_logs(&logs);
    assert!(counts.values().all(|count| *count == 1), "{counts:?}");
    assert!(
        counts.keys().all(|(_, outcome)| outcome == "Succeeded"),
        "{counts:?}"
    );
    assert_eq!(counts.len(), 120);
    for log in &logs {
        let lines = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .count();
        assert!(lines > 0, "{} did no work", log.display());
    }
    let store = StateStore::open_home(&home).unwrap();
    assert_eq!(store.stage_one_outputs().await.unwrap().len(), 120);
}
