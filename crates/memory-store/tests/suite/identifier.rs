use memory_store::valid_identifier;
use proptest::prelude::*;

#[test]
fn plain_lowercase_names_pass_and_everything_else_is_refused() {
    for name in ["goals", "_private", "t_upgrade_v2_1", &"a".repeat(63)] {
        assert!(valid_identifier(name), "{name}");
    }
    for name in [
        "",
        "1abc",
        "Goals",
        "goals; DROP TABLE x",
        "a-b",
        "a b",
        "\"q\"",
        "é",
        &"a".repeat(64),
    ] {
        assert!(!valid_identifier(name), "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(26), ..ProptestConfig::default() })]

    /// Whatever the text, a name that passes can be spliced into SQL unquoted: it holds only
    /// lowercase ASCII letters, digits and `_`, does not start with a digit, and fits.
    #[test]
    fn a_passing_name_is_always_safe_to_splice(name in ".{0,80}") {
        if valid_identifier(&name) {
            prop_assert!(!name.is_empty() && name.len() <= 63);
            prop_assert!(!name.starts_with(|c: char| c.is_ascii_digit()));
            prop_assert!(name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        }
    }

    #[test]
    fn every_plain_name_passes(name in "[a-z_][a-z0-9_]{0,62}") {
        prop_assert!(valid_identifier(&name));
    }
}
