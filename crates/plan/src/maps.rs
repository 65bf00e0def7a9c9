//! Map changes over the runtime API: a few changed keys are edited one by one (each edit
//! is atomic in HAProxy), a larger change replaces the whole map atomically.

use std::collections::BTreeMap;
use std::sync::Arc;

use render::RenderedFile;

use crate::RuntimeCommand;

/// Above this many edited keys, one versioned replacement is cheaper than key edits.
pub const MAX_MAP_EDITS: usize = 64;

/// The command that turns the live map into the desired one.
pub(crate) fn change(
    map: &str,
    live: Option<&RenderedFile>,
    desired: &RenderedFile,
) -> RuntimeCommand {
    let replace = || RuntimeCommand::ReplaceMap {
        map: map.to_owned(),
        content: Arc::from(desired.text().as_bytes()),
    };
    let Some(live) = live else {
        return replace();
    };
    // With the same bucket layout a key stays in its bucket: only the buckets that differ
    // are compared.
    let (live_whole, desired_whole);
    let (live_parts, desired_parts): (Vec<&str>, Vec<&str>) =
        if live.chunks().len() == desired.chunks().len() {
            live.chunks()
                .iter()
                .zip(desired.chunks())
                .filter(|(a, b)| !Arc::ptr_eq(a, b) && a != b)
                .map(|(a, b)| (&**a, &**b))
                .unzip()
        } else {
            live_whole = live.text();
            desired_whole = desired.text();
            (vec![&*live_whole], vec![&*desired_whole])
        };
    let (Some(live_entries), Some(desired_entries)) =
        (entries(&live_parts), entries(&desired_parts))
    else {
        return replace();
    };
    let mut add = Vec::new();
    let mut set = Vec::new();
    for (key, value) in &desired_entries {
        match live_entries.get(key) {
            Some(old) if old == value => {}
            Some(_) => set.push(((*key).to_owned(), (*value).to_owned())),
            None => add.push(((*key).to_owned(), (*value).to_owned())),
        }
    }
    let delete: Vec<String> = live_entries
        .keys()
        .filter(|key| !desired_entries.contains_key(*key))
        .map(|key| (*key).to_owned())
        .collect();
    let count = add.len() + set.len() + delete.len();
    let all_safe = add
        .iter()
        .chain(&set)
        .flat_map(|(k, v)| [k, v])
        .chain(&delete)
        .all(|token| safe_token(token));
    if count == 0 || count > MAX_MAP_EDITS || !all_safe {
        return replace();
    }
    RuntimeCommand::EditMap {
        map: map.to_owned(),
        add,
        set,
        delete,
    }
}

/// Map file lines as key → value; `None` if a key repeats, since `set map` and `del map`
/// would then touch every entry with that key.
fn entries<'a>(parts: &[&'a str]) -> Option<BTreeMap<&'a str, &'a str>> {
    let mut map = BTreeMap::new();
    let lines = parts.iter().flat_map(|part| part.lines());
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        if map.insert(key, value.trim()).is_some() {
            return None;
        }
    }
    Some(map)
}

/// Whether every non-empty line of `text` is one word the runtime API passes unchanged.
pub(crate) fn safe_lines(text: &str) -> bool {
    text.lines().filter(|line| !line.is_empty()).all(safe_token)
}

/// A word the runtime API passes through unchanged: no space, none of the characters
/// its command parser treats specially (`;` separates commands, `\` escapes, quotes),
/// and no `<<`, which at the end of a line makes the CLI wait for a payload.
fn safe_token(token: &str) -> bool {
    !token.is_empty()
        && !token.contains("<<")
        && token
            .chars()
            .all(|c| c.is_ascii_graphic() && !matches!(c, ';' | '\\' | '"' | '\''))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> RenderedFile {
        RenderedFile::new(text.to_owned(), false)
    }

    #[test]
    fn a_few_changed_keys_are_edited_and_many_replace_the_map() {
        let live = file("a#/ x\nb#/ y\nc#/ z\n");
        let desired = file("a#/ x\nb#/ w\nd#/ v\n");
        assert_eq!(
            change("m", Some(&live), &desired),
            RuntimeCommand::EditMap {
                map: "m".into(),
                add: vec![("d#/".into(), "v".into())],
                set: vec![("b#/".into(), "w".into())],
                delete: vec!["c#/".into()],
            }
        );
        let many: String = (0..=MAX_MAP_EDITS).map(|i| format!("h{i}#/ x\n")).collect();
        assert!(matches!(
            change("m", Some(&live), &file(&many)),
            RuntimeCommand::ReplaceMap { .. }
        ));
    }

    #[test]
    fn only_buckets_that_differ_are_compared() {
        let chunks = |parts: &[&str]| {
            RenderedFile::from_chunks(parts.iter().map(|p| Arc::from(*p)).collect(), false)
        };
        let live = chunks(&["a#/ x\nb#/ y\n", "c#/ z\n"]);
        let desired = chunks(&["a#/ x\nb#/ y\n", "c#/ w\nd#/ v\n"]);
        assert_eq!(
            change("m", Some(&live), &desired),
            RuntimeCommand::EditMap {
                map: "m".into(),
                add: vec![("d#/".into(), "v".into())],
                set: vec![("c#/".into(), "w".into())],
                delete: vec![],
            }
        );
        // A different layout: the whole maps are compared.
        let regrouped = chunks(&["a#/ x\n", "b#/ y\n", "c#/ z\n"]);
        assert_eq!(
            change("m", Some(&live), &chunks(&["b#/ y\n", "c#/ z\n", ""])),
            RuntimeCommand::EditMap {
                map: "m".into(),
                add: vec![],
                set: vec![],
                delete: vec!["a#/".into()],
            }
        );
        assert!(matches!(
            change("m", Some(&regrouped), &live),
            RuntimeCommand::ReplaceMap { .. }
        ));
    }

    #[test]
    fn risky_words_and_repeated_keys_replace_the_map() {
        let live = file("a#/ x\n");
        assert!(matches!(
            change("m", Some(&live), &file("a#/ x\nb#/;show x\n")),
            RuntimeCommand::ReplaceMap { .. }
        ));
        assert!(matches!(
            change("m", Some(&file("a#/ x\na#/ y\n")), &file("a#/ x\n")),
            RuntimeCommand::ReplaceMap { .. }
        ));
        assert!(matches!(
            change("m", None, &live),
            RuntimeCommand::ReplaceMap { .. }
        ));
        // A key ending in `<<` would leave the CLI waiting for a payload.
        assert!(matches!(
            change("m", Some(&live), &file("a#/ x\nb#/x<< y\n")),
            RuntimeCommand::ReplaceMap { .. }
        ));
        assert!(matches!(
            change("m", Some(&live), &file("a#/ x\nb#/y z\n")),
            RuntimeCommand::EditMap { .. }
        ));
    }
}
