//! Versioned migrations of the write path's tables on PostgreSQL.
//!
//! `memory-store`'s migrator applies them: versions live in `schema_versions` under
//! [`schema_owners::MEMORY_WRITE`], so other owners' tables in the same database version on
//! their own, and migrations run in one transaction under the migration advisory lock.

use memory_store::ddl::Dialect;
use memory_store::migrate::Schema;
use memory_store::names::schema_owners;
use memory_store::names::tables::{
    MEMORY_ROOT_REVISIONS, ROLLOUT_CONTENTS, SHARED_NOTES, STAGE_ONE_JOBS, THREADS,
};

use crate::error::Result;
use crate::store::tables;

/// One migration per version; index `i` brings the schema to version `i + 1`. Version 1 is
/// the SQLite schema at its version 3 (lease owners, git branches, the phase-2 baseline),
/// rendered from the same definitions.
/// Version 2 shares rollouts and the memory root across machines: each thread records the
/// machine that registered it, its filtered, redacted items are stored so any machine's worker
/// can extract it, each successful consolidation publishes the root it wrote, and agent notes
/// are kept for every machine.
/// Threads registered before it have no stored items; their file sizes are forgotten so the
/// next scan on their machine inspects them again and uploads them. It also keeps on each
/// thread the watermark last extracted (`done_watermark`), so a claim walks a partial index of
/// the threads still to extract instead of every thread, done ones included.
/// Version 3 keeps running jobs out of that index: `claimed` says the thread's job is running,
/// kept by a trigger on every insert, status change and delete of a job row (so no write path
/// can forget it), and the claimable index holds only unclaimed threads. The same trigger
/// raises `done_watermark` to the job's last successful watermark, so finishing a job writes
/// the thread row once. Every claim used to
/// walk past the threads in flight (each checked against its job, its output and its stored
/// items) before it reached a free one; a running job whose lease ran out is found from the
/// jobs' status index instead.
fn migrations() -> [String; 3] {
    [
        tables::shared_versions(Dialect::Postgres).join("\n"),
        format!(
            "ALTER TABLE {THREADS} ADD COLUMN machine_id TEXT;
            ALTER TABLE {THREADS} ADD COLUMN done_watermark BIGINT NOT NULL DEFAULT -1;
            UPDATE {THREADS} t SET done_watermark = j.last_success_watermark
                FROM {STAGE_ONE_JOBS} j
                WHERE j.thread_id = t.id AND j.last_success_watermark IS NOT NULL;
            CREATE INDEX {THREADS}_claimable ON {THREADS} (last_activity_at DESC, id DESC)
                WHERE skip_reason IS NULL AND memory_mode = 'enabled'
                    AND source_watermark > done_watermark;
            CREATE TABLE {ROLLOUT_CONTENTS} (
                thread_id TEXT NOT NULL,
                source_fingerprint TEXT NOT NULL,
                items TEXT NOT NULL,
                uploaded_at BIGINT NOT NULL,
                PRIMARY KEY (thread_id, source_fingerprint)
            );
            UPDATE {THREADS} SET file_size = -1;
            CREATE TABLE {SHARED_NOTES} (
                path TEXT PRIMARY KEY,
                text TEXT NOT NULL,
                machine_id TEXT,
                created_at BIGINT NOT NULL
            );
            CREATE TABLE {MEMORY_ROOT_REVISIONS} (
                revision BIGINT PRIMARY KEY,
                files TEXT NOT NULL,
                machine_id TEXT,
                created_at BIGINT NOT NULL
            );"
        ),
        format!(
            "ALTER TABLE {THREADS} ADD COLUMN claimed BOOLEAN NOT NULL DEFAULT FALSE;
            UPDATE {THREADS} t SET claimed = TRUE
                FROM {STAGE_ONE_JOBS} j
                WHERE j.thread_id = t.id AND j.status = 'running';
            CREATE FUNCTION {STAGE_ONE_JOBS}_mark_claimed() RETURNS trigger
                LANGUAGE plpgsql SET search_path FROM CURRENT AS $body$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    UPDATE {THREADS} SET claimed = FALSE WHERE id = OLD.thread_id AND claimed;
                ELSE
                    UPDATE {THREADS} SET claimed = (NEW.status = 'running'),
                        done_watermark = GREATEST(done_watermark,
                            COALESCE(NEW.last_success_watermark, -1))
                        WHERE id = NEW.thread_id
                            AND (claimed <> (NEW.status = 'running')
                                OR done_watermark < COALESCE(NEW.last_success_watermark, -1));
                END IF;
                RETURN NULL;
            END
            $body$;
            CREATE TRIGGER {STAGE_ONE_JOBS}_claimed_on_insert AFTER INSERT ON {STAGE_ONE_JOBS}
                FOR EACH ROW EXECUTE FUNCTION {STAGE_ONE_JOBS}_mark_claimed();
            CREATE TRIGGER {STAGE_ONE_JOBS}_claimed_on_status
                AFTER UPDATE OF status, last_success_watermark ON {STAGE_ONE_JOBS} FOR EACH ROW
                WHEN (OLD.status IS DISTINCT FROM NEW.status
                    OR OLD.last_success_watermark IS DISTINCT FROM NEW.last_success_watermark)
                EXECUTE FUNCTION {STAGE_ONE_JOBS}_mark_claimed();
            CREATE TRIGGER {STAGE_ONE_JOBS}_claimed_on_delete AFTER DELETE ON {STAGE_ONE_JOBS}
                FOR EACH ROW EXECUTE FUNCTION {STAGE_ONE_JOBS}_mark_claimed();
            DROP INDEX {THREADS}_claimable;
            CREATE INDEX {THREADS}_claimable ON {THREADS} (last_activity_at DESC, id DESC)
                WHERE skip_reason IS NULL AND memory_mode = 'enabled'
                    AND source_watermark > done_watermark AND NOT claimed;
            UPDATE {THREADS} t SET done_watermark = j.last_success_watermark
                FROM {STAGE_ONE_JOBS} j
                WHERE j.thread_id = t.id AND j.last_success_watermark > t.done_watermark;"
        ),
    ]
}

/// The write path's tables as the migrator sees them.
fn schema(migrations: &[String]) -> Schema<'_> {
    Schema {
        owner: schema_owners::MEMORY_WRITE,
        migrations,
        legacy_user_version: false,
    }
}

/// Brings the write path's tables up to date, or refuses a schema newer than this build.
pub(super) async fn migrate(client: &mut tokio_postgres::Client) -> Result<()> {
    let migrations = migrations();
    memory_store::migrate::migrate_postgres(client, &schema(&migrations)).await?;
    Ok(())
}

/// The version recorded for this crate's tables.
pub(super) async fn version(client: &tokio_postgres::Client) -> Result<i64> {
    Ok(memory_store::migrate::postgres_version(client, schema_owners::MEMORY_WRITE).await?)
}

#[cfg(test)]
mod tests {
    //! The upgrade to version 3 on a database a version-2 fleet was using: its jobs in flight,
    //! finished and backing off. Runs when `AGENT_MEMORY_TEST_PG_URL` names a server.

    use memory_protocol::StageOneOutput;
    use memory_store::names::tables::SCHEMA_VERSIONS;
    use tokio_postgres::NoTls;

    use super::*;
    use crate::store::postgres::{PgStore, PgStoreOptions};
    use crate::store::{ClaimParams, LeaseOwner, StageOneSuccess, WriteStore};

    const NOW: i64 = 1_800_000_000;
    const HOUR: i64 = 3600;

    /// A thread as a version-2 build registered it, its items stored, and its job row as that
    /// build left it (`None`: never claimed).
    struct Row {
        id: &'static str,
        activity: i64,
        done_watermark: i64,
        job: Option<&'static str>,
    }

    fn rows() -> [Row; 6] {
        let row = |id, hours: i64, done_watermark, job| Row {
            id,
            activity: NOW - hours * HOUR,
            done_watermark,
            job,
        };
        [
            // Newest: its owner went silent, its lease ran out before the upgrade.
            row("expired", 7, -1, Some("running")),
            // Its owner is still working on it, lease until NOW + 600.
            row("live", 8, -1, Some("running")),
            row("free", 9, -1, None),
            // Done, and the thread row says so.
            row("done", 10, 100, Some("done")),
            // Done, but the thread row was never raised (written before version 2 kept it).
            row("lagging", 11, -1, Some("done")),
            // Failed once, backing off for an hour.
            row("backing_off", 12, -1, Some("failed")),
        ]
    }

    /// Version 2 in a schema of its own, filled as a version-2 fleet leaves it.
    async fn version_two_in_use(client: &tokio_postgres::Client, schema: &str) {
        client
            .batch_execute(&format!(
                "CREATE SCHEMA {schema}; SET search_path TO {schema};
                 CREATE TABLE {SCHEMA_VERSIONS} (owner TEXT PRIMARY KEY, version BIGINT NOT NULL);
                 INSERT INTO {SCHEMA_VERSIONS} VALUES ('{}', 2);",
                schema_owners::MEMORY_WRITE
            ))
            .await
            .unwrap();
        for sql in migrations().iter().take(2) {
            client.batch_execute(sql).await.unwrap();
        }
        for row in rows() {
            client
                .execute(
                    &format!(
                        "INSERT INTO {THREADS} (id, rollout_path, created_at, updated_at,
                            last_activity_at, source_watermark, source_fingerprint, file_size,
                            file_mtime_ns, machine_id, done_watermark)
                         VALUES ($1, '/sessions/' || $1 || '.jsonl', $2::BIGINT - 60, $2, $2, 100, 'f',
                            10, 7, 'machine-a', $3)"
                    ),
                    &[&row.id, &row.activity, &row.done_watermark],
                )
                .await
                .unwrap();
            let items = format!(
                r#"[{{"type":"message","role":"user","content":[{{"type":"input_text","text":"thread {}"}}]}}]"#,
                row.id
            );
            client
                .execute(
                    &format!("INSERT INTO {ROLLOUT_CONTENTS} VALUES ($1, 'f', $2, $3)"),
                    &[&row.id, &items, &(NOW - HOUR)],
                )
                .await
                .unwrap();
            let Some(status) = row.job else { continue };
            let lease = if row.id == "expired" {
                NOW - 10
            } else {
                NOW + 600
            };
            let (lease, success, retry) = match status {
                "running" => (Some(lease), None, None),
                "done" => (None, Some(100_i64), None),
                _ => (None, None, Some(NOW + HOUR)),
            };
            client
                .execute(
                    &format!(
                        "INSERT INTO {STAGE_ONE_JOBS} (thread_id, status, owner_token,
                            lease_expires_at, attempts, retry_after_at, input_watermark,
                            last_success_watermark, started_at, owner_host, owner_pid)
                         VALUES ($1, $2, 'token-' || $1, $3, 1, $4, 100, $5, $6,
                            'machine-a', 4242)"
                    ),
                    &[&row.id, &status, &lease, &retry, &success, &(NOW - HOUR)],
                )
                .await
                .unwrap();
        }
    }

    /// `(id, claimed, done_watermark)` of every thread, by id.
    async fn thread_flags(client: &tokio_postgres::Client) -> Vec<(String, bool, i64)> {
        client
            .query(
                &format!("SELECT id, claimed, done_watermark FROM {THREADS} ORDER BY id"),
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_version_two_database_with_jobs_in_flight_upgrades_to_three() {
        let Some(url) = std::env::var("AGENT_MEMORY_TEST_PG_URL")
            .ok()
            .filter(|url| !url.is_empty())
        else {
            eprintln!("SKIPPED: version 2 upgrade test (AGENT_MEMORY_TEST_PG_URL is not set)");
            return;
        };
        let schema = format!(
            "t_upgrade_v2_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
        tokio::spawn(connection);
        version_two_in_use(&client, &schema).await;

        let options = PgStoreOptions {
            schema: Some(schema.clone()),
            ..PgStoreOptions::default()
        };
        let mut store = PgStore::connect_with(&url, &options).await.unwrap();
        store.set_lease_owner(LeaseOwner {
            host: "machine-b".to_owned(),
            pid: 4343,
            started: None,
        });
        assert_eq!(store.schema_version().await.unwrap(), 3);
        // The backfill: only the running jobs' threads are claimed (the expired one too: its
        // lease is judged at claim time), and the lagging thread's watermark is raised.
        let flags = |claimed: &[&str], done: &[&str]| {
            let mut expected: Vec<(String, bool, i64)> = rows()
                .iter()
                .map(|row| {
                    let done_watermark = if done.contains(&row.id) { 100 } else { -1 };
                    (row.id.to_owned(), claimed.contains(&row.id), done_watermark)
                })
                .collect();
            expected.sort();
            expected
        };
        assert_eq!(
            thread_flags(&client).await,
            flags(&["expired", "live"], &["done", "lagging"])
        );

        let params = ClaimParams {
            min_idle_hours: 6,
            max_age_days: Some(10),
            lease_seconds: 600,
            ..ClaimParams::default()
        };
        // The expired lease is taken first (newest), then the free thread; the live job, the
        // finished ones and the one backing off are not claimable.
        let mut claimed = Vec::new();
        while let Some(job) = store.claim_next_stage_one_job(&params, NOW).await.unwrap() {
            claimed.push(job);
        }
        let ids: Vec<&str> = claimed.iter().map(|job| job.thread_id.as_str()).collect();
        assert_eq!(ids, ["expired", "free"]);
        assert_eq!(
            store
                .count_stage_one_candidates(&params, NOW)
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            thread_flags(&client).await,
            flags(&["expired", "live", "free"], &["done", "lagging"])
        );

        // The trigger keeps the flags from here on: finishing frees the thread and raises
        // its watermark.
        for job in &claimed {
            let success = StageOneSuccess {
                now: NOW + 60,
                output: StageOneOutput {
                    raw_memory: format!("memory {}", job.thread_id),
                    rollout_summary: format!("# summary {}", job.thread_id),
                    rollout_slug: Some(job.thread_id.clone()),
                },
            };
            assert!(store.mark_stage_one_succeeded(job, &success).await.unwrap());
        }
        assert_eq!(
            thread_flags(&client).await,
            flags(&["live"], &["done", "lagging", "expired", "free"])
        );
        // Once the live job's lease runs out, it is reclaimed.
        let job = store
            .claim_next_stage_one_job(&params, NOW + 700)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(job.thread_id, "live");
        assert!(
            store
                .claim_next_stage_one_job(&params, NOW + 700)
                .await
                .unwrap()
                .is_none()
        );
        client
            .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .unwrap();
    }
}
