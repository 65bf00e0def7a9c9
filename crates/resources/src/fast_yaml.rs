//! A fast reader for the plain YAML most manifests are written in, giving exactly the value
//! serde-saphyr gives for it, and declining everything else.
//!
//! Read here: block mappings and sequences indented with spaces, flow collections on one
//! line, one-line plain, single- and double-quoted scalars, literal block scalars (`|`,
//! `|-`: how kubectl writes its last-applied copy), comments. Declined (`None`),
//! so that serde-saphyr reads the document with its budgets and reports its errors:
//! anchors, aliases, tags, folded and multi-line flow scalars, tabs, carriage returns, text that
//! is not printable ASCII, directives and document markers, duplicate keys and keys that
//! could be numbers or null, and documents deeper or larger than a bound well inside
//! serde-saphyr's own. Anything unusual is declined rather than guessed: a declined
//! document costs only the time of the general reader.

mod scalar;

use std::borrow::Cow;

use crate::node::Node;

/// Deeper documents are declined (serde-saphyr's own limit is 64).
const MAX_DEPTH: usize = 32;
/// Documents of more nodes are declined (serde-saphyr's budget is 250,000 nodes and
/// 1,000,000 events).
const MAX_NODES: usize = 100_000;
/// Longer keys are declined (serde-saphyr looks 1,024 characters ahead for a key).
const MAX_KEY_LEN: usize = 512;

/// The document's value as serde-saphyr reads it (compared as a `serde_json::Value`),
/// when the document is in the subset read here. Its text is borrowed from the document
/// except where escapes or a block scalar make a new string.
pub(crate) fn parse(document: &str) -> Option<Node<'_>> {
    // Without a branch a byte, so that it is checked many bytes at a time.
    let unprintable = document.bytes().fold(false, |seen, b| {
        seen | ((b < 0x20 && b != b'\n') | (b >= 0x7f))
    });
    if unprintable {
        return None;
    }
    let lines = split_lines(document);
    if lines
        .iter()
        .any(|line| line.starts_with("---") || line.starts_with("...") || line.starts_with('%'))
    {
        return None;
    }
    let mut reader = Reader {
        lines,
        line: 0,
        nodes: 0,
    };
    reader.skip_blank();
    let first = reader.lines.get(reader.line)?;
    let value = reader.block_node(indent(first), 0)?;
    reader.skip_blank();
    (reader.line >= reader.lines.len()).then_some(value)
}

/// The document's lines, as `split('\n')` gives them, from one scan for line breaks.
fn split_lines(document: &str) -> Vec<&str> {
    let mut lines = Vec::with_capacity(document.len() / 24 + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', document.as_bytes()) {
        lines.push(&document[start..end]);
        start = end + 1;
    }
    lines.push(&document[start..]);
    lines
}

struct Reader<'a> {
    lines: Vec<&'a str>,
    /// The line being read.
    line: usize,
    nodes: usize,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let content = line.trim_start_matches(' ');
    content.is_empty() || content.starts_with('#')
}

/// Whether what follows a value on its line is nothing, or a comment (which must be
/// separated from the value by a space).
fn only_comment(tail: &str) -> bool {
    let content = tail.trim_start_matches(' ');
    content.is_empty() || (content.starts_with('#') && content.len() < tail.len())
}

/// Whether a line's content at a node's column starts a block sequence entry.
fn is_sequence_entry(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

impl<'a> Reader<'a> {
    fn skip_blank(&mut self) {
        while self
            .lines
            .get(self.line)
            .is_some_and(|line| is_blank_or_comment(line))
        {
            self.line += 1;
        }
    }

    fn count_node(&mut self, depth: usize) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES && depth <= MAX_DEPTH).then_some(())
    }

    /// The node whose content starts at column `col` of the current line: a block
    /// sequence, a block mapping or a flow collection.
    fn block_node(&mut self, col: usize, depth: usize) -> Option<Node<'a>> {
        let content = self.lines.get(self.line)?.get(col..)?;
        if is_sequence_entry(content) {
            self.block_sequence(col, depth)
        } else if content.starts_with(['{', '[']) {
            let (value, end) = flow_node(content, 0, depth, &mut self.nodes)?;
            if !only_comment(&content[end..]) {
                return None;
            }
            self.line += 1;
            Some(value)
        } else if split_key(content).is_some() {
            self.block_mapping(col, depth)
        } else {
            None
        }
    }

    /// A block mapping whose keys are at column `col`, the first one on the current line
    /// (after a sequence entry's `- ` when compact).
    fn block_mapping(&mut self, col: usize, depth: usize) -> Option<Node<'a>> {
        self.count_node(depth)?;
        let mut map = MappingBuilder::default();
        let mut first = true;
        loop {
            if !first {
                self.skip_blank();
                let Some(line) = self.lines.get(self.line) else {
                    break;
                };
                let line_indent = indent(line);
                if line_indent < col {
                    break;
                }
                if line_indent > col || is_sequence_entry(&line[col..]) {
                    return None;
                }
            }
            first = false;
            let content = self.lines.get(self.line)?.get(col..)?;
            let (key, after) = split_key(content)?;
            let rest = content[after..].trim_start_matches(' ');
            let value = if rest.is_empty() || rest.starts_with('#') {
                self.line += 1;
                self.nested_value(col, depth + 1)?
            } else if rest.starts_with('|') {
                self.literal_block(rest, col, depth + 1)?
            } else {
                let value = inline_value(rest, depth + 1, &mut self.nodes)?;
                self.line += 1;
                value
            };
            map.insert(key, value)?;
        }
        Some(Node::Map(map.entries))
    }

    /// The value of a key or entry with nothing after it on its line, which belongs to a
    /// node at column `col`: a more indented node on the next lines, a block sequence at
    /// the same column, or null.
    fn nested_value(&mut self, col: usize, depth: usize) -> Option<Node<'a>> {
        self.skip_blank();
        let Some(line) = self.lines.get(self.line) else {
            self.count_node(depth)?;
            return Some(Node::Null);
        };
        let line_indent = indent(line);
        if line_indent > col {
            self.block_node(line_indent, depth)
        } else if line_indent == col && is_sequence_entry(&line[col..]) {
            self.block_sequence(col, depth)
        } else {
            self.count_node(depth)?;
            Some(Node::Null)
        }
    }

    /// A block sequence whose `-` are at column `col`.
    fn block_sequence(&mut self, col: usize, depth: usize) -> Option<Node<'a>> {
        self.count_node(depth)?;
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.lines.get(self.line) else {
                break;
            };
            let line_indent = indent(line);
            if line_indent < col {
                break;
            }
            if line_indent > col {
                return None;
            }
            let content = &line[col..];
            if !is_sequence_entry(content) {
                break;
            }
            let after = &content[1..];
            let item_col = col + 1 + indent(after);
            let rest = after.trim_start_matches(' ');
            let item = if rest.is_empty() || rest.starts_with('#') {
                self.line += 1;
                self.nested_entry(col, depth + 1)?
            } else if is_sequence_entry(rest) {
                return None;
            } else if rest.starts_with('|') {
                self.literal_block(rest, col, depth + 1)?
            } else if split_key(rest).is_some() {
                self.block_mapping(item_col, depth + 1)?
            } else {
                let value = inline_value(rest, depth + 1, &mut self.nodes)?;
                self.line += 1;
                value
            };
            items.push(item);
        }
        Some(Node::Seq(items))
    }

    /// A literal block scalar, as kubectl writes a string of several lines: the header
    /// `|` (keep the final line break) or `|-` (drop it) ends the current line, and the
    /// text is the following lines indented deeper than `parent`, less the first one's
    /// indentation. Trailing empty lines are dropped. Declined: other headers (`|+`,
    /// indentation indicators, a comment), an empty or blank-led text, and a line of
    /// spaces deeper than the text.
    fn literal_block(&mut self, header: &str, parent: usize, depth: usize) -> Option<Node<'a>> {
        let keep_final_break = match header.trim_end_matches(' ') {
            "|" => true,
            "|-" => false,
            _ => return None,
        };
        self.count_node(depth)?;
        self.line += 1;
        let first = self.lines.get(self.line)?;
        let text_indent = indent(first);
        if text_indent <= parent || text_indent == first.len() {
            return None;
        }
        let mut text = String::new();
        let mut empty_lines = 0;
        while let Some(line) = self.lines.get(self.line) {
            let line_indent = indent(line);
            if line_indent == line.len() {
                // Spaces beyond the text's indentation would be text: declined.
                if line_indent > text_indent {
                    return None;
                }
                empty_lines += 1;
            } else if line_indent >= text_indent {
                for _ in 0..empty_lines {
                    text.push('\n');
                }
                empty_lines = 0;
                text.push_str(&line[text_indent..]);
                text.push('\n');
            } else {
                break;
            }
            self.line += 1;
        }
        if !keep_final_break {
            text.pop();
        }
        Some(Node::String(Cow::Owned(text)))
    }

    /// The value of a sequence entry with nothing after its `-`: a more indented node
    /// on the next lines, or null.
    fn nested_entry(&mut self, col: usize, depth: usize) -> Option<Node<'a>> {
        self.skip_blank();
        match self.lines.get(self.line) {
            Some(line) if indent(line) > col => self.block_node(indent(line), depth),
            _ => {
                self.count_node(depth)?;
                Some(Node::Null)
            }
        }
    }
}

/// A key at the start of `content` followed by `:` and a space or the end of the line:
/// the key and where its value starts.
fn split_key(content: &str) -> Option<(Cow<'_, str>, usize)> {
    let (key, after_key) = if content.starts_with(['"', '\'']) {
        let (key, end) = quoted(content, 0)?;
        let colon = end + indent(&content[end..]);
        (key, colon)
    } else {
        let bytes = content.as_bytes();
        let colon = (0..bytes.len())
            .find(|&i| bytes[i] == b':' && matches!(bytes.get(i + 1), None | Some(b' ')))?;
        let key = content[..colon].trim_end_matches(' ');
        if !plain_key_is_text(key) {
            return None;
        }
        (Cow::Borrowed(key), colon)
    };
    if key.len() > MAX_KEY_LEN
        || content.as_bytes().get(after_key) != Some(&b':')
        || !matches!(content.as_bytes().get(after_key + 1), None | Some(b' '))
    {
        return None;
    }
    Some((key, after_key + 1))
}

/// Whether a plain key is certainly read as this text and compared as text: not null,
/// not a possible number (serde-saphyr compares integer keys by value), no indicator.
/// Brackets after the first character are text in a block key (a flow key ends before
/// them); `.` alone is text too: managedFields are full of both (`k:{"port":80}`, `.`).
fn plain_key_is_text(key: &str) -> bool {
    let Some(&first) = key.as_bytes().first() else {
        return false;
    };
    // `<<` is a merge key.
    key == "."
        || (!scalar::is_null(key)
            && key != "<<"
            && !first.is_ascii_digit()
            && !matches!(first, b'-' | b'+' | b'.')
            && !is_indicator(first)
            && !key.bytes().any(|b| b == b'#'))
}

/// The value that starts a line's remainder after a key or a sequence entry's `- `.
fn inline_value<'a>(rest: &'a str, depth: usize, nodes: &mut usize) -> Option<Node<'a>> {
    let first = *rest.as_bytes().first()?;
    match first {
        b'{' | b'[' => {
            let (value, end) = flow_node(rest, 0, depth, nodes)?;
            only_comment(&rest[end..]).then_some(value)
        }
        b'"' | b'\'' => {
            let (text, end) = quoted(rest, 0)?;
            *nodes += 1;
            (only_comment(&rest[end..]) && *nodes <= MAX_NODES).then_some(Node::String(text))
        }
        _ => {
            let bytes = rest.as_bytes();
            let comment = memchr::memchr_iter(b'#', bytes).find(|&i| i > 0 && bytes[i - 1] == b' ');
            let text = match comment {
                Some(comment) => &rest[..comment - 1],
                None => rest,
            }
            .trim_end_matches(' ');
            if !plain_value_is_simple(text) {
                return None;
            }
            *nodes += 1;
            if *nodes > MAX_NODES {
                return None;
            }
            scalar::plain_value(text)
        }
    }
}

/// Whether a one-line plain value in block context is certainly one scalar: it starts
/// with no indicator, holds no `: ` (a nested mapping, an error) and no brackets.
fn plain_value_is_simple(text: &str) -> bool {
    let bytes = text.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    let indicator =
        is_indicator(first) || (first == b'-' && matches!(bytes.get(1), None | Some(b' ')));
    // No `: ` nor a `:` at the end (a colon followed by a space or nothing), no bracket.
    let mapping_or_flow = bytes.iter().enumerate().any(|(i, &b)| match b {
        b':' => matches!(bytes.get(i + 1), None | Some(b' ')),
        b'[' | b']' | b'{' | b'}' => true,
        _ => false,
    });
    !indicator && !mapping_or_flow
}

/// Whether a plain scalar cannot start with this character (YAML's indicators, `-` set
/// apart: it starts a plain scalar unless a space follows).
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'?' | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

/// A flow node starting at `pos` of a line (after spaces): its value and the position
/// after it. A flow collection must close on its line.
fn flow_node<'a>(
    line: &'a str,
    pos: usize,
    depth: usize,
    nodes: &mut usize,
) -> Option<(Node<'a>, usize)> {
    *nodes += 1;
    if *nodes > MAX_NODES || depth > MAX_DEPTH {
        return None;
    }
    let bytes = line.as_bytes();
    let pos = pos + indent(&line[pos..]);
    match *bytes.get(pos)? {
        b'{' => flow_mapping(line, pos + 1, depth, nodes),
        b'[' => flow_sequence(line, pos + 1, depth, nodes),
        b'"' | b'\'' => quoted(line, pos).map(|(text, end)| (Node::String(text), end)),
        _ => {
            let (text, end) = flow_plain(line, pos)?;
            Some((scalar::plain_value(text)?, end))
        }
    }
}

fn skip_spaces(line: &str, pos: usize) -> usize {
    pos + indent(&line[pos..])
}

fn flow_mapping<'a>(
    line: &'a str,
    mut pos: usize,
    depth: usize,
    nodes: &mut usize,
) -> Option<(Node<'a>, usize)> {
    let bytes = line.as_bytes();
    let mut map = MappingBuilder::default();
    pos = skip_spaces(line, pos);
    if bytes.get(pos) == Some(&b'}') {
        return Some((Node::Map(map.entries), pos + 1));
    }
    loop {
        pos = skip_spaces(line, pos);
        let quoted_key = matches!(bytes.get(pos), Some(b'"' | b'\''));
        let (key, end) = if quoted_key {
            quoted(line, pos)?
        } else {
            let (text, end) = flow_plain(line, pos)?;
            if !plain_key_is_text(text) {
                return None;
            }
            (Cow::Borrowed(text), end)
        };
        pos = skip_spaces(line, end);
        if bytes.get(pos) != Some(&b':') {
            return None;
        }
        pos += 1;
        // A plain key needs a space after its colon; a quoted one may be followed by the
        // value directly, as in JSON.
        if !quoted_key && bytes.get(pos) != Some(&b' ') {
            return None;
        }
        pos = skip_spaces(line, pos);
        let value = if matches!(bytes.get(pos), Some(b',' | b'}')) {
            *nodes += 1;
            Node::Null
        } else {
            let (value, end) = flow_node(line, pos, depth + 1, nodes)?;
            pos = end;
            value
        };
        if key.len() > MAX_KEY_LEN {
            return None;
        }
        map.insert(key, value)?;
        pos = skip_spaces(line, pos);
        match *bytes.get(pos)? {
            b'}' => return Some((Node::Map(map.entries), pos + 1)),
            b',' => {
                pos = skip_spaces(line, pos + 1);
                // A trailing comma is declined.
                if bytes.get(pos) == Some(&b'}') {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

fn flow_sequence<'a>(
    line: &'a str,
    mut pos: usize,
    depth: usize,
    nodes: &mut usize,
) -> Option<(Node<'a>, usize)> {
    let bytes = line.as_bytes();
    let mut items = Vec::new();
    pos = skip_spaces(line, pos);
    if bytes.get(pos) == Some(&b']') {
        return Some((Node::Seq(items), pos + 1));
    }
    loop {
        let (value, end) = flow_node(line, pos, depth + 1, nodes)?;
        items.push(value);
        pos = skip_spaces(line, end);
        match *bytes.get(pos)? {
            b']' => return Some((Node::Seq(items), pos + 1)),
            b',' => {
                pos = skip_spaces(line, pos + 1);
                if matches!(bytes.get(pos), Some(b']' | b',')) {
                    return None;
                }
            }
            // `[a: b]` (a one-pair mapping) and anything else are declined.
            _ => return None,
        }
    }
}

/// The bytes at which a flow scalar may end or be declined; every other byte is text.
const FLOW_PLAIN_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut i = 0;
    let special = b",[]{}:#";
    while i < special.len() {
        stops[special[i] as usize] = true;
        i += 1;
    }
    stops
};

/// A plain scalar in a flow collection: its text (trailing spaces trimmed) and where it
/// ends. It ends before `,`, `[`, `]`, `{`, `}` or a `:` followed by a space or one of
/// those; a comment inside a flow line, a `:` inside the text or an indicator at its
/// start are declined.
fn flow_plain(line: &str, pos: usize) -> Option<(&str, usize)> {
    let bytes = line.as_bytes();
    let first = *bytes.get(pos)?;
    if first == b'-' || is_indicator(first) {
        let next = bytes.get(pos + 1);
        if !(first == b'-'
            && next.is_some_and(|&b| !matches!(b, b' ' | b',' | b'[' | b']' | b'{' | b'}')))
        {
            return None;
        }
    }
    let mut end = pos;
    while let Some(&b) = bytes.get(end) {
        if !FLOW_PLAIN_STOPS[usize::from(b)] {
            end += 1;
            continue;
        }
        match b {
            b',' | b'[' | b']' | b'{' | b'}' => break,
            b':' => {
                if matches!(
                    bytes.get(end + 1),
                    Some(b' ' | b',' | b'[' | b']' | b'{' | b'}')
                ) {
                    break;
                }
                return None;
            }
            b'#' if bytes[end - 1] == b' ' => return None,
            _ => end += 1,
        }
    }
    let text = line[pos..end].trim_end_matches(' ');
    (!text.is_empty()).then_some((text, end))
}

/// A quoted scalar starting at `pos` (its quote) and closing on the same line: its text
/// and the position after the closing quote. The text is borrowed from the line unless
/// it holds an escape.
fn quoted(line: &str, pos: usize) -> Option<(Cow<'_, str>, usize)> {
    let bytes = line.as_bytes();
    let quote = *bytes.get(pos)?;
    let mut text = String::new();
    let mut i = pos + 1;
    if quote == b'\'' {
        loop {
            let close = i + line.get(i..)?.find('\'')?;
            let escaped_quote = bytes.get(close + 1) == Some(&b'\'');
            if i == pos + 1 && !escaped_quote {
                return Some((Cow::Borrowed(&line[i..close]), close + 1));
            }
            text.push_str(&line[i..close]);
            if escaped_quote {
                text.push('\'');
                i = close + 2;
            } else {
                return Some((Cow::Owned(text), close + 1));
            }
        }
    }
    loop {
        let stop = i + line.get(i..)?.find(['"', '\\'])?;
        if bytes[stop] == b'"' {
            if i == pos + 1 {
                return Some((Cow::Borrowed(&line[i..stop]), stop + 1));
            }
            text.push_str(&line[i..stop]);
            return Some((Cow::Owned(text), stop + 1));
        }
        text.push_str(&line[i..stop]);
        let escape = *bytes.get(stop + 1)?;
        i = stop + 2;
        let hex = |len: usize| -> Option<char> {
            let digits = line.get(stop + 2..stop + 2 + len)?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            char::from_u32(u32::from_str_radix(digits, 16).ok()?)
        };
        let unescaped = match escape {
            b'\\' => '\\',
            b'"' => '"',
            b'/' => '/',
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'0' => '\0',
            b'x' => {
                i += 2;
                hex(2)?
            }
            b'u' => {
                i += 4;
                hex(4)?
            }
            b'U' => {
                i += 8;
                hex(8)?
            }
            _ => return None,
        };
        text.push(unescaped);
    }
}

/// A mapping being read: its entries in order, refusing a repeated key. A long mapping
/// (a ConfigMap's data) checks repeats by hash, so reading it stays linear.
#[derive(Default)]
struct MappingBuilder<'a> {
    entries: Vec<(Cow<'a, str>, Node<'a>)>,
    hashes: Option<std::collections::HashSet<u64>>,
}

/// Up to this many keys, a repeat is looked for by comparing keys.
const LINEAR_KEYS: usize = 16;

impl<'a> MappingBuilder<'a> {
    /// Adds an entry; `None` when the key is already there.
    fn insert(&mut self, key: Cow<'a, str>, value: Node<'a>) -> Option<()> {
        let hash = |key: &str| xxhash_rust::xxh3::xxh3_64(key.as_bytes());
        if self.entries.len() >= LINEAR_KEYS && self.hashes.is_none() {
            self.hashes = Some(self.entries.iter().map(|(k, _)| hash(k)).collect());
        }
        let repeated = match &mut self.hashes {
            None => self.entries.iter().any(|(k, _)| *k == key),
            Some(hashes) => {
                !hashes.insert(hash(&key)) && self.entries.iter().any(|(k, _)| *k == key)
            }
        };
        if repeated {
            return None;
        }
        self.entries.push((key, value));
        Some(())
    }
}

#[cfg(test)]
mod tests;
