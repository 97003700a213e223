//! The goal tables on a PostgreSQL server (feature `postgres`): one set of goals for every
//! machine of a fleet.
//!
//! The tables, checks and rules are SQLite's, in PostgreSQL's types. Exclusion differs: each
//! write transaction first takes a transaction-scoped advisory lock on its thread
//! ([`postgres_locks::GOAL_THREAD_CLASS`] and a hash of the thread id), so writers of one
//! thread's goal serialize as on SQLite while other threads' writers run alongside. Migrations
//! run under the migration lock every owner takes and are versioned in `schema_versions` under
//! `goal-steering`.
//!
//! The client is blocking (the `postgres` crate drives its own small runtime), like the SQLite
//! store, so an async host calls the store, and drops it, from a blocking task or outside its
//! runtime (`spawn_blocking`): tokio refuses, with a panic, to start that small runtime on one
//! of its async threads, and closing the connection on drop starts it too.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use memory_protocol::goal::{GoalTurnRecord, ThreadGoalStatus};
use memory_protocol::names::postgres_locks;
use memory_protocol::names::schema_owners::GOAL_STEERING;
use memory_protocol::names::tables::{GOAL_TURNS, SCHEMA_VERSIONS, THREAD_GOALS};
use postgres::{Client, NoTls, Row, Transaction};

use super::GoalRow;
use super::backend::{
    COLUMNS, Charge, GoalTx, SqlTypes, status_from_sql, status_to_sql, tables_v1, trigger_to_sql,
    turn_error_to_sql,
};
use crate::audit::BlockerAuditState;
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

/// One migration per schema version; index `i` brings the tables to version `i + 1`. Version
/// 1 is SQLite's version 1 in PostgreSQL's types.
fn migrations() -> [String; 1] {
    [tables_v1(&SqlTypes {
        int: "BIGINT",
        flag: "BOOLEAN",
        no: "FALSE",
    })]
}

/// A connection to the server holding the goal tables.
pub(super) struct PgGoals {
    /// Behind a lock because reads take `&self` while the client needs `&mut`.
    client: Mutex<Client>,
    config: postgres::Config,
    /// The server as shown in messages (the password redacted).
    display_url: String,
}

impl PgGoals {
    /// Connects to `url` and brings the goal tables up to date.
    pub(super) fn connect(url: &str, options: &PgGoalOptions) -> Result<PgGoals> {
        let display_url = memory_sanitize::redact_secrets(url).into_owned();
        let mut config: postgres::Config = url.parse().map_err(|error| Error::StoreUrl {
            url: display_url.clone(),
            message: format!("{error}"),
        })?;
        config.connect_timeout(options.connect_timeout);
        config.application_name("agent-memory");
        if let Some(schema) = &options.schema {
            if !valid_identifier(schema) {
                return Err(Error::StoreUrl {
                    url: display_url,
                    message: format!(
                        "schema name {schema:?} is not lowercase letters, digits and _"
                    ),
                });
            }
            config.options(&format!("-c search_path={schema}"));
        }
        let mut client = connect(&config, &display_url)?;
        if let Some(schema) = &options.schema {
            client.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))?;
        }
        migrate(&mut client)?;
        Ok(PgGoals {
            client: Mutex::new(client),
            config,
            display_url,
        })
    }

    pub(super) fn display_url(&self) -> &str {
        &self.display_url
    }

    /// The connection, opened again when the server closed it (a restart, a dropped link).
    fn client(&self) -> Result<MutexGuard<'_, Client>> {
        // A panic while holding the lock left at worst a transaction the server rolled back.
        let mut client = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if client.is_closed() {
            *client = connect(&self.config, &self.display_url)?;
        }
        Ok(client)
    }

    pub(super) fn schema_version(&self) -> Result<i64> {
        Ok(self
            .client()?
            .query_opt(
                &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = $1"),
                &[&GOAL_STEERING],
            )?
            .map_or(0, |row| row.get(0)))
    }

    pub(super) fn read_row(&self, thread_id: &str) -> Result<Option<GoalRow>> {
        let row = self.client()?.query_opt(
            &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} WHERE thread_id = $1"),
            &[&thread_id],
        )?;
        row.map(|row| row_from_sql(&row)).transpose()
    }

    pub(super) fn list_rows(&self) -> Result<Vec<GoalRow>> {
        let rows = self.client()?.query(
            &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} ORDER BY thread_id"),
            &[],
        )?;
        rows.iter().map(row_from_sql).collect()
    }

    /// Starts a write transaction holding the thread's lock.
    pub(super) fn begin(&mut self, thread_id: &str) -> Result<Box<dyn GoalTx + '_>> {
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if client.is_closed() {
            *client = connect(&self.config, &self.display_url)?;
        }
        let mut tx = client.transaction()?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&postgres_locks::GOAL_THREAD_CLASS, &thread_id],
        )?;
        Ok(Box::new(PgTx(tx)))
    }
}

fn connect(config: &postgres::Config, display_url: &str) -> Result<Client> {
    config.connect(NoTls).map_err(|error| Error::Unreachable {
        url: display_url.to_owned(),
        message: error_message(&error),
    })
}

/// The driver's error with its cause: for a failed connection the cause (refused, timed out,
/// authentication) is what a user needs.
fn error_message(error: &postgres::Error) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}

fn valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63
}

/// Brings the goal tables up to date under the migration lock, or refuses tables written by
/// a newer build.
fn migrate(client: &mut Client) -> Result<()> {
    let migrations = migrations();
    let supported = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    let mut tx = client.transaction()?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&postgres_locks::MIGRATION],
    )?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {SCHEMA_VERSIONS} (
            owner TEXT PRIMARY KEY,
            version BIGINT NOT NULL
        )"
    ))?;
    let found: i64 = tx
        .query_opt(
            &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = $1"),
            &[&GOAL_STEERING],
        )?
        .map_or(0, |row| row.get(0));
    if found > supported {
        return Err(Error::SchemaTooNew { found, supported });
    }
    for (index, sql) in migrations.iter().enumerate() {
        let version = i64::try_from(index + 1).unwrap_or(i64::MAX);
        if version > found {
            tx.batch_execute(sql)?;
        }
    }
    if supported > found {
        tx.execute(
            &format!(
                "INSERT INTO {SCHEMA_VERSIONS} (owner, version) VALUES ($1, $2)
                 ON CONFLICT (owner) DO UPDATE SET version = excluded.version"
            ),
            &[&GOAL_STEERING, &supported],
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn row_from_sql(row: &Row) -> Result<GoalRow> {
    let status: String = row.try_get(3)?;
    let status = status_from_sql(&status).ok_or(Error::CorruptStatus(status))?;
    let count = |index: usize| -> Result<u32> {
        let value: i64 = row.try_get(index)?;
        Ok(u32::try_from(value).unwrap_or(u32::MAX))
    };
    Ok(GoalRow {
        thread_id: row.try_get(0)?,
        goal_id: row.try_get(1)?,
        objective: row.try_get(2)?,
        status,
        status_reason: row.try_get(4)?,
        token_budget: row.try_get(5)?,
        tokens_used: row.try_get(6)?,
        time_used_seconds: row.try_get(7)?,
        created_at_ms: row.try_get(8)?,
        updated_at_ms: row.try_get(9)?,
        audit: BlockerAuditState {
            key: row.try_get(10)?,
            reason: row.try_get(11)?,
            reports: count(12)?,
            reported_this_turn: row.try_get(13)?,
        },
        turn_goal_tool_calls: row.try_get(14)?,
        turn_refused_goal_tool_calls: row.try_get(15)?,
        idle_continuations: count(16)?,
        objective_notice_pending: row.try_get(17)?,
        budget_notice_pending: row.try_get(18)?,
        continuations_issued: row.try_get(19)?,
        last_continuation_at_ms: row.try_get(20)?,
    })
}

/// A transaction holding one thread's lock.
struct PgTx<'client>(Transaction<'client>);

impl GoalTx for PgTx<'_> {
    fn read_row(&mut self, thread_id: &str) -> Result<Option<GoalRow>> {
        let row = self.0.query_opt(
            &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} WHERE thread_id = $1"),
            &[&thread_id],
        )?;
        row.map(|row| row_from_sql(&row)).transpose()
    }

    fn write_row(&mut self, row: &GoalRow) -> Result<()> {
        self.0.execute(
            &format!(
                "UPDATE {THREAD_GOALS} SET objective = $3, status = $4, status_reason = $5,
                    token_budget = $6, tokens_used = $7, time_used_seconds = $8,
                    updated_at_ms = $9, blocker_key = $10, blocker_reason = $11,
                    blocker_reports = $12, blocker_reported_this_turn = $13,
                    turn_goal_tool_calls = $14, turn_refused_goal_tool_calls = $15,
                    idle_continuations = $16, objective_notice_pending = $17,
                    budget_notice_pending = $18, continuations_issued = $19,
                    last_continuation_at_ms = $20
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
            ],
        )?;
        Ok(())
    }

    fn insert_row(&mut self, row: &GoalRow) -> Result<()> {
        self.0.execute(
            &format!("DELETE FROM {GOAL_TURNS} WHERE thread_id = $1"),
            &[&row.thread_id],
        )?;
        self.0.execute(
            &format!("DELETE FROM {THREAD_GOALS} WHERE thread_id = $1"),
            &[&row.thread_id],
        )?;
        self.0.execute(
            &format!(
                "INSERT INTO {THREAD_GOALS} (thread_id, goal_id, objective, status, token_budget,
                    created_at_ms, updated_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)"
            ),
            &[
                &row.thread_id,
                &row.goal_id,
                &row.objective,
                &status_to_sql(row.status),
                &row.token_budget,
                &row.created_at_ms,
                &row.updated_at_ms,
            ],
        )?;
        Ok(())
    }

    fn delete_goal(&mut self, goal_id: &str) -> Result<()> {
        self.0.execute(
            &format!("DELETE FROM {GOAL_TURNS} WHERE goal_id = $1"),
            &[&goal_id],
        )?;
        self.0.execute(
            &format!("DELETE FROM {THREAD_GOALS} WHERE goal_id = $1"),
            &[&goal_id],
        )?;
        Ok(())
    }

    fn turn_count(&mut self, goal_id: &str) -> Result<i64> {
        Ok(self
            .0
            .query_one(
                &format!("SELECT count(*) FROM {GOAL_TURNS} WHERE goal_id = $1"),
                &[&goal_id],
            )?
            .try_get(0)?)
    }

    fn turn_recorded(&mut self, goal_id: &str, turn_id: &str) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                &format!("SELECT 1 FROM {GOAL_TURNS} WHERE goal_id = $1 AND turn_id = $2"),
                &[&goal_id, &turn_id],
            )?
            .is_some())
    }

    fn charge(&mut self, charge: &Charge<'_>) -> Result<ThreadGoalStatus> {
        let row = self.0.query_one(
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
            &[
                &charge.thread_id,
                &charge.goal_id,
                &charge.tokens,
                &charge.seconds,
                &charge.budget_limit_reason,
                &charge.now_ms,
            ],
        )?;
        let status: String = row.try_get(0)?;
        status_from_sql(&status).ok_or(Error::CorruptStatus(status))
    }

    fn insert_turn(
        &mut self,
        thread_id: &str,
        seq: i64,
        turn: &GoalTurnRecord,
        recorded_at_ms: i64,
    ) -> Result<()> {
        self.0.execute(
            &format!(
                "INSERT INTO {GOAL_TURNS} (goal_id, turn_id, thread_id, seq, trigger, plan_mode,
                    input_tokens, cached_input_tokens, output_tokens, tokens_charged, seconds,
                    tool_calls, goal_tool_calls, refused_goal_tool_calls, error_kind, status_after,
                    recorded_at_ms)
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
        )?;
        Ok(())
    }

    fn commit(self: Box<Self>) -> Result<()> {
        self.0.commit()?;
        Ok(())
    }
}
