//! Map changes over the runtime API: a few changed keys are edited one by one (each edit
//! is atomic in HAProxy), a larger change replaces the whole map atomically.

use std::collections::BTreeMap;

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
        content: desired.bytes.clone(),
    };
    let Some(live) = live else {
        return replace();
    };
    let (Some(live_entries), Some(desired_entries)) =
        (entries(&live.bytes), entries(&desired.bytes))
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
fn entries(bytes: &[u8]) -> Option<BTreeMap<&str, &str>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut map = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        if map.insert(key, value.trim()).is_some() {
            return None;
        }
    }
    Some(map)
}

/// A word the runtime API passes through unchanged: no space, and none of the characters
/// its command parser treats specially (`;` separates commands, `\` escapes, quotes).
fn safe_token(token: &str) -> bool {
    !token.is_empty()
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
    }
}
