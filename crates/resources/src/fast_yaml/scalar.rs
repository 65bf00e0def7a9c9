//! What a plain scalar means: serde-saphyr's inference for untyped values (null, YAML 1.1
//! booleans, integers with legacy octal, floats, else text), restated for the fast reader.
//!
//! The integer and float rules follow serde-saphyr's `parse_scalars` step by step, so a
//! value read here equals the one serde-saphyr gives; a spelling it would refuse (a
//! non-finite float) is declined.

use std::borrow::Cow;

use serde_json::Number;

use crate::node::Node;

/// The value of a plain scalar in a value position, or `None` to decline the document.
pub(super) fn plain_value(text: &str) -> Option<Node<'_>> {
    // Most values are names: a letter that starts no null, boolean or number (those start
    // with `n`, `y`, `t`, `f`, `o`, a digit, a sign or `.`; `inf` and `nan` are text).
    if let Some(first) = text.bytes().next()
        && first.is_ascii_alphabetic()
        && !matches!(first.to_ascii_lowercase(), b'n' | b'y' | b't' | b'f' | b'o')
    {
        return Some(Node::String(Cow::Borrowed(text)));
    }
    if is_null(text) {
        return Some(Node::Null);
    }
    if let Some(b) = yaml11_bool(text) {
        return Some(Node::Bool(b));
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let uppercase_radix = matches!(unsigned.as_bytes(), [b'0', b'X' | b'O' | b'B', ..]);
    let signed_nan = text.len() != unsigned.len() && matches!(unsigned, ".nan" | ".NaN" | ".NAN");
    if uppercase_radix || signed_nan {
        return Some(Node::String(Cow::Borrowed(text)));
    }
    if text.starts_with('-') {
        if let Some(v) = int_signed(text).and_then(|v| i64::try_from(v).ok()) {
            return Some(Node::Number(Number::from(v)));
        }
    } else if let Some(v) = int_unsigned(text).and_then(|v| u64::try_from(v).ok()) {
        return Some(Node::Number(Number::from(v)));
    }
    match float(text) {
        Float::Finite(v) => Number::from_f64(v).map(Node::Number),
        // serde-saphyr refuses a non-finite untyped float: that document is not read here.
        Float::NonFinite => None,
        Float::Text => Some(Node::String(Cow::Borrowed(text))),
    }
}

/// Whether a plain scalar is null.
pub(super) fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn yaml11_bool(text: &str) -> Option<bool> {
    let is = |word: &str| text.eq_ignore_ascii_case(word);
    if is("true") || is("yes") || is("y") || is("on") {
        Some(true)
    } else if is("false") || is("no") || is("n") || is("off") {
        Some(false)
    } else {
        None
    }
}

/// Digits with single underscores between them, in `radix`.
fn digits(digits: &str, radix: u32) -> Option<u128> {
    let bytes = digits.as_bytes();
    let mut value: u128 = 0;
    let mut saw = false;
    for (i, &b) in bytes.iter().enumerate() {
        let digit = match b {
            b'_' => {
                let prev_ok = i > 0 && bytes[i - 1] != b'_';
                let next_ok = i + 1 < bytes.len() && bytes[i + 1] != b'_';
                if !prev_ok || !next_ok {
                    return None;
                }
                continue;
            }
            b'0'..=b'9' => u32::from(b - b'0'),
            b'a'..=b'f' if radix > 10 => 10 + u32::from(b - b'a'),
            b'A'..=b'F' if radix > 10 => 10 + u32::from(b - b'A'),
            _ => return None,
        };
        if digit >= radix {
            return None;
        }
        value = value
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(digit))?;
        saw = true;
    }
    saw.then_some(value)
}

/// The radix and digits of an unsigned spelling, with legacy octal (`0755`) on, as the
/// decoder's options set it.
fn radix_and_digits(rest: &str) -> (u32, &str) {
    fn strip(digits: &str) -> &str {
        digits.strip_prefix('_').unwrap_or(digits)
    }
    if let Some(r) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        (16, strip(r))
    } else if let Some(r) = rest.strip_prefix("0o").or_else(|| rest.strip_prefix("0O")) {
        (8, strip(r))
    } else if let Some(r) = rest.strip_prefix("0b").or_else(|| rest.strip_prefix("0B")) {
        (2, strip(r))
    } else if rest == "0" {
        (8, "0")
    } else if let Some(r) = rest.strip_prefix('0') {
        (8, strip(r))
    } else {
        (10, rest)
    }
}

fn int_signed(text: &str) -> Option<i128> {
    let (negative, rest) = match text.strip_prefix('+') {
        Some(r) => (false, r),
        None => match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        },
    };
    let (radix, spelled) = radix_and_digits(rest);
    let magnitude = digits(spelled, radix)?;
    if negative {
        if magnitude == (i128::MAX as u128) + 1 {
            Some(i128::MIN)
        } else {
            i128::try_from(magnitude).ok()?.checked_neg()
        }
    } else {
        i128::try_from(magnitude).ok()
    }
}

fn int_unsigned(text: &str) -> Option<u128> {
    if text.starts_with('-') {
        return None;
    }
    let rest = text.strip_prefix('+').unwrap_or(text);
    let (radix, spelled) = radix_and_digits(rest);
    digits(spelled, radix)
}

enum Float {
    Finite(f64),
    NonFinite,
    Text,
}

fn float(text: &str) -> Float {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(
        unsigned,
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF"
    ) {
        return Float::NonFinite;
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Float::Finite(v),
        // An overflowing numeral (`1e999`) is non-finite; `inf` or `nan` spelled out is text.
        Ok(_)
            if text
                .strip_prefix(['+', '-'])
                .unwrap_or(text)
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_digit) =>
        {
            Float::NonFinite
        }
        _ => Float::Text,
    }
}
