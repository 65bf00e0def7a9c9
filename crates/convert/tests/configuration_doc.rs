//! `docs/configuration.md` is generated from the key definitions: these tests fail when
//! it is stale, and when it names a value the key refuses.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::PathBuf;

use convert::key_docs::{CONFIGURATION_PAGE, REGENERATE_COMMAND, configuration_markdown};
use convert::keys::{ALL_KEYS, BALANCE_ALGORITHM};

fn page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(CONFIGURATION_PAGE)
}

#[test]
fn the_configuration_page_is_generated_from_the_keys() {
    let generated = configuration_markdown();
    let path = page_path();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    if on_disk != generated {
        panic!(
            "{CONFIGURATION_PAGE} differs from what the key definitions in crates/convert/src/keys/ generate; \
             write it again with\n\n    {REGENERATE_COMMAND}\n"
        );
    }
}

/// The values quoted in backticks.
fn quoted_values(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[test]
fn every_value_the_page_quotes_is_accepted() {
    for key in ALL_KEYS {
        let values = quoted_values(key.accepted_values());
        assert!(!values.is_empty(), "{}: no example value", key.name());
        for value in values {
            assert_eq!(key.validate(value), Ok(()), "{}: `{value}`", key.name());
        }
        assert_eq!(key.validate(key.default_text()), Ok(()), "{}", key.name());
    }
}

#[test]
fn every_balance_algorithm_is_listed() {
    let listed = quoted_values(BALANCE_ALGORITHM.accepted_values);
    for name in model::Balance::NAMES {
        assert!(
            listed.iter().any(|value| value.starts_with(name)),
            "{name} is not listed"
        );
    }
}
