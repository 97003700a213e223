//! The goal tables on a PostgreSQL server (feature `postgres`): one set of goals for every
//! machine of a fleet.
//!
//! The tables, checks and rules are SQLite's, in PostgreSQL's types (defined once, rendered per
//! dialect). Exclusion differs: each write transaction first takes a transaction-scoped
//! advisory lock on its thread ([`postgres_locks::GOAL_THREAD_CLASS`] and a hash of the thread
//! id), so writers of one thread's goal serialize as on SQLite while other threads' writers run
//! alongside. Connections come from `memory-store`'s pool (tokio-postgres + deadpool) and the
//! tables are migrated by its migrator, like every owner's.
//!
//! The store's API is synchronous, like the SQLite store's. Its async calls run on a small
//! runtime the store owns ([`Bridge`]); the calling thread only waits on a channel for the
//! answer, never enters a runtime, so the store can be called (and dropped) anywhere: from
//! plain threads, from a blocking task, or from inside a tokio worker, which then waits as it
//! would on SQLite's busy timeout.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use memory_protocol::goal::ThreadGoalStatus;
use memory_store::ddl::Dialect;
use memory_store::migrate::{migrate_postgres, postgres_version};
use memory_store::names::postgres_locks;
use memory_store::names::schema_owners::GOAL_STEERING;
use memory_store::names::tables::{GOAL_TURNS, THREAD_GOALS};
use memory_store::postgres::{PgClient, PgOptions, PgPool};

use super::backend::{
    COLUMNS, Charge, GoalTx, TurnInsert, archive_statement, goal_row, status_from_sql,
    status_to_sql, tables_v1, tables_v2, trigger_to_sql, turn_error_to_sql,
};
use super::{BUDGET_LIMIT_REASON, GoalRow};
use crate::error::{Error, Result};

/// How to reach and lay out the goal tables on a PostgreSQL server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgGoalOptions {
    /// Keep the tables in this schema (created when missing) instead of the connection's
    /// default, as the write path's store does. Lowercase letters, digits and `_` only.
    pub schema: Option<String>,
    /// How long to wait for the server before calling it unreachable.
    pub connect_timeout: Duration,
}

impl Default for PgGoalOptions {
    fn default() -> Self {
        PgGoalOptions {
            schema: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// Connections the goal store holds open at once: one for a write transaction, one for a read
/// beside it.
const POOL_SIZE: usize = 2;

/// One migration per schema version; index `i` brings the tables to version `i + 1`.
fn migrations() -> [String; 2] {
    [tables_v1(Dialect::Postgres), tables_v2(Dialect::Postgres)]
}

/// The runtime the store's async calls run on. The caller waits for each answer on a
/// channel, so it never blocks inside a runtime (tokio's panic when a runtime is entered, or
/// dropped, from one of its async threads cannot happen).
pub(super) struct Bridge {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Bridge {
    fn start() -> Result<Bridge> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("goal-store")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        Ok(Bridge {
            runtime: Some(runtime),
        })
    }

    /// Runs `call` on the store's runtime and waits for its answer.
    fn run<T, F>(&self, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let stopped = || Error::Runtime(std::io::Error::other("the goal store's runtime stopped"));
        let runtime = self.runtime.as_ref().ok_or_else(stopped)?;
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            // The receiver is gone only if the caller went away; nothing is left to tell.
            let _ = sender.send(call.await);
        });
        receiver.recv().map_err(|_| stopped())?
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // Not a blocking shutdown: dropping a runtime waits for its threads, which tokio
        // refuses (with a panic) on one of its async threads.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The goal tables on a server.
pub(super) struct PgGoals {
    // Declared before the bridge, so the pool (its connections) goes first.
    pool: PgPool,
    bridge: Bridge,
}

impl PgGoals {
    /// Connects to `url` and brings the goal tables up to date.
    pub(super) fn connect(url: &str, options: &PgGoalOptions) -> Result<PgGoals> {
        let bridge = Bridge::start()?;
        let url = url.to_owned();
        let options = PgOptions {
            pool_size: POOL_SIZE,
            schema: options.schema.clone(),
            connect_timeout: options.connect_timeout,
        };
        let pool = bridge.run(async move {
            let pool = PgPool::connect(&url, &options).await?;
            let migrations = migrations();
            let schema = super::sqlite::schema(&migrations);
            let mut client = pool.client().await?;
            migrate_postgres(&mut client, &schema).await?;
            Ok(pool)
        })?;
        Ok(PgGoals { pool, bridge })
    }

    pub(super) fn display_url(&self) -> &str {
        self.pool.display_url()
    }

    /// Runs `call` with a pooled connection on the store's runtime.
    fn with_client<T, F, Fut>(&self, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(PgClient) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send,
    {
        let pool = self.pool.clone();
        self.bridge
            .run(async move { call(pool.client().await?).await })
    }

    pub(super) fn schema_version(&self) -> Result<i64> {
        self.with_client(
            |client| async move { Ok(postgres_version(&client, GOAL_STEERING).await?) },
        )
    }

    pub(super) fn read_row(&self, thread_id: &str) -> Result<Option<GoalRow>> {
        let thread_id = thread_id.to_owned();
        self.with_client(|client| async move { read_row(&client, &thread_id).await })
    }

    pub(super) fn list_rows(&self) -> Result<Vec<GoalRow>> {
        self.with_client(|client| async move {
            let rows = client
                .query(
                    &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} ORDER BY thread_id"),
                    &[],
                )
                .await?;
            rows.iter().map(goal_row).collect()
        })
    }

    /// Starts a write transaction holding the thread's lock.
    pub(super) fn begin(&mut self, thread_id: &str) -> Result<Box<dyn GoalTx + '_>> {
        let thread_id = thread_id.to_owned();
        let client = self.with_client(|client| async move {
            client.batch_execute("BEGIN").await?;
            client
                .execute(
                    "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                    &[&postgres_locks::GOAL_THREAD_CLASS, &thread_id],
                )
                .await?;
            Ok(client)
        })?;
        Ok(Box::new(PgTx {
            bridge: &self.bridge,
            client: Some(Arc::new(client)),
        }))
    }
}

async fn read_row(client: &tokio_postgres::Client, thread_id: &str) -> Result<Option<GoalRow>> {
    let row = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} WHERE thread_id = $1"),
            &[&thread_id],
        )
        .await?;
    row.as_ref().map(goal_row).transpose()
}

/// A transaction holding one thread's lock, on one pooled connection. Dropped without a
/// commit, it rolls back.
struct PgTx<'store> {
    bridge: &'store Bridge,
    /// Shared with the call in flight on the store's runtime; `None` once committed.
    client: Option<Arc<PgClient>>,
}

impl PgTx<'_> {
    /// Runs `call` with the transaction's connection on the store's runtime.
    fn call<T, F, Fut>(&self, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Arc<PgClient>) -> Fut,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let client = self.client.as_ref().map(Arc::clone).ok_or_else(|| {
            Error::Runtime(std::io::Error::other("the goal transaction is finished"))
        })?;
        self.bridge.run(call(client))
    }
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let rollback = {
            let client = Arc::clone(&client);
            self.bridge
                .run(async move { Ok(client.batch_execute("ROLLBACK").await?) })
        };
        // A connection whose rollback failed may still be inside the transaction: it leaves
        // the pool instead of being handed to the next caller.
        if rollback.is_err()
            && let Ok(client) = Arc::try_unwrap(client)
        {
            drop(PgClient::take(client));
        }
    }
}

impl GoalTx for PgTx<'_> {
    fn read_row(&mut self, thread_id: &str) -> Result<Option<GoalRow>> {
        let thread_id = thread_id.to_owned();
        self.call(|client| async move { read_row(&client, &thread_id).await })
    }

    fn write_row(&mut self, row: &GoalRow) -> Result<()> {
        let row = row.clone();
        self.call(|client| async move {
            client
                .execute(
                    &format!(
                        "UPDATE {THREAD_GOALS} SET objective = $3, status = $4, status_reason = $5,
                    token_budget = $6, tokens_used = $7, time_used_seconds = $8,
                    updated_at_ms = $9, blocker_key = $10, blocker_reason = $11,
                    blocker_reports = $12, blocker_reported_this_turn = $13,
                    turn_goal_tool_calls = $14, turn_refused_goal_tool_calls = $15,
                    idle_continuations = $16, objective_notice_pending = $17,
                    budget_notice_pending = $18, continuations_issued = $19,
                    last_continuation_at_ms = $20, partial_turn_id = $21,
                    partial_turn_tokens = $22
                 WHERE thread_id = $1 AND goal_id = $2"
                    ),
                    &[
                        &row.thread_id,
                        &row.goal_id,
                        &row.objective,
                        &status_to_sql(row.status),
                        &row.status_reason,
                        &row.token_budget,
                        &row.tokens_used,
                        &row.time_used_seconds,
                        &row.updated_at_ms,
                        &row.audit.key,
                        &row.audit.reason,
                        &i64::from(row.audit.reports),
                        &row.audit.reported_this_turn,
                        &row.turn_goal_tool_calls,
                        &row.turn_refused_goal_tool_calls,
                        &i64::from(row.idle_continuations),
                        &row.objective_notice_pending,
                        &row.budget_notice_pending,
                        &row.continuations_issued,
                        &row.last_continuation_at_ms,
                        &row.partial_turn_id,
                        &row.partial_turn_tokens,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn insert_row(&mut self, row: &GoalRow, now_ms: i64) -> Result<()> {
        let row = row.clone();
        self.call(|client| async move {
            client
                .execute(
                    &archive_statement("thread_id = $1", "$2::BIGINT"),
                    &[&row.thread_id, &now_ms],
                )
                .await?;
            client
                .execute(
                    &format!("DELETE FROM {THREAD_GOALS} WHERE thread_id = $1"),
                    &[&row.thread_id],
                )
                .await?;
            client
                .execute(
                    &format!(
                        "INSERT INTO {THREAD_GOALS} (thread_id, goal_id, objective, status,
                            token_budget, tokens_used, time_used_seconds, created_at_ms,
                            updated_at_ms)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                    ),
                    &[
                        &row.thread_id,
                        &row.goal_id,
                        &row.objective,
                        &status_to_sql(row.status),
                        &row.token_budget,
                        &row.tokens_used,
                        &row.time_used_seconds,
                        &row.created_at_ms,
                        &row.updated_at_ms,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn archive_goal(&mut self, goal_id: &str, now_ms: i64) -> Result<()> {
        let goal_id = goal_id.to_owned();
        self.call(|client| async move {
            client
                .execute(
                    &archive_statement("goal_id = $1", "$2::BIGINT"),
                    &[&goal_id, &now_ms],
                )
                .await?;
            client
                .execute(
                    &format!("DELETE FROM {THREAD_GOALS} WHERE goal_id = $1"),
                    &[&goal_id],
                )
                .await?;
            Ok(())
        })
    }

    fn turn_count(&mut self, goal_id: &str) -> Result<i64> {
        let goal_id = goal_id.to_owned();
        self.call(|client| async move {
            Ok(client
                .query_one(
                    &format!("SELECT count(*) FROM {GOAL_TURNS} WHERE goal_id = $1"),
                    &[&goal_id],
                )
                .await?
                .try_get(0)?)
        })
    }

    fn turn_recorded(&mut self, goal_id: &str, turn_id: &str) -> Result<bool> {
        let (goal_id, turn_id) = (goal_id.to_owned(), turn_id.to_owned());
        self.call(|client| async move {
            Ok(client
                .query_opt(
                    &format!("SELECT 1 FROM {GOAL_TURNS} WHERE goal_id = $1 AND turn_id = $2"),
                    &[&goal_id, &turn_id],
                )
                .await?
                .is_some())
        })
    }

    fn charge(&mut self, charge: &Charge<'_>) -> Result<ThreadGoalStatus> {
        let (thread_id, goal_id) = (charge.thread_id.to_owned(), charge.goal_id.to_owned());
        let reason = BUDGET_LIMIT_REASON;
        let (tokens, seconds, now_ms) = (charge.tokens, charge.seconds, charge.now_ms);
        self.call(|client| async move {
            let row = client
                .query_one(
                    &format!(
                        "UPDATE {THREAD_GOALS} SET
                    tokens_used = LEAST(tokens_used, 9223372036854775807 - $3) + $3,
                    time_used_seconds = LEAST(time_used_seconds, 9223372036854775807 - $4) + $4,
                    status = CASE WHEN status = 'active' AND token_budget IS NOT NULL
                        AND LEAST(tokens_used, 9223372036854775807 - $3) + $3 >= token_budget
                        THEN 'budget_limited' ELSE status END,
                    status_reason = CASE WHEN status = 'active' AND token_budget IS NOT NULL
                        AND LEAST(tokens_used, 9223372036854775807 - $3) + $3 >= token_budget
                        THEN $5 ELSE status_reason END,
                    budget_notice_pending = CASE WHEN status = 'active'
                        AND token_budget IS NOT NULL
                        AND LEAST(tokens_used, 9223372036854775807 - $3) + $3 >= token_budget
                        THEN TRUE ELSE budget_notice_pending END,
                    updated_at_ms = $6
                 WHERE thread_id = $1 AND goal_id = $2
                 RETURNING status"
                    ),
                    &[&thread_id, &goal_id, &tokens, &seconds, &reason, &now_ms],
                )
                .await?;
            let status: String = row.try_get(0)?;
            status_from_sql(&status).ok_or(Error::CorruptStatus(status))
        })
    }

    fn insert_turn(&mut self, insert: &TurnInsert<'_>) -> Result<()> {
        let thread_id = insert.thread_id.to_owned();
        let turn = insert.turn.clone();
        let (seq, recorded_at_ms) = (insert.seq, insert.recorded_at_ms);
        self.call(|client| async move {
            client
                .execute(
                    &format!(
                        "INSERT INTO {GOAL_TURNS} (goal_id, turn_id, thread_id, seq, trigger,
                    plan_mode, input_tokens, cached_input_tokens, output_tokens, tokens_charged,
                    seconds, tool_calls, goal_tool_calls, refused_goal_tool_calls, error_kind,
                    status_after, recorded_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
                    ),
                    &[
                        &turn.goal_id,
                        &turn.turn_id,
                        &thread_id,
                        &seq,
                        &trigger_to_sql(turn.trigger),
                        &turn.plan_mode,
                        &turn.input_tokens,
                        &turn.cached_input_tokens,
                        &turn.output_tokens,
                        &turn.tokens_charged,
                        &turn.seconds,
                        &turn.tool_calls,
                        &turn.goal_tool_calls,
                        &turn.refused_goal_tool_calls,
                        &turn.error.map(turn_error_to_sql),
                        &status_to_sql(turn.status_after),
                        &recorded_at_ms,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn commit(mut self: Box<Self>) -> Result<()> {
        let result = self.call(|client| async move { Ok(client.batch_execute("COMMIT").await?) });
        if result.is_ok() {
            // Committed: nothing for the drop to roll back.
            self.client = None;
        }
        result
    }
}
