use memory_store::Error;
use memory_store::migrate::{Schema, migrate_sqlite, sqlite_version};
use rusqlite::Connection;

fn steps() -> Vec<String> {
    vec![
        "CREATE TABLE a (x INTEGER)".to_owned(),
        "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (1)".to_owned(),
        "ALTER TABLE a ADD COLUMN z TEXT".to_owned(),
    ]
}

fn schema(migrations: &[String], legacy_user_version: bool) -> Schema<'_> {
    Schema {
        owner: "owner-a",
        migrations,
        legacy_user_version,
    }
}

fn user_version(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap()
}

#[test]
fn a_fresh_database_gets_every_migration_once_and_records_the_version() {
    let mut conn = Connection::open_in_memory().unwrap();
    let steps = steps();
    let mut applied = Vec::new();
    let version = migrate_sqlite(&mut conn, &schema(&steps, false), |_, version| {
        applied.push(version);
        Ok(())
    })
    .unwrap();
    assert_eq!((version, applied), (3, vec![1, 2, 3]));
    assert_eq!(sqlite_version(&conn, "owner-a").unwrap(), 3);
    // Again: nothing to apply (the steps are not idempotent, so a rerun would fail).
    let again = migrate_sqlite(&mut conn, &schema(&steps, false), |_, version| {
        panic!("migration {version} applied twice")
    })
    .unwrap();
    assert_eq!(again, 3);
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM a", [], |row| row.get(0))
        .unwrap();
    assert_eq!(rows, 1);
    assert_eq!(user_version(&conn), 0);
}

#[test]
fn a_version_newer_than_the_build_is_refused_and_nothing_changes() {
    let mut conn = Connection::open_in_memory().unwrap();
    let steps = steps();
    migrate_sqlite(&mut conn, &schema(&steps, false), |_, _| Ok(())).unwrap();
    let fewer = &steps[..2];
    let error = migrate_sqlite(&mut conn, &schema(fewer, false), |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(
            error,
            Error::SchemaTooNew {
                owner: "owner-a",
                found: 3,
                supported: 2
            }
        ),
        "{error:?}"
    );
    assert_eq!(sqlite_version(&conn, "owner-a").unwrap(), 3);
}

#[test]
fn owners_in_one_file_version_on_their_own() {
    let mut conn = Connection::open_in_memory().unwrap();
    let steps = steps();
    migrate_sqlite(&mut conn, &schema(&steps, false), |_, _| Ok(())).unwrap();
    let other = ["CREATE TABLE other (x INTEGER)".to_owned()];
    let other_schema = Schema {
        owner: "owner-b",
        migrations: &other,
        legacy_user_version: false,
    };
    assert_eq!(
        migrate_sqlite(&mut conn, &other_schema, |_, _| Ok(())).unwrap(),
        1
    );
    assert_eq!(sqlite_version(&conn, "owner-a").unwrap(), 3);
    assert_eq!(sqlite_version(&conn, "owner-b").unwrap(), 1);
    assert_eq!(sqlite_version(&conn, "nobody").unwrap(), 0);
}

#[test]
fn a_legacy_user_version_is_adopted_once_and_left_in_place() {
    let mut conn = Connection::open_in_memory().unwrap();
    let steps = steps();
    // A file written before `schema_versions`: the first two migrations, recorded in the pragma.
    conn.execute_batch(&steps[0]).unwrap();
    conn.execute_batch(&steps[1]).unwrap();
    conn.pragma_update(None, "user_version", 2).unwrap();
    let mut applied = Vec::new();
    migrate_sqlite(&mut conn, &schema(&steps, true), |_, version| {
        applied.push(version);
        Ok(())
    })
    .unwrap();
    assert_eq!(applied, vec![3]);
    assert_eq!(sqlite_version(&conn, "owner-a").unwrap(), 3);
    // The pragma is no longer read: the row decides from now on.
    assert_eq!(user_version(&conn), 2);
    conn.pragma_update(None, "user_version", 0).unwrap();
    migrate_sqlite(&mut conn, &schema(&steps, true), |_, version| {
        panic!("migration {version} applied again")
    })
    .unwrap();
}

#[test]
fn an_owner_without_a_legacy_version_ignores_the_pragma() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", 7).unwrap();
    let steps = steps();
    let version = migrate_sqlite(&mut conn, &schema(&steps, false), |_, _| Ok(())).unwrap();
    assert_eq!(version, 3);
}

#[test]
fn a_failing_migration_leaves_nothing_half_applied() {
    let mut conn = Connection::open_in_memory().unwrap();
    let broken = vec![
        "CREATE TABLE a (x INTEGER)".to_owned(),
        "CREATE TABLE b (y INTEGER); THIS IS NOT SQL".to_owned(),
    ];
    assert!(migrate_sqlite(&mut conn, &schema(&broken, false), |_, _| Ok(())).is_err());
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN ('a', 'b')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0);
    assert_eq!(sqlite_version(&conn, "owner-a").unwrap(), 0);
}
