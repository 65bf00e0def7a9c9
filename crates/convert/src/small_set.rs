//! A set kept as a sorted vector: most sets here hold one or two elements, for which one
//! small allocation beats a tree node or a hash table.

/// A sorted set of distinct values.
#[derive(Debug, Clone)]
pub(crate) struct SmallSet<T>(Vec<T>);

impl<T> Default for SmallSet<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T: Ord> SmallSet<T> {
    /// Adds a value; a value already present is left as it is.
    pub(crate) fn insert(&mut self, value: T) {
        if let Err(index) = self.0.binary_search(&value) {
            self.0.insert(index, value);
        }
    }

    /// Removes a value if present.
    pub(crate) fn remove(&mut self, value: &T) {
        if let Ok(index) = self.0.binary_search(value) {
            self.0.remove(index);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a, T> IntoIterator for &'a SmallSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::SmallSet;

    #[test]
    fn stays_sorted_and_distinct() {
        let mut set = SmallSet::default();
        for value in [3, 1, 2, 3, 1] {
            set.insert(value);
        }
        assert_eq!((&set).into_iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        set.remove(&2);
        set.remove(&9);
        assert_eq!((&set).into_iter().copied().collect::<Vec<_>>(), [1, 3]);
        assert!(!set.is_empty());
    }
}
