//! A shared, immutable name: cloning one (as every table keyed by an object does) copies
//! a pointer, not the text.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A namespace or object name, shared by every copy.
#[derive(Clone, Eq)]
pub struct Name(Arc<str>);

impl std::hash::Hash for Name {
    /// The text's hash, as its equality compares the text.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq for Name {
    /// Copies of one name compare without reading the text (`Arc<str>`'s own equality
    /// reads it even then).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Ord for Name {
    /// The texts' order; copies of one name (a namespace shared by its objects' references)
    /// compare without reading the text.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            std::cmp::Ordering::Equal
        } else {
            self.0.cmp(&other.0)
        }
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Name {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, shared with this name rather than copied.
    pub fn shared_text(&self) -> Arc<str> {
        Arc::clone(&self.0)
    }
}

impl Default for Name {
    fn default() -> Self {
        Name(Arc::from(""))
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Name {
    fn from(text: String) -> Self {
        Name(Arc::from(text))
    }
}

impl From<&String> for Name {
    fn from(text: &String) -> Self {
        Name(Arc::from(text.as_str()))
    }
}

impl From<&Name> for Name {
    fn from(name: &Name) -> Self {
        name.clone()
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Self {
        Name(Arc::from(text))
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == &*other.0
    }
}

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_order_as_their_texts_whether_shared_or_not() {
        let texts = ["", "a", "ab", "b", "ns-10", "ns-2"];
        for a in texts {
            for b in texts {
                let (name_a, name_b) = (Name::from(a), Name::from(b));
                assert_eq!(name_a.cmp(&name_b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(name_a.partial_cmp(&name_b), Some(a.cmp(b)));
                assert_eq!(name_a == name_b, a == b);
            }
            let shared = Name::from(a);
            assert_eq!(shared.cmp(&shared.clone()), std::cmp::Ordering::Equal);
            assert!(shared == shared.clone());
        }
    }
}
