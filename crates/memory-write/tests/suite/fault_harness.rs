//! The fault-injection harness: whole runs (scan, phase 1, phase 2) killed at chosen points of
//! both phases and rerun at once, and faults injected into single runs: a full disk, a busy
//! database, a FIFO, permission errors. Every test asserts the same four things: no job lost,
//! none done twice, memory files never torn, and the very next run completes everything.
//!
//! Kills do not race the clock: a worker process (this test binary, filtered to the ignored
//! `harness_worker` test) told to stop at a named point writes a marker there and waits; the
//! parent kills it (SIGKILL) once the marker exists. The schedule comes from a fixed seed.
//! Leases are an hour long, so a rerun that had to wait them out would hang the test: every
//! rerun starts at once and must take the killed worker's leases immediately.
//!
//! The figures these tests print (`cargo test -p memory-write fault_harness -- --nocapture`)
//! are recorded in `docs/reliability.md`.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::JobStatus;
use memory_write::fault::{FaultPoint, inject};
use memory_write::memory_root::MemoryRoot;
use memory_write::phase_one::PhaseOneHooks;
use memory_write::phase_two::{PhaseTwoOptions, run_phase_two};
use memory_write::store::{ClaimParams, SharedStore, StateStore, WriteStore, now_unix};
use memory_write::{PhaseOneOptions, ScanOptions, run_phase_one, scan_rollouts};

use super::fake_model::{Answer, FakeModel, MEMORY_END, sorted_thread_ids, write_rollouts};
use super::reliability::{OutcomeLog, XorShift, failing_ids, read_logs};

const ENV_HOME: &str = "FAULT_HARNESS_HOME";
const ENV_ROLLOUTS: &str = "FAULT_HARNESS_ROLLOUTS";
const ENV_LOG: &str = "FAULT_HARNESS_LOG";
const ENV_REPORT: &str = "FAULT_HARNESS_REPORT";
/// `request:N`, `recorded:N`, `inflight:N` or `rename:N`: where the worker waits to be killed.
const ENV_STOP: &str = "FAULT_HARNESS_STOP";
const ENV_MARKER: &str = "FAULT_HARNESS_MARKER";
/// Seconds phase 2 waits for another holder.
const ENV_WAIT: &str = "FAULT_HARNESS_WAIT";
/// `MARKER|GATE`: the first consolidation call writes MARKER and waits for GATE to exist.
const ENV_GATE: &str = "FAULT_HARNESS_GATE";
const ENV_FAIL_EVERY: &str = "FAULT_HARNESS_FAIL_EVERY";
/// An hour: a rerun that waited for an expiry would hang.
const LEASE_SECONDS: i64 = 3600;

/// Where a worker stops and waits to be killed.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// Inside its n-th model request (phase 1, or phase 2's consolidation call).
    Request(usize),
    /// Right after its n-th phase-1 outcome is recorded.
    Recorded(usize),
    /// With n phase-1 requests waiting at once.
    InFlight(usize),
    /// Just before its n-th memory-root rename (a temp file written, the target untouched).
    Rename(usize),
}

impl Stop {
    fn env(self) -> String {
        match self {
            Stop::Request(n) => format!("request:{n}"),
            Stop::Recorded(n) => format!("recorded:{n}"),
            Stop::InFlight(n) => format!("inflight:{n}"),
            Stop::Rename(n) => format!("rename:{n}"),
        }
    }

    fn phase(self) -> usize {
        match self {
            Stop::Request(_) | Stop::Recorded(_) | Stop::InFlight(_) => 1,
            Stop::Rename(_) => 2,
        }
    }
}

fn options(prefix: String) -> PhaseOneOptions {
    PhaseOneOptions {
        claim: ClaimParams {
            min_idle_hours: 1,
            max_age_days: None,
            rollout_prefix: Some(prefix),
            lease_seconds: LEASE_SECONDS,
            ..ClaimParams::default()
        },
        max_claims: None,
        ..PhaseOneOptions::default()
    }
}

/// No cooldown: every run consolidates when there is anything new.
fn phase_two_options(wait: Duration) -> PhaseTwoOptions {
    PhaseTwoOptions {
        cooldown_seconds: 0,
        force: true,
        wait_for_holder: wait,
        ..PhaseTwoOptions::default()
    }
}

/// Not a test on its own: the body of the worker processes the tests below start. Without
/// their environment it does nothing.
#[test]
#[ignore = "worker process of the fault harness"]
fn harness_worker() {
    let Some(home) = std::env::var_os(ENV_HOME).map(PathBuf::from) else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap();
    let rollouts = PathBuf::from(var(ENV_ROLLOUTS));
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
    model.failing = failing_ids(&ids, var(ENV_FAIL_EVERY).parse().unwrap())
        .into_iter()
        .collect();
    let marker = std::env::var_os(ENV_MARKER).map(PathBuf::from);
    let stop = std::env::var(ENV_STOP).ok().map(|text| {
        let (point, n) = text.split_once(':').unwrap();
        (point.to_owned(), n.parse::<usize>().unwrap())
    });
    if let Ok(gate) = std::env::var(ENV_GATE) {
        let (marker, gate) = gate.split_once('|').unwrap();
        model.consolidation_gate = Some((marker.into(), gate.into()));
    }
    let mut root = MemoryRoot::under_home(&home);
    let mut stop_after_recorded = None;
    match (stop, marker) {
        (Some((point, n)), Some(marker)) => match point.as_str() {
            "request" => model.hang_at_request = Some((n, marker)),
            "recorded" => stop_after_recorded = Some((n, marker)),
            "inflight" => model.hold_all = Some((n, marker)),
            "rename" => {
                let renames = AtomicUsize::new(0);
                root = root.with_crash_before_rename(Arc::new(move |_| {
                    if renames.fetch_add(1, Ordering::SeqCst) + 1 == n {
                        std::fs::write(&marker, "waiting to be killed").unwrap();
                        loop {
                            std::thread::park();
                        }
                    }
                    Ok(())
                }));
            }
            other => panic!("bad stop point {other}"),
        },
        (None, _) => {}
        other => panic!("bad stop point {other:?}"),
    }
    let log = std::fs::File::options()
        .create(true)
        .append(true)
        .open(var(ENV_LOG))
        .unwrap();
    let hooks = PhaseOneHooks {
        rate_limit: None,
        observer: Some(Arc::new(OutcomeLog {
            file: Mutex::new(log),
            stop_after: stop_after_recorded,
            logged: AtomicUsize::new(0),
        })),
    };
    let store: SharedStore = Arc::new(store);
    let model = Arc::new(model);
    let wait = Duration::from_secs(var(ENV_WAIT).parse().unwrap());
    let (phase_one, phase_two) = runtime.block_on(async {
        let phase_one = run_phase_one(
            &store,
            model.clone(),
            &options(scan.rollout_prefix()),
            hooks,
        )
        .await
        .unwrap();
        let phase_two = run_phase_two(
            store.as_ref(),
            &root,
            model.as_ref(),
            &phase_two_options(wait),
        )
        .await
        .unwrap();
        (phase_one, phase_two)
    });
    let report = serde_json::json!({
        "claimed": phase_one.claimed,
        "ran": phase_two.ran,
        "passes": phase_two.passes,
        "pending": phase_two.pending,
        "skipped": phase_two.skipped,
    });
    std::fs::write(var(ENV_REPORT), report.to_string()).unwrap();
}

/// One home and its rollouts, and the worker processes that run on them.
struct Harness {
    _dir: tempfile::TempDir,
    home: PathBuf,
    rollouts: PathBuf,
    log: PathBuf,
    marker: PathBuf,
    fail_every: usize,
}

impl Harness {
    fn new(rollouts: usize, fail_every: usize) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let harness = Harness {
            home: dir.path().join("home"),
            rollouts: dir.path().join("rollouts"),
            log: dir.path().join("outcomes.log"),
            marker: dir.path().join("stopped"),
            fail_every,
            _dir: dir,
        };
        write_rollouts(&harness.rollouts, rollouts);
        harness
    }

    fn command(&self, rollouts: &Path, log: &Path, report: &Path) -> Command {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "suite::fault_harness::harness_worker",
                "--exact",
                "--ignored",
                "--test-threads",
                "1",
                "-q",
            ])
            .env(ENV_HOME, &self.home)
            .env(ENV_ROLLOUTS, rollouts)
            .env(ENV_LOG, log)
            .env(ENV_REPORT, report)
            .env(ENV_WAIT, "0")
            .env(ENV_FAIL_EVERY, self.fail_every.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn report_path(&self) -> PathBuf {
        self.home.with_file_name("report.json")
    }

    /// Starts a worker that stops at `stop`, waits until it is there, and kills it. False when
    /// the worker finished before reaching the point.
    fn kill_at(&self, stop: Stop) -> bool {
        let _ = std::fs::remove_file(&self.marker);
        let child = self
            .command(&self.rollouts, &self.log, &self.report_path())
            .env(ENV_STOP, stop.env())
            .env(ENV_MARKER, &self.marker)
            .spawn()
            .unwrap();
        kill_when_marked(child, &self.marker, stop)
    }

    /// Runs a worker to its end and returns its report.
    fn run_to_end(&self) -> serde_json::Value {
        let report = self.report_path();
        wait_ok(
            self.command(&self.rollouts, &self.log, &report)
                .spawn()
                .unwrap(),
        );
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap()
    }

    fn store(&self) -> StateStore {
        StateStore::open_home(&self.home).unwrap()
    }

    fn memory(&self, name: &str) -> Option<String> {
        MemoryRoot::under_home(&self.home).read(name).unwrap()
    }

    /// Memory files are either absent or whole: never a torn one, never a temp file left
    /// where a reader would take it for the real one.
    fn assert_memory_files_whole(&self) {
        if let Some(memory) = self.memory(names::MEMORY_FILE) {
            assert!(
                memory.starts_with("# Memory") && memory.trim_end().ends_with(MEMORY_END),
                "torn MEMORY.md: {memory:?}"
            );
        }
        if let Some(summary) = self.memory(names::MEMORY_SUMMARY_FILE) {
            assert!(
                summary.starts_with("v1\n") && summary.ends_with("memories\n"),
                "{summary:?}"
            );
        }
        if let Some(raw) = self.memory(names::RAW_MEMORIES_FILE) {
            assert!(
                raw.starts_with(&format!(
                    "{}\n",
                    memory_write::memory_root::RAW_MEMORIES_TITLE
                )),
                "{raw:?}"
            );
        }
    }

    /// Every rollout's job is finished exactly as the fake model scripted it (failing threads
    /// failed once, the others stored one output), no outcome was logged twice, and `MEMORY.md`
    /// holds every stored memory, whole. Returns how many outputs are stored.
    async fn assert_all_work_done(&self, logs: &[PathBuf]) -> usize {
        let store = self.store();
        let ids = sorted_thread_ids(&store).await;
        let failing = failing_ids(&ids, self.fail_every);
        let outputs = store.stage_one_outputs().await.unwrap();
        let stored: BTreeSet<&str> = outputs.iter().map(|o| o.thread_id.as_str()).collect();
        let jobs = store.stage_one_jobs().await.unwrap();
        assert_eq!(
            jobs.len(),
            ids.len(),
            "every rollout has exactly one job row"
        );
        for job in &jobs {
            if failing.contains(&job.thread_id) {
                assert_eq!((job.status, job.attempts), (JobStatus::Error, 1), "{job:?}");
            } else {
                assert_eq!(job.status, JobStatus::Done, "lost: {job:?}");
                assert!(stored.contains(job.thread_id.as_str()), "lost: {job:?}");
            }
        }
        for ((id, outcome), count) in read_logs(logs) {
            assert_eq!(count, 1, "{id} recorded {outcome} {count} times");
        }
        self.assert_memory_files_whole();
        let memory = self.memory(names::MEMORY_FILE).expect("MEMORY.md exists");
        for output in &outputs {
            assert!(
                memory.contains(output.raw_memory.trim()),
                "MEMORY.md lacks {}",
                output.thread_id
            );
        }
        let state = store.phase_two_state().await.unwrap();
        assert!(
            state.last_success_watermark >= Some(state.input_watermark),
            "consolidation pending: {state:?}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(MemoryRoot::under_home(&self.home).dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
        outputs.len()
    }
}

fn kill_when_marked(mut child: Child, marker: &Path, stop: Stop) -> bool {
    // A hang guard only: the marker normally appears within milliseconds.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if marker.exists() {
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            return true;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let output = child.wait_with_output().unwrap();
            assert!(
                status.success(),
                "worker stopped at {stop:?} failed: {status}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            return false;
        }
        assert!(Instant::now() < deadline, "worker never reached {stop:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
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

#[tokio::test]
async fn kill_nine_with_eight_jobs_in_flight_then_an_immediate_rerun_finishes_everything() {
    let harness = Harness::new(40, 0);
    let started = Instant::now();
    assert!(harness.kill_at(Stop::InFlight(8)));
    let store = harness.store();
    let running: Vec<_> = store
        .stage_one_jobs()
        .await
        .unwrap()
        .into_iter()
        .filter(|job| job.status == JobStatus::Running)
        .collect();
    assert_eq!(running.len(), 8, "eight jobs in flight at the kill");
    assert!(
        running
            .iter()
            .all(|job| job.lease_expires_at > Some(now_unix() + LEASE_SECONDS - 600)),
        "their leases have most of an hour left"
    );
    drop(store);
    // No waiting: the rerun takes the dead worker's leases at once and does all the work.
    let report = harness.run_to_end();
    assert_eq!(report["claimed"], 40, "{report}");
    assert_eq!(report["ran"], true, "{report}");
    assert_eq!(
        harness
            .assert_all_work_done(std::slice::from_ref(&harness.log))
            .await,
        40
    );
    println!(
        "fault harness: kill -9 with 8 in flight, rerun claimed 40/40, work lost 0, {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn runs_killed_at_seeded_points_of_both_phases_lose_nothing_and_the_next_run_finishes() {
    const ROUNDS: usize = 24;
    /// New rollouts before each round, so every round has work in both phases.
    const PER_ROUND: usize = 8;
    /// Fixed, so every run kills at the same places.
    const SEED: u64 = 0x5EED_FA17_0016_0001;
    let harness = Harness::new(0, 7);
    let started = Instant::now();
    let mut random = XorShift(SEED);
    let (mut kills, mut phase_two_kills, mut finished_early) = (0, 0, 0);
    for round in 0..ROUNDS {
        write_rollouts(&harness.rollouts, PER_ROUND * (round + 1));
        let n = 1 + usize::try_from(random.below(6)).unwrap();
        let stop = match round % 4 {
            0 => Stop::Request(n),
            1 => Stop::Recorded(n),
            2 => Stop::InFlight(1 + n % 8),
            _ => Stop::Rename(n),
        };
        if harness.kill_at(stop) {
            kills += 1;
            phase_two_kills += usize::from(stop.phase() == 2);
        } else {
            finished_early += 1;
        }
        // After every kill, whatever it interrupted.
        harness.assert_memory_files_whole();
    }
    assert_eq!(kills, ROUNDS, "every worker reached its stop point");
    assert!(phase_two_kills > 0, "no kill in phase 2");
    // The very next run completes everything, without waiting out any lease.
    let report = harness.run_to_end();
    assert_eq!(report["pending"], false, "{report}");
    let stored = harness
        .assert_all_work_done(std::slice::from_ref(&harness.log))
        .await;
    let total = PER_ROUND * ROUNDS;
    let ids: Vec<String> = (0..total).map(|i| format!("{i:06}")).collect();
    assert_eq!(stored, total - failing_ids(&ids, 7).len());
    println!(
        "fault harness: {ROUNDS} rounds over {total} rollouts, {kills} kills ({phase_two_kills} \
         in phase 2, {finished_early} runs finished first), {stored} memories kept, work lost 0, \
         done twice 0, {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

/// Every rollout file under `dir`.
fn rollout_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// Two runs over disjoint rollouts, overlapping: the second finishes phase 1 while the first
/// holds the consolidation lease.
async fn overlapping_runs(wait_seconds: u64) -> (Harness, serde_json::Value, serde_json::Value) {
    let harness = Harness::new(0, 0);
    let base = harness.home.parent().unwrap().to_path_buf();
    let (first, second) = (base.join("first"), base.join("second"));
    // Disjoint halves of 24 rollouts (their own thread ids and projects).
    let ids = write_rollouts(&first, 24);
    write_rollouts(&second, 24);
    for (folder, drop) in [(&first, &ids[12..]), (&second, &ids[..12])] {
        for file in rollout_files(folder) {
            if drop
                .iter()
                .any(|id| file.to_string_lossy().contains(id.as_str()))
            {
                std::fs::remove_file(file).unwrap();
            }
        }
    }
    let (in_pass, gate) = (base.join("first-consolidating"), base.join("gate"));
    let logs = [base.join("first.log"), base.join("second.log")];
    let reports = [base.join("first.json"), base.join("second.json")];
    let holder = harness
        .command(&first, &logs[0], &reports[0])
        .env(
            ENV_GATE,
            format!("{}|{}", in_pass.display(), gate.display()),
        )
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !in_pass.exists() {
        assert!(
            Instant::now() < deadline,
            "the first run never consolidated"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let late = harness
        .command(&second, &logs[1], &reports[1])
        .env(ENV_WAIT, wait_seconds.to_string())
        .spawn()
        .unwrap();
    // Open the gate once the second run recorded all its outputs: they arrived during the
    // first run's pass.
    while read_logs(&logs[1..]).len() < 12 {
        assert!(
            Instant::now() < deadline,
            "the second run never finished phase 1"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    if wait_seconds == 0 {
        // The second run gives up at once; let it finish before the first one goes on.
        wait_ok(late);
        std::fs::write(&gate, "go").unwrap();
        wait_ok(holder);
    } else {
        std::fs::write(&gate, "go").unwrap();
        wait_ok(holder);
        wait_ok(late);
    }
    let read = |path: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let (first_report, second_report) = (read(&reports[0]), read(&reports[1]));
    assert_eq!(harness.assert_all_work_done(&logs).await, 24);
    let memory = harness.memory(names::MEMORY_FILE).unwrap();
    for project in 0..24 {
        assert!(
            memory.contains(&format!("`/work/p{project}`")),
            "project {project} missing"
        );
    }
    (harness, first_report, second_report)
}

#[tokio::test]
async fn two_overlapping_runs_over_disjoint_rollouts_leave_every_project_in_memory() {
    // The second run waits for the holder, which ran a second pass for the new outputs.
    let (_harness, first, second) = overlapping_runs(120).await;
    assert_eq!(first["passes"], 2, "{first}");
    assert_eq!(
        (&second["pending"], &second["claimed"]),
        (&false.into(), &12.into()),
        "{second}"
    );
}

#[tokio::test]
async fn a_run_that_cannot_wait_says_consolidation_is_pending_and_the_holder_includes_its_work() {
    let (_harness, first, second) = overlapping_runs(0).await;
    assert_eq!(second["pending"], true, "{second}");
    assert_eq!(second["ran"], false, "{second}");
    assert_eq!(first["passes"], 2, "{first}");
    assert_eq!(first["pending"], false, "{first}");
}

/// In-process runs over one home, for the injected faults.
struct Local {
    harness: Harness,
    store: StateStore,
    prefix: String,
}

impl Local {
    async fn new(rollouts: usize) -> Local {
        let harness = Harness::new(rollouts, 0);
        let store = harness.store();
        let scan = scan_rollouts(
            &store,
            &harness.rollouts,
            &ScanOptions::default(),
            now_unix(),
        )
        .await
        .unwrap();
        Local {
            prefix: scan.rollout_prefix(),
            store,
            harness,
        }
    }

    async fn rescan(&self) -> memory_write::ScanReport {
        let rollouts = self.harness.rollouts.clone();
        scan_rollouts(&self.store, &rollouts, &ScanOptions::default(), now_unix())
            .await
            .unwrap()
    }

    async fn phase_one(&self) -> memory_write::Result<memory_write::PhaseOneReport> {
        let model = Arc::new(FakeModel::new(Answer::Echo));
        let store: SharedStore = Arc::new(self.store.clone());
        run_phase_one(
            &store,
            model,
            &options(self.prefix.clone()),
            PhaseOneHooks::default(),
        )
        .await
    }

    async fn phase_two(
        &self,
        options: &PhaseTwoOptions,
    ) -> memory_write::Result<memory_write::phase_two::PhaseTwoReport> {
        let model = FakeModel::new(Answer::Echo);
        let root = MemoryRoot::under_home(&self.harness.home);
        run_phase_two(&self.store, &root, &model, options).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_while_writing_memory_files_keeps_the_old_files_and_the_next_run_recovers() {
    let local = Local::new(6).await;
    local.phase_one().await.unwrap();
    local
        .phase_two(&phase_two_options(Duration::ZERO))
        .await
        .unwrap();
    let before = local.harness.memory(names::MEMORY_FILE).unwrap();
    write_rollouts(&local.harness.rollouts, 9);
    local.rescan().await;
    assert_eq!(local.phase_one().await.unwrap().succeeded, 3);
    let memories = MemoryRoot::under_home(&local.harness.home)
        .dir()
        .to_path_buf();
    {
        let _full = inject(&memories, FaultPoint::Write, ErrorKind::StorageFull);
        let error = local
            .phase_two(&phase_two_options(Duration::ZERO))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("injected fault"), "{error}");
        assert_eq!(local.harness.memory(names::MEMORY_FILE).unwrap(), before);
        local.harness.assert_memory_files_whole();
    }
    // The failure backs off; `run` forces past it, and the next pass writes everything.
    let report = local
        .phase_two(&phase_two_options(Duration::ZERO))
        .await
        .unwrap();
    assert!(report.ran && !report.pending, "{report:?}");
    assert_eq!(local.harness.assert_all_work_done(&[]).await, 9);
    println!("fault harness: disk full (injected ENOSPC) during phase 2, work lost 0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_database_is_waited_for_or_reported_and_loses_nothing() {
    let local = Local::new(8).await;
    let db = local.harness.home.join("state.sqlite");
    // Held shorter than the busy timeout: the run waits and goes on.
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        lock.execute_batch("COMMIT").unwrap();
    });
    let first = local.phase_one().await.unwrap();
    release.join().unwrap();
    assert_eq!(first.succeeded, 8);
    // Held past a short busy timeout: a clear error, nothing half-recorded.
    write_rollouts(&local.harness.rollouts, 12);
    local.rescan().await;
    local
        .store
        .set_lock_timeout(Duration::from_millis(100))
        .unwrap();
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let error = local.phase_one().await.unwrap_err();
    assert!(
        error.to_string().contains("locked") || error.to_string().contains("busy"),
        "{error}"
    );
    lock.execute_batch("COMMIT").unwrap();
    let jobs = local.store.stage_one_jobs().await.unwrap();
    assert!(
        jobs.iter().all(|job| job.status == JobStatus::Done),
        "{jobs:?}"
    );
    // The next run completes everything.
    assert_eq!(local.phase_one().await.unwrap().succeeded, 4);
    local
        .phase_two(&phase_two_options(Duration::ZERO))
        .await
        .unwrap();
    assert_eq!(local.harness.assert_all_work_done(&[]).await, 12);
    println!(
        "fault harness: SQLite busy (waited 300 ms; then refused past a 100 ms timeout), work lost 0"
    );
}

#[cfg(unix)]
fn make_fifo(path: &Path) {
    std::fs::remove_file(path).unwrap();
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_in_place_of_a_rollout_or_a_memory_file_never_hangs_a_run() {
    let local = Local::new(6).await;
    // Registered as a rollout, then swapped for a FIFO before phase 1 opens it.
    let swapped = local
        .store
        .threads()
        .await
        .unwrap()
        .into_iter()
        .next()
        .unwrap();
    make_fifo(Path::new(&swapped.session.rollout_path));
    let report = local.phase_one().await.unwrap();
    assert_eq!((report.succeeded, report.failed), (5, 1), "{report:?}");
    let failed = report
        .jobs
        .iter()
        .find(|job| job.thread_id == swapped.session.id)
        .unwrap();
    assert!(
        failed
            .message
            .as_deref()
            .unwrap()
            .contains("not a regular file (a FIFO)"),
        "{failed:?}"
    );
    // A scan names it instead of opening it.
    let scan = local.rescan().await;
    assert!(
        scan.unreadable
            .iter()
            .any(
                |(path, why)| path.to_string_lossy() == swapped.session.rollout_path
                    && why.contains("FIFO")
            ),
        "{scan:?}"
    );
    // MEMORY.md swapped for a FIFO: the next pass rebuilds it, cooldown or not.
    let cooling = PhaseTwoOptions {
        cooldown_seconds: 3600,
        ..phase_two_options(Duration::ZERO)
    };
    local.phase_two(&cooling).await.unwrap();
    let memory = MemoryRoot::under_home(&local.harness.home).file(names::MEMORY_FILE);
    make_fifo(&memory);
    let report = local
        .phase_two(&PhaseTwoOptions {
            force: false,
            ..cooling
        })
        .await
        .unwrap();
    assert!(report.ran, "{report:?}");
    assert!(
        report
            .repaired
            .iter()
            .any(|damage| damage.contains("MEMORY.md")),
        "{report:?}"
    );
    assert!(std::fs::symlink_metadata(&memory).unwrap().is_file());
    local.harness.assert_memory_files_whole();
    println!("fault harness: FIFO as a rollout and as MEMORY.md, no hang, work lost 0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_folders_and_files_are_warnings_and_the_rest_is_processed() {
    let harness = Harness::new(0, 0);
    let ids = write_rollouts(&harness.rollouts, 12);
    let day = |d: usize| harness.rollouts.join(format!("2025/10/{d:02}"));
    let denied_file = std::fs::read_dir(day(2))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // Real permissions do not stop root (which runs CI), so the errors are injected.
    let _folder = inject(&day(1), FaultPoint::ReadDir, ErrorKind::PermissionDenied);
    let _file = inject(&denied_file, FaultPoint::Open, ErrorKind::PermissionDenied);
    let store = harness.store();
    let scan = scan_rollouts(
        &store,
        &harness.rollouts,
        &ScanOptions::default(),
        now_unix(),
    )
    .await
    .unwrap();
    assert_eq!(scan.unreadable.len(), 2, "{scan:?}");
    assert!(
        scan.unreadable
            .iter()
            .all(|(_, why)| why.contains("injected fault")),
        "{scan:?}"
    );
    // Days 1 and 2 hold one rollout each of the twelve (day = 1 + index % 28).
    assert_eq!(scan.new, ids.len() - 2);
    let store: SharedStore = Arc::new(store);
    let model = Arc::new(FakeModel::new(Answer::Echo));
    let report = run_phase_one(
        &store,
        model,
        &options(scan.rollout_prefix()),
        PhaseOneHooks::default(),
    )
    .await
    .unwrap();
    assert_eq!((report.succeeded, report.failed), (10, 0));
    // The scanned root itself unreadable is an error, not an empty scan.
    let _root = inject(
        &harness.rollouts,
        FaultPoint::ReadDir,
        ErrorKind::PermissionDenied,
    );
    let error = scan_rollouts(
        store.as_ref(),
        &harness.rollouts,
        &ScanOptions::default(),
        now_unix(),
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("injected fault"), "{error}");
    println!("fault harness: permission errors (a folder, a file, the root), work lost 0");
}
