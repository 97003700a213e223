//! Goals on a PostgreSQL server: what only a shared store can show (several machines on one
//! set of goals, a server that is down or newer than this build). The rest of the suite runs
//! on PostgreSQL too when `AGENT_MEMORY_TEST_PG_URL` is set (`on_every_backend`).

use std::time::Duration;

use goal_steering::{Error, GoalConfig, GoalStore, PgGoalOptions};
use memory_protocol::goal::{GoalSteeringKind, ThreadGoalStatus};
use memory_store::names::schema_owners::GOAL_STEERING;
use memory_store::names::tables::SCHEMA_VERSIONS;

use super::{Db, THREAD, answered, continuation_turn, record, set, update_goal};

#[test]
fn a_goal_set_on_one_machine_is_charged_steered_and_finished_from_another() {
    let Some(db) = Db::postgres() else { return };
    let mut laptop = db.open(GoalConfig::default());
    let mut runner = db.open(GoalConfig::default());
    let goal = set(&mut laptop, "migrate the billing service", Some(1_000));

    // The runner sees the goal the laptop set, and its steering.
    assert_eq!(runner.get(THREAD).unwrap().unwrap(), goal);
    let steering = runner.next_steering(THREAD).unwrap().unwrap();
    assert_eq!(steering.kind, GoalSteeringKind::Continuation);
    let charged = record(&mut runner, &continuation_turn(400, 2));
    assert_eq!(charged.goal.tokens_used, 400);

    // The laptop sees the runner's charge, and the goal ends there.
    assert_eq!(laptop.get(THREAD).unwrap().unwrap().tokens_used, 400);
    let done = answered(update_goal(
        &mut laptop,
        "complete",
        Some("all callers moved"),
    ));
    assert_eq!(done.goal.unwrap().status, ThreadGoalStatus::Complete);
    assert_eq!(
        runner.get(THREAD).unwrap().unwrap().status,
        ThreadGoalStatus::Complete
    );
    assert_eq!(runner.list().unwrap().len(), 1);

    // Clearing on one clears for all.
    runner.clear(THREAD, Some(&goal.goal_id)).unwrap();
    assert_eq!(laptop.get(THREAD).unwrap(), None);
    assert!(laptop.shared_url().unwrap().starts_with("postgres://"));
    assert_eq!(laptop.path(), std::path::Path::new(""));
}

#[test]
fn an_unreachable_server_is_a_clear_error_that_hides_the_password() {
    let options = PgGoalOptions {
        connect_timeout: Duration::from_secs(2),
        ..PgGoalOptions::default()
    };
    // Port 1 on loopback: nothing listens there.
    let error = GoalStore::connect(
        "postgres://agent:hunter2-not-shown@127.0.0.1:1/memory",
        &options,
        GoalConfig::default(),
    )
    .unwrap_err();
    assert!(
        matches!(error, Error::Store(memory_store::Error::Unreachable { .. })),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("goal store: cannot reach postgres://"),
        "{message}"
    );
    assert!(message.contains("127.0.0.1:1/memory"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}

#[test]
fn a_malformed_url_or_schema_name_is_refused_before_connecting() {
    let error = GoalStore::connect(
        "postgres://a@b:notaport/c",
        &PgGoalOptions::default(),
        GoalConfig::default(),
    )
    .unwrap_err();
    assert!(
        matches!(error, Error::Store(memory_store::Error::StoreUrl { .. })),
        "{error:?}"
    );
    let options = PgGoalOptions {
        schema: Some("goals; DROP TABLE x".to_owned()),
        ..PgGoalOptions::default()
    };
    let error = GoalStore::connect(
        "postgres://a@127.0.0.1:1/c",
        &options,
        GoalConfig::default(),
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("is not lowercase letters"),
        "{error}"
    );
}

#[test]
fn goal_tables_written_by_a_newer_build_are_refused() {
    let Some(db) = Db::postgres() else { return };
    let store = db.open(GoalConfig::default());
    assert_eq!(store.schema_version().unwrap(), 2);
    drop(store);
    let Db::Postgres { url, schema } = &db else {
        unreachable!("Db::postgres gives a PostgreSQL database")
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .execute(
                &format!("UPDATE {schema}.{SCHEMA_VERSIONS} SET version = 99 WHERE owner = $1"),
                &[&GOAL_STEERING],
            )
            .await
            .unwrap();
    });
    let options = PgGoalOptions {
        schema: Some(schema.clone()),
        ..PgGoalOptions::default()
    };
    let error = GoalStore::connect(url, &options, GoalConfig::default()).unwrap_err();
    assert!(
        matches!(
            error,
            Error::Store(memory_store::Error::SchemaTooNew {
                found: 99,
                supported: 2,
                ..
            })
        ),
        "{error:?}"
    );
}

/// The store's API is synchronous; a host calling it from inside a tokio runtime (on a worker
/// thread, or the only thread of a current-thread runtime) gets answers, and dropping the store
/// there is fine too.
fn used_and_dropped_inside_a_runtime(db: &Db) {
    let mut store = db.open(GoalConfig::default());
    let goal = set(&mut store, "ship from an async host", Some(1_000));
    let charged = record(&mut store, &continuation_turn(300, 1));
    assert_eq!(charged.goal.tokens_used, 300);
    assert_eq!(store.get(THREAD).unwrap().unwrap().goal_id, goal.goal_id);
    drop(store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sync_api_works_from_a_tokio_worker_thread() {
    let Some(db) = Db::postgres() else { return };
    used_and_dropped_inside_a_runtime(&db);
}

#[tokio::test(flavor = "current_thread")]
async fn the_sync_api_works_on_a_current_thread_runtime() {
    let Some(db) = Db::postgres() else { return };
    used_and_dropped_inside_a_runtime(&db);
}
