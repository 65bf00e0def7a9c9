//! A set kept as a sorted vector while small, and as a hash set once large: most sets
//! here hold one or two elements, for which one small allocation beats a tree node or a
//! hash table, but a few (the dependents of the global ConfigMap) hold every object,
//! where a vector's insertions and removals would cost a shift each.

use std::hash::Hash;

use rustc_hash::FxHashSet;

/// Above this many elements a set becomes a hash set.
const LARGE_FROM: usize = 64;

/// A set of distinct values.
#[derive(Debug, Clone)]
pub(crate) enum SmallSet<T> {
    /// Sorted.
    Few(Vec<T>),
    /// Unordered.
    Many(FxHashSet<T>),
}

impl<T> Default for SmallSet<T> {
    fn default() -> Self {
        Self::Few(Vec::new())
    }
}

impl<T: Ord + Hash> SmallSet<T> {
    /// Adds a value; a value already present is left as it is.
    pub(crate) fn insert(&mut self, value: T) {
        match self {
            Self::Few(values) => {
                if let Err(index) = values.binary_search(&value) {
                    // Most sets stay at one or two values: room for just one more.
                    if values.len() == values.capacity() {
                        values.reserve_exact(1);
                    }
                    values.insert(index, value);
                    if values.len() > LARGE_FROM {
                        *self = Self::Many(std::mem::take(values).into_iter().collect());
                    }
                }
            }
            Self::Many(values) => {
                values.insert(value);
            }
        }
    }

    /// Removes a value if present.
    pub(crate) fn remove(&mut self, value: &T) {
        match self {
            Self::Few(values) => {
                if let Ok(index) = values.binary_search(value) {
                    values.remove(index);
                }
            }
            Self::Many(values) => {
                values.remove(value);
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Self::Few(values) => values.is_empty(),
            Self::Many(values) => values.is_empty(),
        }
    }

    /// Every value, in no particular order.
    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = &T> + '_> {
        match self {
            Self::Few(values) => Box::new(values.iter()),
            Self::Many(values) => Box::new(values.iter()),
        }
    }
}

impl<'a, T: Ord + Hash> IntoIterator for &'a SmallSet<T> {
    type Item = &'a T;
    type IntoIter = Box<dyn Iterator<Item = &'a T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::SmallSet;

    fn sorted(set: &SmallSet<u32>) -> Vec<u32> {
        let mut values: Vec<u32> = set.iter().copied().collect();
        values.sort_unstable();
        values
    }

    #[test]
    fn holds_each_value_once_small_or_large() {
        let mut set = SmallSet::default();
        for value in [3, 1, 2, 3, 1] {
            set.insert(value);
        }
        assert_eq!(sorted(&set), [1, 2, 3]);
        set.remove(&2);
        set.remove(&9);
        assert_eq!(sorted(&set), [1, 3]);
        for value in 0..200 {
            set.insert(value);
        }
        assert!(matches!(set, SmallSet::Many(_)));
        for value in 0..199 {
            set.remove(&value);
        }
        assert_eq!(sorted(&set), [199]);
        set.remove(&199);
        assert!(set.is_empty());
    }
}
