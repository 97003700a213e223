//! `cargo xtask bench fleet`: the state store shared by a fleet, on PostgreSQL.
//!
//! - Claims per second (claim + record, one transaction each) with 1, 4 and 16 concurrent
//!   workers on one PostgreSQL store, against one worker on SQLite, over 1,000 registered
//!   rollouts.
//! - Phase 1 wall time over ideal with four worker processes (four machine ids) against a
//!   loopback OpenAI-compatible server that answers after 50 ms: the ideal is
//!   jobs / (4 x 8) x 50 ms. The rollouts are registered by the parent (stored items
//!   included), so the workers only claim, extract from stored items and record.
//!
//! The server is named by `AGENT_MEMORY_BENCH_PG_URL`, else `AGENT_MEMORY_TEST_PG_URL`
//! (`source .ci/postgres.sh start` starts one); each measurement works in a fresh schema.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use memory_protocol::StageOneOutput;
use memory_write::phase_one::{CONCURRENCY_LIMIT, JobReport, PhaseOneHooks, PhaseOneObserver};
use memory_write::store::postgres::{PgStore, PgStoreOptions};
use memory_write::store::{
    ClaimParams, LeaseOwner, SharedStore, StageOneSuccess, WriteStore, now_unix,
};
use memory_write::{PhaseOneOptions, ScanOptions, run_phase_one, scan_rollouts};
use tokio::net::TcpListener;

use super::pipeline::{JOBS, SERVER_DELAY, bench_model, generate_rollouts, measure_claims, serve};

const PROCESSES: usize = 4;
const CLAIM_WORKERS: [usize; 3] = [1, 4, 16];
/// The environment a worker process reads: `URL|SCHEMA|SERVER|MACHINE|SPAWNED_AT_UNIX_MS`.
const ENV_WORKER: &str = "AGENT_MEMORY_FLEET_BENCH_WORKER";

pub(crate) fn run(args: &[&str]) -> Result<()> {
    if let Ok(plan) = std::env::var(ENV_WORKER) {
        return worker(&plan);
    }
    if cfg!(debug_assertions) && args != ["--inner"] {
        return super::rerun_in_release("fleet");
    }
    let url = std::env::var("AGENT_MEMORY_BENCH_PG_URL")
        .or_else(|_| std::env::var("AGENT_MEMORY_TEST_PG_URL"))
        .context(
            "name a PostgreSQL server in AGENT_MEMORY_BENCH_PG_URL (or start one with \
             `source .ci/postgres.sh start`)",
        )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(measure(&url))
}

async fn measure(url: &str) -> Result<()> {
    let work = tempfile::tempdir()?;
    let rollouts = work.path().join("rollouts");
    generate_rollouts(&rollouts, JOBS)?;
    let run_id = std::process::id();

    let mut claims = Vec::new();
    for workers in CLAIM_WORKERS {
        let schema = format!("bench_fleet_claims_{workers}_{run_id}");
        let store = Arc::new(open(url, &schema, "bench-scanner", workers).await?);
        register(store.as_ref(), &rollouts).await?;
        let rate = claim_all(&store, workers).await?;
        println!("postgres, {workers:>2} worker(s): {rate:.0} claims/s");
        claims.push(rate);
        drop_schema(url, &schema).await?;
    }
    let sqlite = measure_claims(&rollouts, &work.path().join("sqlite-home")).await?;
    println!("sqlite,    1 worker:   {sqlite:.0} claims/s");

    let schema = format!("bench_fleet_phase1_{run_id}");
    let store = open(url, &schema, "bench-scanner", 4).await?;
    register(&store, &rollouts).await?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let server = tokio::spawn(serve(listener));
    let started = Instant::now();
    let epoch = unix_ms();
    let children: Vec<_> = (0..PROCESSES)
        .map(|index| {
            std::process::Command::new(std::env::current_exe()?)
                .args(["bench", "fleet"])
                .env(
                    ENV_WORKER,
                    format!("{url}|{schema}|{address}|bench-machine-{index}|{epoch}"),
                )
                .stdout(std::process::Stdio::piped())
                .spawn()
        })
        .collect::<std::io::Result<_>>()?;
    let mut timings = Vec::new();
    for child in children {
        let output = child.wait_with_output()?;
        if !output.status.success() {
            bail!("a worker process failed: {}", output.status);
        }
        timings.push(String::from_utf8_lossy(&output.stdout).trim().to_owned());
    }
    let wall_s = started.elapsed().as_secs_f64();
    // Where the wall time goes, per worker: ready (store open), first and last job recorded,
    // and the jobs it ran, in ms from the spawn.
    for timing in &timings {
        println!("  worker {timing}");
    }
    server.abort();
    let outputs = store.stage_one_outputs().await?.len();
    if outputs != JOBS {
        bail!("expected {JOBS} stored outputs, found {outputs}");
    }
    drop(store);
    drop_schema(url, &schema).await?;
    let ideal_s = JOBS as f64 / (PROCESSES * CONCURRENCY_LIMIT) as f64 * SERVER_DELAY.as_secs_f64();
    let ratio = wall_s / ideal_s;
    println!(
        "phase 1, {PROCESSES} processes x {CONCURRENCY_LIMIT} jobs in flight: {JOBS} jobs in \
         {wall_s:.2} s; ideal {ideal_s:.2} s; ratio {ratio:.3}"
    );
    let rates: Vec<String> = claims.iter().map(|rate| format!("{rate:.0}")).collect();
    let workers: Vec<String> = CLAIM_WORKERS.iter().map(ToString::to_string).collect();
    println!(
        "BENCH fleet workers={} claims_per_s={} sqlite_claims_per_s={sqlite:.0} \
         wall_vs_ideal={ratio:.3}",
        workers.join("/"),
        rates.join("/")
    );
    Ok(())
}

/// One worker process of the phase-1 measurement: claims until nothing is left.
fn worker(plan: &str) -> Result<()> {
    let parts: Vec<&str> = plan.split('|').collect();
    let [url, schema, server, machine, epoch] = parts.as_slice() else {
        bail!("malformed worker plan {plan:?}");
    };
    let epoch: u128 = epoch.parse().context("the worker plan's start time")?;
    let since_spawn = move || unix_ms().saturating_sub(epoch);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store: SharedStore =
            Arc::new(open(url, schema, machine, PgStoreOptions::default().pool_size).await?);
        let model = Arc::new(bench_model(server)?);
        let options = PhaseOneOptions {
            claim: any_thread(),
            max_claims: None,
            ..PhaseOneOptions::default()
        };
        let ready = since_spawn();
        let finished = Arc::new(FinishTimes::new(since_spawn));
        let hooks = PhaseOneHooks {
            observer: Some(Arc::clone(&finished) as Arc<dyn PhaseOneObserver>),
            ..PhaseOneHooks::default()
        };
        let report = run_phase_one(&store, model, &options, hooks).await?;
        if report.failed > 0 {
            let first = report.jobs.iter().find_map(|job| job.message.clone());
            bail!("{} jobs failed; first: {first:?}", report.failed);
        }
        let (first, last) = finished.span();
        println!(
            "{machine}: ready {ready} ms, first job {first} ms, last job {last} ms, {} jobs, \
             done {} ms",
            report.claimed,
            since_spawn()
        );
        Ok(())
    })
}

fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis())
}

/// When a worker's first and last jobs were recorded.
struct FinishTimes<F> {
    clock: F,
    span: std::sync::Mutex<Option<(u128, u128)>>,
}

impl<F: Fn() -> u128> FinishTimes<F> {
    fn new(clock: F) -> Self {
        Self {
            clock,
            span: std::sync::Mutex::new(None),
        }
    }

    fn span(&self) -> (u128, u128) {
        self.span
            .lock()
            .ok()
            .and_then(|span| *span)
            .unwrap_or_default()
    }
}

impl<F: Fn() -> u128 + Send + Sync> PhaseOneObserver for FinishTimes<F> {
    fn job_finished(&self, _job: &JobReport) {
        let now = (self.clock)();
        if let Ok(mut span) = self.span.lock() {
            let (first, _) = span.unwrap_or((now, now));
            *span = Some((first, now));
        }
    }
}

async fn open(url: &str, schema: &str, machine: &str, pool_size: usize) -> Result<PgStore> {
    let options = PgStoreOptions {
        schema: Some(schema.to_owned()),
        pool_size,
        connect_timeout: Duration::from_secs(10),
    };
    let mut store = PgStore::connect_with(url, &options).await?;
    store.set_lease_owner(LeaseOwner {
        host: machine.to_owned(),
        ..LeaseOwner::current()
    });
    Ok(store)
}

async fn register(store: &PgStore, rollouts: &Path) -> Result<()> {
    let report = scan_rollouts(store, rollouts, &ScanOptions::default(), now_unix()).await?;
    if report.new != JOBS {
        bail!("registered {} rollouts, expected {JOBS}", report.new);
    }
    Ok(())
}

fn any_thread() -> ClaimParams {
    ClaimParams {
        min_idle_hours: 1,
        max_age_days: None,
        ..ClaimParams::default()
    }
}

/// Claims and records every job with `workers` concurrent loops; claims per second.
async fn claim_all(store: &Arc<PgStore>, workers: usize) -> Result<f64> {
    let output = StageOneOutput {
        raw_memory: "m".to_owned(),
        rollout_summary: "s".to_owned(),
        rollout_slug: None,
    };
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..workers {
        let (store, output) = (Arc::clone(store), output.clone());
        tasks.spawn(async move {
            let mut claimed = 0usize;
            let now = now_unix();
            let success = StageOneSuccess { now, output };
            while let Some(job) = store.claim_next_stage_one_job(&any_thread(), now).await? {
                store.mark_stage_one_succeeded(&job, &success).await?;
                claimed += 1;
            }
            Ok::<_, memory_write::Error>(claimed)
        });
    }
    let mut total = 0;
    while let Some(joined) = tasks.join_next().await {
        total += joined??;
    }
    if total != JOBS {
        bail!("claimed {total} jobs, expected {JOBS}");
    }
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

async fn drop_schema(url: &str, schema: &str) -> Result<()> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .await?;
    drop(client);
    let _ = driver.await;
    Ok(())
}
