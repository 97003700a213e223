//! Opening the shared state file, setting goals, validation and the config table.

use std::time::Duration;

use goal_steering::{Error, GoalConfig, GoalStore, NewGoal, STATE_FILE_NAME};
use memory_config::{Config, Origin};
use memory_protocol::goal::ThreadGoalStatus;

use super::on_every_backend;
use super::{THREAD, record, set, store, user_turn};

fn new_goal(objective: &str, budget: Option<i64>, replace: bool) -> NewGoal {
    NewGoal {
        objective: objective.to_owned(),
        token_budget: budget,
        replace,
        expected_goal_id: None,
    }
}

#[test]
fn the_store_keeps_its_version_per_owner_and_never_touches_user_version() {
    let home = tempfile::tempdir().unwrap();
    let store = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    assert_eq!(store.path(), home.path().join(STATE_FILE_NAME));
    assert_eq!(store.schema_version().unwrap(), 2);
    drop(store);
    let pragmas = user_version_and_journal_mode(&home.path().join(STATE_FILE_NAME));
    assert_eq!(pragmas, (0, "wal".to_owned()));
    // Opening again migrates nothing and keeps the version.
    let store = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    assert_eq!(store.schema_version().unwrap(), 2);
}

/// `PRAGMA user_version` and the journal mode of the file, read through a connection of its
/// own (the goal store exposes neither).
fn user_version_and_journal_mode(path: &std::path::Path) -> (i64, String) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let version = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    let mode = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    (version, mode)
}

#[test]
fn a_newer_schema_is_refused() {
    let home = tempfile::tempdir().unwrap();
    drop(GoalStore::open_home(home.path(), GoalConfig::default()).unwrap());
    let conn = rusqlite::Connection::open(home.path().join(STATE_FILE_NAME)).unwrap();
    conn.execute(
        "UPDATE schema_versions SET version = 9 WHERE owner = 'goal-steering'",
        [],
    )
    .unwrap();
    let error = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "goal store: schema version 9 of the goal-steering tables is newer than this build \
         supports (2)"
    );
}

#[test]
fn a_status_this_build_does_not_know_is_a_corrupt_status() {
    let home = tempfile::tempdir().unwrap();
    let mut store = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    set(&mut store, "ship it", None);
    // Another program's row: the table's own check would refuse the status.
    let conn = rusqlite::Connection::open(home.path().join(STATE_FILE_NAME)).unwrap();
    conn.execute_batch(
        "PRAGMA ignore_check_constraints = ON; UPDATE thread_goals SET status = 'abandoned'",
    )
    .unwrap();
    let error = store.get(THREAD).unwrap_err();
    assert!(matches!(&error, Error::CorruptStatus(status) if status == "abandoned"));
    assert_eq!(
        error.to_string(),
        "goal store holds an unknown goal status `abandoned`"
    );
}

#[test]
fn goals_persist_across_opens_with_snake_case_statuses() {
    let home = tempfile::tempdir().unwrap();
    let mut store = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    let goal = set(&mut store, "ship it", Some(100));
    record(&mut store, &user_turn(100));
    drop(store);
    let store = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    let again = store.get(THREAD).unwrap().unwrap();
    assert_eq!(again.goal_id, goal.goal_id);
    assert_eq!(again.status, ThreadGoalStatus::BudgetLimited);
    let conn = rusqlite::Connection::open(home.path().join(STATE_FILE_NAME)).unwrap();
    let stored: String = conn
        .query_row("SELECT status FROM thread_goals", [], |row| row.get(0))
        .unwrap();
    assert_eq!(stored, "budget_limited");
}

#[test]
fn setting_over_an_unfinished_goal_needs_replace() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let first = set(&mut store, "  ship it  ", Some(500));
        assert_eq!(first.objective, "ship it");
        assert_eq!(first.status, ThreadGoalStatus::Active);
        record(&mut store, &user_turn(50));
        store.pause(THREAD, None).unwrap();
        let refused = store
            .set_goal(THREAD, &new_goal("ship more", None, false))
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "thread thread-1 already has an unfinished goal (paused); replace it explicitly or \
         clear it first"
        );
        let replaced = store
            .set_goal(THREAD, &new_goal("ship more", None, true))
            .unwrap();
        assert_ne!(replaced.goal_id, first.goal_id);
        assert_eq!((replaced.tokens_used, replaced.token_budget), (0, None));
        assert_eq!(replaced.status, ThreadGoalStatus::Active);
        assert_eq!(store.list().unwrap(), vec![replaced]);
    });
}

#[test]
fn objectives_budgets_and_thread_ids_are_validated() {
    on_every_backend(|| {
        let config = GoalConfig {
            max_token_budget: 1_000,
            ..GoalConfig::default()
        };
        let (mut store, _) = super::store_with(config);
        let error = store
            .set_goal(THREAD, &new_goal(" \n ", None, false))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid objective: goal objective must not be empty"
        );
        let error = store
            .set_goal(THREAD, &new_goal(&"x".repeat(4_001), None, false))
            .unwrap_err();
        assert!(error.to_string().contains("at most 4000 are allowed"));
        let error = store
            .set_goal(THREAD, &new_goal("ok", Some(0), false))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "a goal token budget must be positive, got 0"
        );
        let error = store
            .set_goal(THREAD, &new_goal("ok", Some(1_001), false))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "goal token budget 1001 exceeds the configured maximum of 1000"
        );
        for thread in ["", " ", "a\u{0}b"] {
            assert!(matches!(
                store.set_goal(thread, &new_goal("ok", None, false)),
                Err(Error::ThreadId(_))
            ));
        }
        assert!(matches!(
            store.get(&"t".repeat(257)),
            Err(Error::ThreadId(_))
        ));
        set(&mut store, "ok", Some(1_000));
        assert!(matches!(
            store.set_budget(THREAD, None, Some(-5)),
            Err(Error::BudgetNotPositive(-5))
        ));
        assert!(matches!(
            store.pause("other-thread", None),
            Err(Error::NoGoal { .. })
        ));
    });
}

#[test]
fn raising_the_budget_revives_and_lowering_it_stops_the_goal() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", Some(100));
        record(&mut store, &user_turn(150));
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::BudgetLimited
        );
        // Raised, but still not above usage: still limited.
        let goal = store.set_budget(THREAD, None, Some(150)).unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::BudgetLimited);
        let goal = store.set_budget(THREAD, None, Some(151)).unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Active);
        assert_eq!(goal.remaining_tokens(), Some(1));
        assert_eq!(goal.status_reason, None);
        let goal = store.set_budget(THREAD, None, Some(120)).unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::BudgetLimited);
        let goal = store.set_budget(THREAD, None, None).unwrap();
        assert_eq!(
            (goal.status, goal.remaining_tokens()),
            (ThreadGoalStatus::Active, None)
        );
        // A paused goal keeps its pause when its budget drops below usage, and resumes into the
        // limit.
        store.pause(THREAD, None).unwrap();
        assert_eq!(
            store.set_budget(THREAD, None, Some(10)).unwrap().status,
            ThreadGoalStatus::Paused
        );
        assert_eq!(
            store.resume(THREAD, None).unwrap().status,
            ThreadGoalStatus::BudgetLimited
        );
    });
}

#[test]
fn the_goals_table_of_the_config_file_is_read_and_checked() {
    let no_env: [(&str, &str); 0] = [];
    let parse = |text: &str| {
        Config::parse(text, Origin::Text)?
            .with_environment(no_env)
            .section::<GoalConfig>()
            .map(|loaded| loaded.value)
    };
    let config = parse(
        "[memories]\nmax_unused_days = 3\n[goals]\nmax_token_budget = 5000\nmin_continuation_seconds = 20\n",
    )
    .unwrap();
    assert_eq!(config.max_token_budget, 5_000);
    assert_eq!(config.min_continuation_interval, Duration::from_secs(20));
    assert_eq!(parse("").unwrap(), GoalConfig::default());
    assert_eq!(
        parse("[goals]\nmax_budget = 1\n").unwrap_err().to_string(),
        "config text: unknown key `goals.max_budget` (known: max_token_budget, default_token_budget, min_continuation_seconds, mcp_turn_gap_seconds)"
    );
    assert_eq!(
        parse("[goals]\nmax_token_budget = 0\n")
            .unwrap_err()
            .to_string(),
        "config text: `goals.max_token_budget` must be between 1 and 1000000000000, found 0"
    );
    assert_eq!(
        parse("[goals]\nmin_continuation_seconds = \"x\"\n")
            .unwrap_err()
            .to_string(),
        "config text: `goals.min_continuation_seconds` must be an integer, found string"
    );
    for seconds in [-1, 86_401] {
        assert_eq!(
            parse(&format!("[goals]\nmin_continuation_seconds = {seconds}\n"))
                .unwrap_err()
                .to_string(),
            format!(
                "config text: `goals.min_continuation_seconds` must be between 0 and 86400, found {seconds}"
            )
        );
    }
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        Config::load_if_present(&dir.path().join("missing.toml"))
            .unwrap()
            .with_environment(no_env)
            .section::<GoalConfig>()
            .unwrap()
            .value,
        GoalConfig::default()
    );
    let bad = dir.path().join("config.toml");
    std::fs::write(&bad, "goals = 3\n").unwrap();
    let error = Config::load(&bad)
        .unwrap()
        .section::<GoalConfig>()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "config file {}: `goals` must be a table, found integer",
            bad.display()
        )
    );
}
