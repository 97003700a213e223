//! What the PostgreSQL store says when it cannot work: no server, a schema from a newer build.

use std::time::Duration;

use memory_write::Error;
use memory_write::store::WriteStore;
use memory_write::store::postgres::{PgStore, PgStoreOptions};

use super::{pg_url, unique_schema};

#[tokio::test]
async fn an_unreachable_server_is_named_without_its_password() {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once. A port
    // that is not a number is refused before any connection is tried.
    let options = PgStoreOptions {
        connect_timeout: Duration::from_secs(5),
        ..PgStoreOptions::default()
    };
    let refused = PgStore::connect_with("postgres://agent:hunter2@127.0.0.1:1/memory", &options);
    let refused = refused.await.unwrap_err();
    let malformed = PgStore::connect("postgres://agent:hunter2@127.0.0.1:notaport/x");
    let malformed = malformed.await.unwrap_err();
    let unreachable = matches!(
        refused,
        Error::Store(memory_store::Error::Unreachable { .. })
    );
    assert!(unreachable, "{refused:?}");
    let bad_url = matches!(
        malformed,
        Error::Store(memory_store::Error::StoreUrl { .. })
    );
    assert!(bad_url, "{malformed:?}");
    let named = "state store: cannot reach postgres://127.0.0.1:1/memory: ";
    assert!(refused.to_string().starts_with(named), "{refused}");
    for error in [refused, malformed] {
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
}

#[tokio::test]
async fn a_schema_written_by_a_newer_build_is_refused() {
    let Some(url) = pg_url() else {
        return super::say_skipped();
    };
    let schema = unique_schema("newer");
    let options = PgStoreOptions {
        schema: Some(schema.clone()),
        ..PgStoreOptions::default()
    };
    let store = PgStore::connect_with(&url, &options).await.unwrap();
    let supported = store.schema_version().await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute(
            &format!(
                "UPDATE {schema}.schema_versions SET version = 99 WHERE owner = 'memory-write'"
            ),
            &[],
        )
        .await
        .unwrap();
    let error = PgStore::connect_with(&url, &options).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "state store: schema version 99 of the memory-write tables is newer than this build \
             supports ({supported})"
        )
    );
    // Other owners' versions in the same table are left alone by a migration.
    client
        .execute(
            &format!(
                "UPDATE {schema}.schema_versions SET version = {supported} \
                 WHERE owner = 'memory-write'"
            ),
            &[],
        )
        .await
        .unwrap();
    client
        .execute(
            &format!("INSERT INTO {schema}.schema_versions VALUES ('goal-steering', 7)"),
            &[],
        )
        .await
        .unwrap();
    PgStore::connect_with(&url, &options).await.unwrap();
    let goal: i64 = client
        .query_one(
            &format!("SELECT version FROM {schema}.schema_versions WHERE owner = 'goal-steering'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(goal, 7);
}
