use std::path::PathBuf;

use memory_config::{Config, Error, Origin};

use super::sample::{Mode, Sample, TopLevel};

const NO_ENV: [(&str, &str); 0] = [];

fn text(config: &str) -> Config {
    Config::parse(config, Origin::Text)
        .unwrap()
        .with_environment(NO_ENV)
}

fn sample_error(config: &str) -> Error {
    text(config).section::<Sample>().unwrap_err()
}

#[test]
fn a_missing_table_or_key_takes_its_default() {
    let loaded = text("[other]\nanything = 1\n").section::<Sample>().unwrap();
    assert_eq!(loaded.value, Sample::default());
    assert!(loaded.warnings.is_empty());
    let partial = text("[sample]\nlimit = 7\nmode = \"read-only\"\n")
        .section::<Sample>()
        .unwrap()
        .value;
    assert_eq!(
        partial,
        Sample {
            limit: 7,
            mode: Mode::ReadOnly,
            ..Sample::default()
        }
    );
    assert_eq!(
        Config::empty()
            .with_environment(NO_ENV)
            .section::<Sample>()
            .unwrap()
            .value,
        Sample::default()
    );
}

#[test]
fn an_unknown_key_is_an_error_naming_it_and_the_known_ones() {
    let error = sample_error("[sample]\nlimt = 3\n");
    assert!(matches!(&error, Error::UnknownKey { key, .. } if key == "sample.limt"));
    assert_eq!(
        error.to_string(),
        "config text: unknown key `sample.limt` (known: enabled, limit, days, retries, url, mode)"
    );
}

#[test]
fn a_value_of_the_wrong_type_is_an_error_naming_the_key_and_both_types() {
    for (config, key, expected, found) in [
        (
            "[sample]\nlimit = \"ten\"",
            "sample.limit",
            "an integer",
            "string",
        ),
        (
            "[sample]\nenabled = 1",
            "sample.enabled",
            "a boolean",
            "integer",
        ),
        ("[sample]\nurl = 3", "sample.url", "a string", "integer"),
        ("[sample]\nmode = 3", "sample.mode", "a string", "integer"),
        (
            "[sample]\nlimit = 1979-05-27",
            "sample.limit",
            "an integer",
            "datetime",
        ),
        (
            "[sample]\nlimit = [1]",
            "sample.limit",
            "an integer",
            "array",
        ),
    ] {
        match sample_error(config) {
            Error::WrongType {
                key: k,
                expected: e,
                found: f,
                origin,
            } => {
                assert_eq!(
                    (k.as_str(), e.as_str(), f.as_str()),
                    (key, expected, found),
                    "{config}"
                );
                assert_eq!(origin, Origin::Text);
            }
            other => panic!("{config}: {other}"),
        }
    }
    assert_eq!(
        sample_error("[sample]\nlimit = \"ten\"").to_string(),
        "config text: `sample.limit` must be an integer, found string"
    );
}

#[test]
fn a_number_out_of_range_is_an_error_naming_the_range() {
    let error = sample_error("[sample]\nlimit = 0\n");
    assert_eq!(
        error.to_string(),
        "config text: `sample.limit` must be between 1 and 100, found 0"
    );
    assert!(matches!(&error, Error::OutOfRange { range, .. } if range == "between 1 and 100"));
    let negative = sample_error("[sample]\nretries = -1\n");
    assert_eq!(
        negative.to_string(),
        "config text: `sample.retries` must be between 0 and 4294967295, found -1"
    );
    let top = text("sample_window = 0").section::<TopLevel>().unwrap_err();
    assert_eq!(
        top.to_string(),
        "config text: `sample_window` must be at least 1, found 0"
    );
}

#[test]
fn a_clamped_number_is_moved_into_range_with_a_warning() {
    let loaded = text("[sample]\ndays = 500\n").section::<Sample>().unwrap();
    assert_eq!(loaded.value.days, 20);
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(
        loaded.warnings[0].to_string(),
        "sample.days = 500 is outside 0..=20; using 20"
    );
}

#[test]
fn an_unknown_word_names_the_choices() {
    assert_eq!(
        sample_error("[sample]\nmode = \"sometimes\"").to_string(),
        "config text: `sample.mode` must be one of writable, read-only, found `sometimes`"
    );
}

#[test]
fn the_owner_table_must_be_a_table_and_the_text_must_be_toml() {
    assert_eq!(
        sample_error("sample = 3").to_string(),
        "config text: `sample` must be a table, found integer"
    );
    let syntax = Config::parse("[sample\n", Origin::Text).unwrap_err();
    assert!(matches!(syntax, Error::Syntax { .. }), "{syntax}");
    assert!(
        syntax.to_string().starts_with("config text: invalid toml:"),
        "{syntax}"
    );
    // The parser's error is the cause; the message ends with its text, not a blank line.
    let cause = std::error::Error::source(&syntax).expect("a cause");
    assert!(cause.is::<toml::de::Error>(), "{cause:?}");
    assert!(!syntax.to_string().ends_with('\n'), "{syntax:?}");
}

#[test]
fn top_level_keys_are_read_beside_the_host_agents_own() {
    let loaded = text("model = \"gpt-5\"\nsample_window = 128\n[sample]\nlimit = 2\n")
        .section::<TopLevel>()
        .unwrap();
    assert_eq!(loaded.value.sample_window, Some(128));
}

#[test]
fn the_environment_overrides_the_file_and_its_errors_name_the_variable() {
    let config = Config::parse("[sample]\nurl = \"postgres://file\"\n", Origin::Text).unwrap();
    let from_env = config
        .clone()
        .with_environment([("SAMPLE_URL", "postgres://env")])
        .section::<Sample>()
        .unwrap();
    assert_eq!(from_env.value.url.as_deref(), Some("postgres://env"));
    let file_only = config.with_environment(NO_ENV).section::<Sample>().unwrap();
    assert_eq!(file_only.value.url.as_deref(), Some("postgres://file"));
    let no_file = Config::empty()
        .with_environment([("SAMPLE_URL", "postgres://env")])
        .section::<Sample>()
        .unwrap();
    assert_eq!(no_file.value.url.as_deref(), Some("postgres://env"));

    let error = Config::empty()
        .with_environment([("SAMPLE_LIMIT", "7")])
        .section::<Sample>()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "environment variable SAMPLE_LIMIT: `sample.limit` must be an integer, found string"
    );
}

#[test]
fn a_file_names_its_path_and_a_missing_one_may_mean_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[sample]\nlimit = 1000\n").unwrap();
    let error = Config::load(&path)
        .unwrap()
        .with_environment(NO_ENV)
        .section::<Sample>()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "config file {}: `sample.limit` must be between 1 and 100, found 1000",
            path.display()
        )
    );
    assert_eq!(error.key(), Some("sample.limit"));

    let missing: PathBuf = dir.path().join("missing.toml");
    assert!(matches!(
        Config::load(&missing).unwrap_err(),
        Error::Read { .. }
    ));
    let defaults = Config::load_if_present(&missing)
        .unwrap()
        .with_environment(NO_ENV)
        .section::<Sample>()
        .unwrap();
    assert_eq!(defaults.value, Sample::default());
}
