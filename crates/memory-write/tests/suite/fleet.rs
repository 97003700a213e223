//! The fleet test: four worker processes share one store and one of them is killed with
//! SIGKILL mid-run. On PostgreSQL the workers are four machines (distinct machine ids) and
//! the 1,000 rollouts were registered by two other machines, so every extraction reads stored
//! items; on SQLite they are four processes of one machine over one folder. Either way every
//! thread must be extracted exactly once, the killed worker's jobs must be taken over by the
//! others, and only one consolidation may run at a time.
//!
//! The workers are this test binary, filtered to the ignored `fleet_worker` test and told what
//! to do through one environment variable. Leases are three seconds long on PostgreSQL (other
//! machines wait for a dead one's leases to expire; running jobs heartbeat meanwhile) and an
//! hour on SQLite (the dead-owner shortcut of one host must take them at once).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use memory_protocol::stage_one::JobStatus;
use memory_protocol::{ModelClient, ModelError, ModelRequest, ModelResponse, TaskKind};
use memory_write::memory_root::MemoryRoot;
use memory_write::phase_one::PhaseOneHooks;
use memory_write::phase_two::{PhaseTwoOptions, run_phase_two};
use memory_write::store::postgres::{PgStore, PgStoreOptions};
use memory_write::store::{ClaimParams, LeaseOwner, SharedStore, now_unix};
use memory_write::{PhaseOneOptions, ScanOptions, StateStore, run_phase_one, scan_rollouts};
use serde::{Deserialize, Serialize};

use super::conformance::{output_ids, pg_url, say_skipped, unique_schema};
use super::fake_model::{Answer, FakeModel, write_rollouts_numbered};
use super::reliability::OutcomeLog;

const ENV_WORKER: &str = "FLEET_WORKER";
const ROLLOUTS: usize = 1000;
const WORKERS: usize = 4;
/// Outcomes the victim records before it is killed.
const KILL_AFTER: usize = 40;
const MODEL_DELAY: Duration = Duration::from_millis(50);
/// How long a worker keeps looking for unfinished jobs before it gives up.
const WORKER_DEADLINE: Duration = Duration::from_secs(240);

/// Where a worker's store is.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Place {
    Postgres { url: String, schema: String },
    Sqlite { path: PathBuf },
}

/// Everything a worker process is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct WorkerPlan {
    place: Place,
    /// The machine id (PostgreSQL) the worker takes leases under.
    machine: String,
    /// Its outcome log: one `thread outcome` line per finished job.
    log: PathBuf,
    /// The log every worker appends consolidation start and end times to.
    consolidations: PathBuf,
    home: PathBuf,
    lease_seconds: i64,
    threads: usize,
}

impl Place {
    async fn open(&self, machine: &str) -> SharedStore {
        match self {
            Place::Postgres { url, schema } => {
                let options = PgStoreOptions {
                    schema: Some(schema.clone()),
                    ..PgStoreOptions::default()
                };
                let mut store = PgStore::connect_with(url, &options).await.unwrap();
                store.set_lease_owner(LeaseOwner {
                    host: machine.to_owned(),
                    ..LeaseOwner::current()
                });
                Arc::new(store)
            }
            Place::Sqlite { path } => Arc::new(StateStore::open(path).unwrap()),
        }
    }
}

/// Not a test on its own: the body of the worker processes the fleet tests start. Without
/// their environment it does nothing.
#[test]
#[ignore = "worker process of the fleet tests"]
fn fleet_worker() {
    let Ok(plan) = std::env::var(ENV_WORKER) else {
        return;
    };
    let plan: WorkerPlan = serde_json::from_str(&plan).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(work(plan));
}

async fn work(plan: WorkerPlan) {
    let store = plan.place.open(&plan.machine).await;
    let log = Arc::new(OutcomeLog {
        file: Mutex::new(std::fs::File::create(&plan.log).unwrap()),
        stop_after: None,
        logged: AtomicUsize::new(0),
    });
    let mut fake = FakeModel::new(Answer::Echo);
    fake.delay = MODEL_DELAY;
    let model = Arc::new(TimedModel {
        inner: fake,
        log: plan.consolidations.clone(),
        machine: plan.machine.clone(),
    });
    let options = PhaseOneOptions {
        claim: ClaimParams {
            min_idle_hours: 0,
            max_age_days: None,
            lease_seconds: plan.lease_seconds,
            ..ClaimParams::default()
        },
        max_claims: None,
        ..PhaseOneOptions::default()
    };
    let phase_two = PhaseTwoOptions {
        cooldown_seconds: 0,
        force: true,
        wait_for_holder: Duration::ZERO,
        ..PhaseTwoOptions::default()
    };
    let root = MemoryRoot::under_home(&plan.home);
    let deadline = Instant::now() + WORKER_DEADLINE;
    // Jobs another worker still holds (or held when it died) are not claimable until their
    // lease ends: keep looking until every thread is finished, consolidating what is there
    // after every round (so passes of several workers contend for the lease).
    loop {
        let hooks = PhaseOneHooks {
            rate_limit: None,
            observer: Some(log.clone()),
        };
        run_phase_one(&store, model.clone(), &options, hooks)
            .await
            .unwrap();
        run_phase_two(store.as_ref(), &root, model.as_ref(), &phase_two)
            .await
            .unwrap();
        let finished = store
            .stage_one_jobs()
            .await
            .unwrap()
            .iter()
            .filter(|job| job.status == JobStatus::Done)
            .count();
        if finished >= plan.threads || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The last pass consolidates whatever the others left.
    run_phase_two(store.as_ref(), &root, model.as_ref(), &phase_two)
        .await
        .unwrap();
}

/// The fake model, with every consolidation call's start and end appended to a shared log.
struct TimedModel {
    inner: FakeModel,
    log: PathBuf,
    machine: String,
}

impl TimedModel {
    fn note(&self, what: &str) {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.log)
            .unwrap();
        // One short write per line: appends from several processes do not interleave.
        file.write_all(format!("{nanos} {what} {}\n", self.machine).as_bytes())
            .unwrap();
    }
}

#[async_trait]
impl ModelClient for TimedModel {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn context_window(&self) -> Option<u64> {
        self.inner.context_window()
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let consolidation = request.task == TaskKind::Consolidation;
        if consolidation {
            self.note("start");
        }
        let answer = self.inner.complete(request).await;
        if consolidation {
            self.note("end");
        }
        answer
    }
}

struct Fleet {
    dir: tempfile::TempDir,
    place: Place,
    lease_seconds: i64,
    threads: usize,
}

impl Fleet {
    /// A fleet over `place` for all [`ROLLOUTS`], its logs and homes in `dir`.
    fn new(dir: tempfile::TempDir, place: Place, lease_seconds: i64) -> Fleet {
        Fleet {
            dir,
            place,
            lease_seconds,
            threads: ROLLOUTS,
        }
    }

    fn plan(&self, index: usize) -> WorkerPlan {
        WorkerPlan {
            place: self.place.clone(),
            machine: format!("worker-{index}"),
            log: self.dir.path().join(format!("outcomes-{index}.log")),
            consolidations: self.dir.path().join("consolidations.log"),
            home: self.dir.path().join(format!("home-{index}")),
            lease_seconds: self.lease_seconds,
            threads: self.threads,
        }
    }

    fn spawn(&self, index: usize) -> Child {
        Command::new(std::env::current_exe().unwrap())
            .args([
                "suite::fleet::fleet_worker",
                "--exact",
                "--ignored",
                "--test-threads",
                "1",
                "-q",
            ])
            .env(
                ENV_WORKER,
                serde_json::to_string(&self.plan(index)).unwrap(),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Runs the workers, kills worker 0 once it recorded [`KILL_AFTER`] outcomes, waits for
    /// the others, and checks the store (through a handle of its own) and the logs.
    async fn run_and_check(&self) {
        let store = self.place.open("observer").await;
        let started = Instant::now();
        let mut workers: Vec<Child> = (0..WORKERS).map(|index| self.spawn(index)).collect();
        let victim_log = self.plan(0).log;
        loop {
            let recorded = std::fs::read_to_string(&victim_log)
                .map(|text| text.lines().count())
                .unwrap_or(0);
            if recorded >= KILL_AFTER {
                break;
            }
            if let Some(status) = workers[0].try_wait().unwrap() {
                panic!("worker 0 ended before it could be killed: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "worker 0 recorded {recorded} outcomes in two minutes"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        workers[0].kill().unwrap(); // SIGKILL
        workers[0].wait().unwrap();
        for (index, worker) in workers.into_iter().enumerate().skip(1) {
            let output = worker.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "worker {index} failed: {}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }

        // Every thread has exactly one recorded extraction, and its output is stored.
        let mut succeeded: BTreeMap<String, usize> = BTreeMap::new();
        let mut victim_done = 0;
        for index in 0..WORKERS {
            let text = std::fs::read_to_string(self.plan(index).log).unwrap_or_default();
            for line in text.lines() {
                let (thread, outcome) = line.split_once(' ').unwrap();
                assert_ne!(outcome, "Failed", "{line}");
                if outcome == "Succeeded" {
                    *succeeded.entry(thread.to_owned()).or_default() += 1;
                    victim_done += usize::from(index == 0);
                }
            }
        }
        let twice: Vec<_> = succeeded.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "extracted more than once: {twice:?}");
        let outputs: BTreeSet<String> = output_ids(store.as_ref()).await.into_iter().collect();
        assert_eq!(outputs.len(), self.threads);
        let jobs = store.stage_one_jobs().await.unwrap();
        assert!(jobs.iter().all(|job| job.status == JobStatus::Done));
        // A success the victim stored just before the kill may be missing from its log, never
        // from the store; everything else is in the logs once.
        assert!(succeeded.len() + 8 >= self.threads, "{}", succeeded.len());
        assert!(victim_done >= KILL_AFTER - 8, "{victim_done}");

        // One consolidation at a time: start/end pairs never overlap.
        let text = std::fs::read_to_string(self.dir.path().join("consolidations.log")).unwrap();
        let mut events: Vec<(u128, String, String)> = text
            .lines()
            .map(|line| {
                let mut parts = line.split(' ');
                (
                    parts.next().unwrap().parse().unwrap(),
                    parts.next().unwrap().to_owned(),
                    parts.next().unwrap().to_owned(),
                )
            })
            .collect();
        events.sort();
        assert!(!events.is_empty(), "no consolidation ran");
        let mut holder: Option<String> = None;
        for (_, what, machine) in &events {
            match (what.as_str(), &holder) {
                ("start", None) => holder = Some(machine.clone()),
                ("end", Some(current)) if current == machine => holder = None,
                _ => panic!("consolidations overlapped: {events:?}"),
            }
        }
        eprintln!(
            "fleet ({}): {} threads, {} workers, worker 0 killed after {victim_done} \
             extractions, {} consolidation(s), {:.1} s",
            store.backend(),
            self.threads,
            WORKERS,
            events.len() / 2,
            started.elapsed().as_secs_f64()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_on_postgres_extracts_every_thread_once_and_survives_a_killed_machine() {
    let Some(url) = pg_url() else {
        say_skipped();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let place = Place::Postgres {
        url,
        schema: unique_schema("fleet"),
    };
    // Two machines register 500 rollouts each from their own folders; the files never reach
    // the workers.
    for (machine, range) in [("laptop", 0..ROLLOUTS / 2), ("ci", ROLLOUTS / 2..ROLLOUTS)] {
        let folder = dir.path().join(machine);
        write_rollouts_numbered(&folder, range);
        let store = place.open(machine).await;
        let report = scan_rollouts(store.as_ref(), &folder, &ScanOptions::default(), now_unix())
            .await
            .unwrap();
        assert_eq!(report.new, ROLLOUTS / 2);
        std::fs::remove_dir_all(&folder).unwrap();
    }
    let observer = place.open("observer").await;
    let threads = observer.threads().await.unwrap();
    let machines: BTreeSet<_> = threads
        .iter()
        .filter_map(|t| t.machine_id.as_deref())
        .collect();
    assert_eq!(machines, BTreeSet::from(["ci", "laptop"]));
    Fleet::new(dir, place, 3).run_and_check().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_on_sqlite_extracts_every_thread_once_and_survives_a_killed_process() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sessions");
    write_rollouts_numbered(&folder, 0..ROLLOUTS);
    let path = dir.path().join("state.sqlite");
    let sqlite = StateStore::open(&path).unwrap();
    let report = scan_rollouts(&sqlite, &folder, &ScanOptions::default(), now_unix())
        .await
        .unwrap();
    assert_eq!(report.new, ROLLOUTS);
    drop(sqlite);
    let place = Place::Sqlite { path };
    Fleet::new(dir, place, 3600).run_and_check().await;
}
