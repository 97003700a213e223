//! Reliability across processes: workers killed with SIGKILL at random points, and two
//! processes sharing one database.
//!
//! The tests re-run this test binary as worker processes, filtered to the ignored
//! `worker_process` test, configured through environment variables. Each worker scans the
//! rollouts, runs phase 1 with a fake model that sleeps, and appends one line per recorded
//! outcome to its log (synced before the next job), so the parent can check that no job was
//! recorded twice.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memory_protocol::stage_one::JobStatus;
use memory_write::phase_one::{JobReport, PhaseOneHooks, PhaseOneObserver};
use memory_write::store::{ClaimParams, now_unix};
use memory_write::{
    AsyncStateStore, PhaseOneOptions, ScanOptions, StateStore, run_phase_one, scan_rollouts,
};

use super::fake_model::{Answer, FakeModel, write_rollouts};

const ENV_HOME: &str = "MEMORY_WRITE_WORKER_HOME";
const ENV_ROLLOUTS: &str = "MEMORY_WRITE_WORKER_ROLLOUTS";
const ENV_LOG: &str = "MEMORY_WRITE_WORKER_LOG";
const ENV_LEASE: &str = "MEMORY_WRITE_WORKER_LEASE_SECS";
const ENV_DELAY: &str = "MEMORY_WRITE_WORKER_DELAY_MS";
const ENV_FAIL_EVERY: &str = "MEMORY_WRITE_WORKER_FAIL_EVERY";

/// Appends `thread_id outcome` per finished job, synced to disk.
struct OutcomeLog(Mutex<std::fs::File>);

impl PhaseOneObserver for OutcomeLog {
    fn job_finished(&self, job: &JobReport) {
        let mut file = self.0.lock().unwrap();
        writeln!(file, "{} {:?}", job.thread_id, job.outcome).unwrap();
        file.sync_data().unwrap();
    }
}

/// Threads the fake model fails for: every `every`-th one (0 = none).
fn failing_ids(ids: &[String], every: usize) -> BTreeSet<String> {
    if every == 0 {
        return BTreeSet::new();
    }
    ids.iter().step_by(every).cloned().collect()
}

fn thread_ids(rollouts: &Path) -> Vec<String> {
    let mut store = StateStore::open_home(&rollouts.join("..").join("probe")).unwrap();
    scan_rollouts(&mut store, rollouts, &ScanOptions::default(), now_unix()).unwrap();
    let mut ids: Vec<String> = store.threads().unwrap().into_iter().map(|t| t.id).collect();
    ids.sort();
    ids
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
    let mut store = StateStore::open_home(&home).unwrap();
    let scan = scan_rollouts(&mut store, &rollouts, &ScanOptions::default(), now_unix()).unwrap();
    let mut ids: Vec<String> = store.threads().unwrap().into_iter().map(|t| t.id).collect();
    ids.sort();
    let mut model = FakeModel::new(Answer::Echo);
    model.delay = Duration::from_millis(number(ENV_DELAY));
    model.failing = failing_ids(&ids, usize::try_from(number(ENV_FAIL_EVERY)).unwrap())
        .into_iter()
        .collect();
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
        observer: Some(Arc::new(OutcomeLog(Mutex::new(file)))),
    };
    let store = AsyncStateStore::new(store);
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
    Command::new(std::env::current_exe().unwrap())
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
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
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
fn read_logs(logs: &[PathBuf]) -> BTreeMap<(String, String), usize> {
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

/// A small deterministic generator for the kill delays.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[test]
fn workers_killed_at_random_points_lose_nothing_and_do_nothing_twice() {
    // Enough work (160 jobs of 100 ms, 8 at a time) that most of the 24 kills, each within
    // 200 ms of a start, land while jobs are running.
    const ROLLOUTS: usize = 160;
    const DELAY_MS: u64 = 100;
    let root = tempfile::tempdir().unwrap();
    let (home, rollouts) = (root.path().join("home"), root.path().join("rollouts"));
    write_rollouts(&rollouts, ROLLOUTS);
    let ids = thread_ids(&rollouts);
    assert_eq!(ids.len(), ROLLOUTS);
    let failing = failing_ids(&ids, 5);
    let lease = 1;
    let log = root.path().join("outcomes.log");
    let seed = u64::from(std::process::id()) | 1;
    let mut random = XorShift(seed);
    let mut killed_while_running = 0;
    for _ in 0..24 {
        let mut child = spawn_worker(&home, &rollouts, &log, lease, DELAY_MS, 5);
        std::thread::sleep(Duration::from_millis(random.below(200)));
        if child.try_wait().unwrap().is_none() {
            killed_while_running += 1;
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
    }
    assert!(
        killed_while_running >= 20,
        "only {killed_while_running} kills hit a running worker (seed {seed})"
    );
    // The kills interrupted real work: some outcomes were recorded, and some jobs were left
    // running under a lease nobody will finish.
    let store = StateStore::open_home(&home).unwrap();
    let jobs = store.stage_one_jobs().unwrap();
    let orphaned = jobs
        .iter()
        .filter(|j| j.status == JobStatus::Running)
        .count();
    let recorded = jobs
        .iter()
        .filter(|j| j.status != JobStatus::Running)
        .count();
    assert!(
        orphaned > 0 && recorded > 0,
        "orphaned {orphaned}, recorded {recorded}"
    );
    drop(store);
    // Leases of killed workers expire; a last worker finishes everything.
    std::thread::sleep(Duration::from_millis(1100 * lease));
    wait_ok(spawn_worker(&home, &rollouts, &log, lease, DELAY_MS, 5));
    let started = Instant::now();
    wait_ok(spawn_worker(&home, &rollouts, &log, lease, DELAY_MS, 5));
    assert!(started.elapsed() < Duration::from_secs(30));

    let store = StateStore::open_home(&home).unwrap();
    let outputs: BTreeSet<String> = store
        .stage_one_outputs()
        .unwrap()
        .into_iter()
        .map(|o| o.thread_id)
        .collect();
    let jobs = store.stage_one_jobs().unwrap();
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
        assert_eq!(
            count, 1,
            "{id} recorded {outcome} {count} times (seed {seed})"
        );
    }
}

#[test]
fn two_processes_on_one_database_never_run_a_job_twice() {
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
    assert_eq!(store.stage_one_outputs().unwrap().len(), 120);
}
