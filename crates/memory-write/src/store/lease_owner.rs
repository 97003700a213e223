//! Who holds a lease, and whether that process still exists.
//!
//! Every lease (a stage-one job, the phase-2 lease) records its owner: the host name, the
//! process id, and the process's start identity (on Linux: the boot id, the pid namespace and
//! the start time in clock ticks, so a reused process id is not mistaken for the owner). A claim
//! that meets a live lease whose owner ran on this host, in this boot and pid namespace, and is
//! gone (no such process, a zombie, or another process under the same id) takes the lease at
//! once instead of waiting for it to expire. Leases of other hosts, and of owners whose
//! liveness cannot be told, keep the expiry rule.
//!
//! A process that is told to stop (Ctrl-C, SIGTERM) gives its leases back with
//! [`WriteStore::release_leases_of_this_process`](super::WriteStore::release_leases_of_this_process).

use std::sync::OnceLock;

use memory_store::ddl::Dialect;
use memory_store::names::tables::{PHASE_TWO_LEASE, STAGE_ONE_JOBS};
use rusqlite::{Transaction, params};

use super::Db;
use super::stage_one::reclaim_statement;
use crate::error::Result;

/// The process a lease belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseOwner {
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// The process's start identity (boot, pid namespace and start time), when the platform
    /// tells it; `None` elsewhere.
    pub started: Option<String>,
}

impl LeaseOwner {
    /// The current process.
    pub fn current() -> LeaseOwner {
        static CURRENT: OnceLock<LeaseOwner> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                let pid = std::process::id();
                LeaseOwner {
                    host: host_name(),
                    pid,
                    started: process_start(pid),
                }
            })
            .clone()
    }

    /// Process `pid` of this host, with its start identity when the platform tells it (`None`
    /// too when no such process runs).
    pub fn of_process(pid: u32) -> LeaseOwner {
        LeaseOwner {
            host: host_name(),
            pid,
            started: process_start(pid),
        }
    }

    /// Whether the owner `(host, pid, started)` of a stored lease is known to be gone, judged
    /// from this process. False when it lives, runs elsewhere, or cannot be told.
    pub fn is_gone(&self, host: &str, pid: u32, started: Option<&str>) -> bool {
        if host != self.host || (pid == self.pid && started == self.started.as_deref()) {
            return false;
        }
        liveness(&self.started, pid, started) == Liveness::Gone
    }
}

/// What this process can tell about another process on its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Liveness {
    Alive,
    Gone,
    Unknown,
}

/// The part of a start identity that says which boot and pid namespace it belongs to.
#[cfg(target_os = "linux")]
fn scope(started: &str) -> Option<&str> {
    started.rsplit_once(':').map(|(scope, _)| scope)
}

#[cfg(target_os = "linux")]
fn liveness(me: &Option<String>, pid: u32, started: Option<&str>) -> Liveness {
    // Only a start identity from this boot and pid namespace can be compared with /proc.
    let (Some(mine), Some(theirs)) = (me.as_deref(), started) else {
        return Liveness::Unknown;
    };
    if scope(mine).is_none() || scope(mine) != scope(theirs) {
        return Liveness::Unknown;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Liveness::Gone,
        Err(_) => Liveness::Unknown,
        Ok(stat) => match parse_stat(&stat) {
            // A zombie or a dead task holds nothing; another start time is another process.
            Some((state, _)) if state == 'Z' || state == 'X' => Liveness::Gone,
            Some((_, start_ticks)) => {
                let now = scope(mine).map(|scope| format!("{scope}:{start_ticks}"));
                if now.as_deref() == Some(theirs) {
                    Liveness::Alive
                } else {
                    Liveness::Gone
                }
            }
            None => Liveness::Unknown,
        },
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn liveness(_me: &Option<String>, pid: u32, _started: Option<&str>) -> Liveness {
    // Without a start time a reused id looks alive: the lease then waits for its expiry.
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return Liveness::Unknown;
    };
    match rustix::process::test_kill_process(pid) {
        Err(rustix::io::Errno::SRCH) => Liveness::Gone,
        Ok(()) | Err(rustix::io::Errno::PERM) => Liveness::Alive,
        Err(_) => Liveness::Unknown,
    }
}

#[cfg(not(unix))]
fn liveness(_me: &Option<String>, _pid: u32, _started: Option<&str>) -> Liveness {
    Liveness::Unknown
}

/// `(state, start time in clock ticks)` from the text of `/proc/<pid>/stat`. The command name
/// (field 2) may hold spaces and parentheses, so fields are counted after its last `)`.
#[cfg(target_os = "linux")]
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Field 3 is the state; the start time is field 22.
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

#[cfg(target_os = "linux")]
fn process_start(pid: u32) -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, start) = parse_stat(&stat)?;
    Some(format!(
        "{}:{}:{start}",
        boot.trim(),
        namespace.to_string_lossy()
    ))
}

#[cfg(not(target_os = "linux"))]
fn process_start(_pid: u32) -> Option<String> {
    None
}

#[cfg(unix)]
fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[cfg(not(unix))]
fn host_name() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

/// What [`WriteStore::release_leases_of_this_process`](super::WriteStore::release_leases_of_this_process) gave back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReleasedLeases {
    /// Stage-one jobs, now pending again without a spent attempt.
    pub jobs: usize,
    /// Whether the phase-2 lease was held and given back.
    pub phase_two: bool,
}

impl Db {
    /// Gives back every lease this process holds on this database (stage-one jobs go back to
    /// pending without spending an attempt; the phase-2 lease is released without a pass), and
    /// stops this store from claiming more stage-one jobs. For a process told to stop: the next
    /// run, here or elsewhere, takes the work at once.
    pub(super) fn release_leases_of_this_process(&mut self) -> Result<ReleasedLeases> {
        self.claims_closed = true;
        let owner = self.owner.clone();
        let tx = self.conn.transaction()?;
        let jobs = tx.execute(
            &format!(
                "UPDATE {STAGE_ONE_JOBS} SET status = 'pending', owner_token = NULL,
                    lease_expires_at = NULL, retry_after_at = NULL,
                    last_error = 'interrupted before finishing'
                 WHERE status = 'running' AND owner_host = ?1 AND owner_pid = ?2
                    AND owner_started IS ?3"
            ),
            params![owner.host, owner.pid, owner.started],
        )?;
        let phase_two = tx.execute(
            &format!(
                "UPDATE {PHASE_TWO_LEASE}
                 SET status = 'pending', owner_token = NULL, lease_expires_at = NULL
                 WHERE id = 1 AND status = 'running' AND owner_host = ?1 AND owner_pid = ?2
                    AND owner_started IS ?3"
            ),
            params![owner.host, owner.pid, owner.started],
        )?;
        tx.commit()?;
        Ok(ReleasedLeases {
            jobs,
            phase_two: phase_two > 0,
        })
    }

    /// Stage-one jobs held under a live lease by a process of this host that is gone, made
    /// claimable at once (pending, no attempt spent). Returns how many. Claims do this
    /// themselves; a caller may do it first so that counting candidates sees those jobs too.
    pub(super) fn reclaim_jobs_of_gone_owners(&mut self, now: i64) -> Result<usize> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let reclaimed = reclaim_gone_jobs(&tx, &self.owner, now)?;
        tx.commit()?;
        Ok(reclaimed)
    }
}

/// See `Db::reclaim_jobs_of_gone_owners`; inside the caller's transaction.
pub(super) fn reclaim_gone_jobs(tx: &Transaction<'_>, me: &LeaseOwner, now: i64) -> Result<usize> {
    let held: Vec<(String, String, u32, Option<String>)> = {
        let mut statement = tx.prepare_cached(&format!(
            "SELECT thread_id, owner_token, owner_pid, owner_started FROM {STAGE_ONE_JOBS}
             WHERE status = 'running' AND lease_expires_at > ?1 AND owner_host = ?2
                AND owner_pid IS NOT NULL AND owner_token IS NOT NULL"
        ))?;
        let rows = statement.query_map(params![now, me.host], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut reclaimed = 0;
    for (thread_id, token, pid, started) in held {
        if me.is_gone(&me.host, pid, started.as_deref()) {
            reclaimed += tx.execute(
                &reclaim_statement(Dialect::Sqlite),
                params![thread_id, token],
            )?;
        }
    }
    Ok(reclaimed)
}

/// Records `owner` on the stage-one job of `thread_id` (just claimed, same transaction).
pub(super) fn record_job_owner(
    tx: &Transaction<'_>,
    thread_id: &str,
    owner: &LeaseOwner,
) -> Result<()> {
    tx.execute(
        &format!(
            "UPDATE {STAGE_ONE_JOBS} SET owner_host = ?2, owner_pid = ?3, owner_started = ?4
             WHERE thread_id = ?1"
        ),
        params![thread_id, owner.host, owner.pid, owner.started],
    )?;
    Ok(())
}

/// Ends a live phase-2 lease whose owner on this host is gone (its expiry becomes `now`), so
/// the claim in progress treats it as expired. Inside the claim's transaction.
pub(super) fn expire_gone_phase_two_owner(
    tx: &Transaction<'_>,
    me: &LeaseOwner,
    now: i64,
) -> Result<bool> {
    let holder: Option<(String, u32, Option<String>)> = tx
        .query_row(
            &format!(
                "SELECT owner_host, owner_pid, owner_started FROM {PHASE_TWO_LEASE}
                 WHERE id = 1 AND status = 'running' AND lease_expires_at > ?1
                    AND owner_host IS NOT NULL AND owner_pid IS NOT NULL"
            ),
            [now],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .map(Some)
        .or_else(|error| match error {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            other => Err(other),
        })?;
    let Some((host, pid, started)) = holder else {
        return Ok(false);
    };
    if !me.is_gone(&host, pid, started.as_deref()) {
        return Ok(false);
    }
    tx.execute(
        &format!("UPDATE {PHASE_TWO_LEASE} SET lease_expires_at = ?1 WHERE id = 1"),
        [now],
    )?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_never_gone_and_another_host_is_never_judged() {
        let me = LeaseOwner::current();
        assert!(!me.host.is_empty());
        assert!(!me.is_gone(&me.host, me.pid, me.started.as_deref()));
        assert!(!me.is_gone("some-other-host", u32::MAX - 1, None));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_exited_process_and_a_reused_pid_are_gone() {
        let me = LeaseOwner::current();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let started = process_start(pid);
        child.wait().unwrap();
        assert!(me.is_gone(&me.host, pid, started.as_deref()));
        // This process under a different start time: the id was reused.
        let mine = me.started.clone().unwrap();
        let (scope, _) = mine.rsplit_once(':').unwrap();
        assert!(me.is_gone(&me.host, me.pid, Some(&format!("{scope}:1"))));
        // Another boot or namespace cannot be judged from here.
        assert!(!me.is_gone(&me.host, pid, Some("other-boot:pid:[1]:5")));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 \
                    1000 10 18446744073709551615";
        assert_eq!(parse_stat(stat), Some(('S', 98765)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
