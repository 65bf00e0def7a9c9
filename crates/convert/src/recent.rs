//! Sharing one allocation between the equal values a thread builds one after another.

use std::sync::Arc;

/// How many distinct values are remembered: a cluster's backends mostly repeat a handful
/// of settings (the defaults, and a few annotated variants), in no particular order.
const REMEMBERED: usize = 8;

/// The last few distinct values shared, the most recently used first. The same value in
/// another allocation is still equal: this saves memory, it decides nothing.
pub(crate) struct Recent<T>(Vec<Arc<T>>);

impl<T: PartialEq> Recent<T> {
    pub(crate) const fn new() -> Self {
        Self(Vec::new())
    }

    /// `value` in the allocation of an equal one shared before, or in a new one.
    pub(crate) fn share(&mut self, value: T) -> Arc<T> {
        match self.0.iter().position(|known| **known == value) {
            Some(found) => {
                self.0[..=found].rotate_right(1);
                Arc::clone(&self.0[0])
            }
            None => {
                let value = Arc::new(value);
                if self.0.len() == REMEMBERED {
                    self.0.pop();
                }
                self.0.insert(0, Arc::clone(&value));
                value
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_allocation_and_the_least_recent_is_forgotten() {
        let mut recent = Recent::new();
        let first = recent.share(String::from("a"));
        let other = recent.share(String::from("b"));
        assert!(Arc::ptr_eq(&first, &recent.share(String::from("a"))));
        assert!(!Arc::ptr_eq(&first, &other));
        // "a" was used last: with the list full of newer values, "b" is forgotten and "a"
        // is not.
        for n in 0..REMEMBERED - 1 {
            recent.share(n.to_string());
        }
        assert!(Arc::ptr_eq(&first, &recent.share(String::from("a"))));
        assert!(!Arc::ptr_eq(&other, &recent.share(String::from("b"))));
        assert_eq!(*recent.share(String::from("b")), "b");
        assert_eq!(recent.0.len(), REMEMBERED);
    }
}
