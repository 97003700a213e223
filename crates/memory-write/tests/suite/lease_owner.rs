//! Lease owners: a lease whose process is gone on this host is taken at once, a live owner's
//! and another host's leases keep the expiry rule, and a process told to stop gives its leases
//! back. Also the schema upgrade that added owners and redacted stored paths.

use memory_protocol::names::REDACTED_SECRET;
use memory_protocol::stage_one::JobStatus;
use memory_write::store::{
    ClaimParams, LeaseOwner, MemoryMode, PhaseTwoClaim, PhaseTwoClaimParams, SessionFacts,
    StateStore, ThreadRegistration, WriteStore,
};

const NOW: i64 = 1_800_000_000;
const LEASE: i64 = 3600;

fn thread(id: &str) -> ThreadRegistration {
    ThreadRegistration {
        session: SessionFacts {
            id: id.to_owned(),
            rollout_path: format!("/sessions/{id}.jsonl"),
            cwd: Some("/work".to_owned()),
            git_branch: None,
            source: Some("cli".to_owned()),
            exclusion: None,
            created_at: NOW - 86_400,
        },
        last_activity_at: NOW - 86_000,
        memory_mode: MemoryMode::Enabled,
        fingerprint: format!("f-{id}"),
        file_size: 10,
        file_mtime_ns: 0,
    }
}

fn params() -> ClaimParams {
    ClaimParams {
        min_idle_hours: 1,
        max_age_days: None,
        lease_seconds: LEASE,
        ..ClaimParams::default()
    }
}

fn phase_two(now: i64) -> PhaseTwoClaimParams {
    PhaseTwoClaimParams {
        now,
        lease_seconds: LEASE,
        cooldown_seconds: 0,
        force: true,
    }
}

/// Two stores on one database: the first plays `owner`, the second is this process.
async fn two_stores(
    owner: LeaseOwner,
    ids: &[&str],
) -> (tempfile::TempDir, StateStore, StateStore) {
    let dir = tempfile::tempdir().unwrap();
    let first = StateStore::open_home(dir.path()).unwrap();
    first.set_lease_owner(owner);
    let rows: Vec<ThreadRegistration> = ids.iter().map(|id| thread(id)).collect();
    first.upsert_threads(&rows, NOW).await.unwrap();
    let second = StateStore::open_home(dir.path()).unwrap();
    (dir, first, second)
}

/// The identity a process had, after it exited (and was reaped).
fn exited_process() -> LeaseOwner {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let owner = LeaseOwner::of_process(child.id());
    child.wait().unwrap();
    owner
}

/// A process that lives until the guard drops.
struct Sleeper(std::process::Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn live_process() -> (Sleeper, LeaseOwner) {
    let child = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let owner = LeaseOwner::of_process(child.id());
    (Sleeper(child), owner)
}

#[tokio::test]
async fn a_job_leased_by_a_process_that_exited_on_this_host_is_claimed_at_once() {
    let (_dir, crashed, rerun) = two_stores(exited_process(), &["a"]).await;
    let held = crashed
        .claim_next_stage_one_job(&params(), NOW)
        .await
        .unwrap()
        .unwrap();
    let job = rerun.stage_one_job("a").await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Running);
    assert_eq!(job.lease_expires_at, Some(NOW + LEASE));
    // One second later, with an hour of lease left.
    let taken = rerun
        .claim_next_stage_one_job(&params(), NOW + 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(taken.thread_id, "a");
    assert_ne!(taken.owner_token, held.owner_token);
    // The dead owner's token is fenced out.
    assert!(!crashed.release_stage_one_job(&held, "late").await.unwrap());
    assert_eq!(rerun.stage_one_job("a").await.unwrap().unwrap().attempts, 0);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_reused_process_id_is_not_mistaken_for_the_owner() {
    // This very process's id, but another start time: an earlier process under the same id.
    let me = LeaseOwner::current();
    let started = me.started.clone().unwrap();
    let (scope, _) = started.rsplit_once(':').unwrap();
    let earlier = LeaseOwner {
        started: Some(format!("{scope}:1")),
        ..me
    };
    let (_dir, crashed, rerun) = two_stores(earlier, &["a"]).await;
    crashed
        .claim_next_stage_one_job(&params(), NOW)
        .await
        .unwrap()
        .unwrap();
    assert!(
        rerun
            .claim_next_stage_one_job(&params(), NOW + 1)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_live_owner_and_another_host_keep_the_expiry_rule() {
    let (_sleeper, alive) = live_process();
    let elsewhere = LeaseOwner {
        host: format!("{}-elsewhere", LeaseOwner::current().host),
        ..exited_process()
    };
    for owner in [alive, elsewhere] {
        let (_dir, holder, other) = two_stores(owner.clone(), &["a"]).await;
        holder
            .claim_next_stage_one_job(&params(), NOW)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            other
                .claim_next_stage_one_job(&params(), NOW + LEASE - 1)
                .await
                .unwrap(),
            None,
            "{owner:?}"
        );
        assert!(
            other
                .claim_next_stage_one_job(&params(), NOW + LEASE + 1)
                .await
                .unwrap()
                .is_some()
        );
    }
}

#[tokio::test]
async fn the_phase_two_lease_of_a_gone_process_is_taken_at_once() {
    let (_sleeper, alive) = live_process();
    let (_dir, crashed, rerun) = two_stores(exited_process(), &[]).await;
    assert!(matches!(
        crashed.claim_phase_two(phase_two(NOW)).await.unwrap(),
        PhaseTwoClaim::Claimed(_)
    ));
    assert!(matches!(
        rerun.claim_phase_two(phase_two(NOW + 1)).await.unwrap(),
        PhaseTwoClaim::Claimed(_)
    ));

    // A live holder is respected until its lease ends.
    let (_dir, holder, other) = two_stores(alive, &[]).await;
    assert!(matches!(
        holder.claim_phase_two(phase_two(NOW)).await.unwrap(),
        PhaseTwoClaim::Claimed(_)
    ));
    assert_eq!(
        other.claim_phase_two(phase_two(NOW + 1)).await.unwrap(),
        PhaseTwoClaim::SkippedRunning {
            lease_expires_at: NOW + LEASE
        }
    );
}

#[tokio::test]
async fn a_process_told_to_stop_gives_every_lease_back_unspent() {
    let dir = tempfile::tempdir().unwrap();
    let store = StateStore::open_home(dir.path()).unwrap();
    store
        .upsert_threads(&[thread("a"), thread("b"), thread("c")], NOW)
        .await
        .unwrap();
    store
        .claim_next_stage_one_job(&params(), NOW)
        .await
        .unwrap()
        .unwrap();
    store
        .claim_next_stage_one_job(&params(), NOW)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        store.claim_phase_two(phase_two(NOW)).await.unwrap(),
        PhaseTwoClaim::Claimed(_)
    ));
    let released = store.release_leases_of_this_process().await.unwrap();
    assert_eq!((released.jobs, released.phase_two), (2, true));
    for job in store.stage_one_jobs().await.unwrap() {
        assert_eq!(job.status, JobStatus::Pending, "{job:?}");
        assert_eq!(job.attempts, 0);
        assert_eq!(job.owner_token, None);
    }
    // The stopping store claims nothing more; another takes the work at once.
    assert_eq!(
        store
            .claim_next_stage_one_job(&params(), NOW)
            .await
            .unwrap(),
        None
    );
    let next = StateStore::open_home(dir.path()).unwrap();
    let mut claimed = 0;
    while next
        .claim_next_stage_one_job(&params(), NOW + 1)
        .await
        .unwrap()
        .is_some()
    {
        claimed += 1;
    }
    assert_eq!(claimed, 3);
    assert!(matches!(
        next.claim_phase_two(phase_two(NOW + 1)).await.unwrap(),
        PhaseTwoClaim::Claimed(_)
    ));
}

#[tokio::test]
async fn paths_are_stored_redacted_and_a_secret_path_is_only_claimed_where_it_is_known() {
    let secret = "ghp_EXAMPLEfakeTokenForDocs0123456789abc";
    let dir = tempfile::tempdir().unwrap();
    let scanner = StateStore::open_home(dir.path()).unwrap();
    let mut row = thread("a");
    row.session.rollout_path = format!("/sessions/{secret}/a.jsonl");
    row.session.cwd = Some(format!("/work/GITHUB_TOKEN={secret}"));
    scanner
        .upsert_threads(&[row.clone(), thread("b")], NOW)
        .await
        .unwrap();
    let stored = scanner.thread("a").await.unwrap().unwrap();
    assert!(
        !stored.session.rollout_path.contains(secret)
            && stored.session.rollout_path.contains(REDACTED_SECRET)
    );
    assert!(!stored.session.cwd.unwrap().contains(secret));
    // Nothing persistent holds the secret: not the database, not its WAL.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()));
    }
    // Another process never scanned it, so it cannot open it and does not claim it.
    let other = StateStore::open_home(dir.path()).unwrap();
    let only = other
        .claim_next_stage_one_job(&params(), NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(only.thread_id, "b");
    assert_eq!(
        other
            .claim_next_stage_one_job(&params(), NOW)
            .await
            .unwrap(),
        None
    );
    // The scanning process opens the real file, and shows the redacted path.
    let job = scanner
        .claim_next_stage_one_job(&params(), NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.thread_id, "a");
    assert_eq!(
        job.open_path,
        std::path::PathBuf::from(&row.session.rollout_path)
    );
    assert!(!job.rollout_path.contains(secret));
}

#[tokio::test]
async fn upgrading_a_version_one_database_adds_owners_redacts_paths_and_keeps_other_tables() {
    let secret = "ghp_EXAMPLEfakeTokenForDocs0123456789abc";
    let dir = tempfile::tempdir().unwrap();
    let path = {
        let store = StateStore::open_home(dir.path()).unwrap();
        store.upsert_threads(&[thread("a")], NOW).await.unwrap();
        store.path().to_owned()
    };
    // Back to version 1 as an older build left it: no owner columns, paths as found, the
    // version in `PRAGMA user_version`, and another owner's row in `schema_versions`.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "ALTER TABLE stage1_jobs DROP COLUMN owner_host;
         ALTER TABLE stage1_jobs DROP COLUMN owner_pid;
         ALTER TABLE stage1_jobs DROP COLUMN owner_started;
         ALTER TABLE phase2_lease DROP COLUMN owner_host;
         ALTER TABLE phase2_lease DROP COLUMN owner_pid;
         ALTER TABLE phase2_lease DROP COLUMN owner_started;
         ALTER TABLE threads DROP COLUMN git_branch;
         DROP TABLE phase2_baseline;
         UPDATE threads SET cwd = '/w/{secret}', rollout_path = '/s/{secret}/a.jsonl';
         DELETE FROM schema_versions;
         INSERT INTO schema_versions VALUES ('goal-steering', 3);
         PRAGMA user_version = 1;"
    ))
    .unwrap();
    drop(conn);
    let store = StateStore::open_home(dir.path()).unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 3);
    let row = store.thread("a").await.unwrap().unwrap();
    assert!(!row.session.cwd.unwrap().contains(secret));
    assert!(!row.session.rollout_path.contains(secret));
    assert!(
        store
            .claim_next_stage_one_job(&params(), NOW)
            .await
            .unwrap()
            .is_none(),
        "unknown real path"
    );
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let kept: i64 = conn
        .query_row(
            "SELECT version FROM schema_versions WHERE owner = 'goal-steering'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 3);
}
