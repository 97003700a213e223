//! The migrator and pool on PostgreSQL, when `AGENT_MEMORY_TEST_PG_URL` names a server.

use std::sync::atomic::{AtomicUsize, Ordering};

use memory_store::Error;
use memory_store::migrate::{Schema, migrate_postgres, postgres_version};
use memory_store::postgres::{PgOptions, PgPool};

pub(super) fn server() -> Option<String> {
    let url = std::env::var("AGENT_MEMORY_TEST_PG_URL")
        .ok()
        .filter(|url| !url.is_empty());
    if url.is_none() {
        eprintln!("AGENT_MEMORY_TEST_PG_URL is not set: the PostgreSQL store tests are skipped");
    }
    url
}

async fn fresh_pool(url: &str) -> PgPool {
    static SCHEMAS: AtomicUsize = AtomicUsize::new(0);
    let schema = format!(
        "store_{}_{}",
        std::process::id(),
        SCHEMAS.fetch_add(1, Ordering::SeqCst)
    );
    let options = PgOptions {
        schema: Some(schema),
        ..PgOptions::default()
    };
    PgPool::connect(url, &options).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owners_migrate_once_each_even_when_opened_at_once() {
    let Some(url) = server() else { return };
    let pool = fresh_pool(&url).await;
    let steps = vec![
        "CREATE TABLE a (x BIGINT)".to_owned(),
        "ALTER TABLE a ADD COLUMN y TEXT".to_owned(),
    ];
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (pool, steps) = (pool.clone(), steps.clone());
        tasks.push(tokio::spawn(async move {
            let mut client = pool.client().await.unwrap();
            let schema = Schema {
                owner: "owner-a",
                migrations: &steps,
                legacy_user_version: false,
            };
            migrate_postgres(&mut client, &schema).await.unwrap()
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), 2);
    }
    let client = pool.client().await.unwrap();
    assert_eq!(postgres_version(&client, "owner-a").await.unwrap(), 2);
    assert_eq!(postgres_version(&client, "owner-b").await.unwrap(), 0);
    let error = migrate_postgres(
        &mut pool.client().await.unwrap(),
        &Schema {
            owner: "owner-a",
            migrations: &steps[..1],
            legacy_user_version: false,
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            error,
            Error::SchemaTooNew {
                found: 2,
                supported: 1,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error_without_the_password() {
    let options = PgOptions {
        connect_timeout: std::time::Duration::from_secs(2),
        ..PgOptions::default()
    };
    let pool = PgPool::connect("postgres://agent:hunter2@127.0.0.1:1/memory", &options)
        .await
        .unwrap();
    let error = pool.client().await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, Error::Unreachable { .. }), "{error:?}");
    assert!(
        message.contains("postgres://127.0.0.1:1/memory"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!format!("{error:?}").contains("hunter2"), "{error:?}");
    // The pool's error is kept as the cause, and the driver's reason is in the message.
    let cause = std::error::Error::source(&error).expect("a cause");
    assert!(cause.is::<deadpool_postgres::PoolError>(), "{cause:?}");
    assert!(message.to_lowercase().contains("refused"), "{message}");
}

#[tokio::test]
async fn a_schema_name_that_is_not_plain_is_refused_before_connecting() {
    let options = PgOptions {
        schema: Some("goals; DROP TABLE x".to_owned()),
        ..PgOptions::default()
    };
    let error = PgPool::connect("postgres://a@127.0.0.1:1/c", &options)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::StoreUrl { .. }), "{error:?}");
}
