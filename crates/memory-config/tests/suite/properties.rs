use memory_config::{Config, Origin};
use proptest::prelude::*;

use super::sample::{Sample, TopLevel};

fn toml_like() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("[sample]".to_owned()),
        Just("sample = 3".to_owned()),
        "[a-z_]{1,8} = [-0-9]{1,20}",
        "(limit|days|retries|enabled|url|mode|sample_window) = .{0,20}",
        ".{0,30}",
    ];
    proptest::collection::vec(line, 0..8).prop_map(|lines| lines.join("\n"))
}

proptest! {
    /// Whatever the text and the environment, loading is a value or an error, never a panic;
    /// a loaded value keeps its numbers in range.
    #[test]
    fn arbitrary_text_never_panics_the_loader(text in toml_like(), env in ".{0,12}") {
        if let Ok(config) = Config::parse(&text, Origin::Text) {
            let config = config.with_environment([("SAMPLE_LIMIT", env.as_str())]);
            if let Ok(loaded) = config.section::<Sample>() {
                prop_assert!((1..=100).contains(&loaded.value.limit));
                prop_assert!((0..=20).contains(&loaded.value.days));
            }
            let _ = config.section::<TopLevel>();
        }
    }

    #[test]
    fn any_text_never_panics_the_parser(text in ".{0,200}") {
        if let Ok(config) = Config::parse(&text, Origin::Text) {
            let _ = config.with_environment([("SAMPLE_URL", "x")]).section::<Sample>();
        }
    }
}
