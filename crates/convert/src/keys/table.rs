//! The keys one layer (an object's annotations, the global ConfigMap) sets, parsed once
//! and found by the key's identity instead of by comparing names: a path's conversion
//! reads a few dozen keys, most of them set in no layer.

use std::any::Any;

/// A key's identity: where its name is. Every key is one `static` (its parsed default
/// lives in it), so its name is one string in the binary, and two keys with different
/// names never share an address and a length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct KeyId(usize, usize);

impl KeyId {
    pub(super) fn of(name: &'static str) -> Self {
        Self(name.as_ptr() as usize, name.len())
    }
}

/// A parsed value of some key's type.
type Parsed = Box<dyn Any + Send + Sync>;

/// Values by key, in key order.
#[derive(Debug, Default)]
pub(super) struct KeyTable(Vec<(KeyId, Parsed)>);

impl KeyTable {
    /// Sets `name`'s value, unless it is set already.
    pub(super) fn set_once(&mut self, name: &'static str, value: Parsed) {
        let id = KeyId::of(name);
        if let Err(position) = self.find(id) {
            self.0.insert(position, (id, value));
        }
    }

    pub(super) fn contains(&self, name: &'static str) -> bool {
        self.find(KeyId::of(name)).is_ok()
    }

    /// The value set for `name`, when set: the key's own parser made it, so it is a `T`.
    pub(super) fn get<T: Clone + 'static>(&self, name: &'static str) -> Option<T> {
        let position = self.find(KeyId::of(name)).ok()?;
        let value = self.0[position].1.downcast_ref::<T>();
        debug_assert!(
            value.is_some(),
            "the value of key {name} is not of its type"
        );
        value.cloned()
    }

    fn find(&self, id: KeyId) -> Result<usize, usize> {
        self.0.binary_search_by_key(&id, |(known, _)| *known)
    }

    /// Whether it sets any key of `group`.
    pub(super) fn sets_any(&self, group: &KeyGroup) -> bool {
        self.0.iter().any(|(id, _)| group.contains(*id))
    }
}

/// Keys one layer names, in key order.
#[derive(Debug, Default)]
pub(super) struct KeySet(Vec<KeyId>);

impl KeySet {
    pub(super) fn insert(&mut self, name: &'static str) {
        let id = KeyId::of(name);
        if let Err(position) = self.0.binary_search(&id) {
            self.0.insert(position, id);
        }
    }

    pub(super) fn contains(&self, name: &'static str) -> bool {
        self.0.binary_search(&KeyId::of(name)).is_ok()
    }

    /// Whether it names any key of `group`.
    pub(super) fn names_any(&self, group: &KeyGroup) -> bool {
        self.0.iter().any(|id| group.contains(*id))
    }
}

/// Keys one conversion step reads, so that a step whose keys no layer sets can skip
/// reading them one by one: a layer sets a few keys, a step reads dozens.
pub struct KeyGroup {
    keys: &'static [&'static dyn super::KeyInfo],
    ids: std::sync::OnceLock<Vec<KeyId>>,
}

impl KeyGroup {
    /// The group of `keys`.
    pub const fn new(keys: &'static [&'static dyn super::KeyInfo]) -> Self {
        Self {
            keys,
            ids: std::sync::OnceLock::new(),
        }
    }

    /// Whether the group holds `key`.
    #[cfg(test)]
    pub(crate) fn holds(&self, key: &dyn super::KeyInfo) -> bool {
        self.contains(KeyId::of(key.name()))
    }

    fn contains(&self, id: KeyId) -> bool {
        let ids = self.ids.get_or_init(|| {
            let mut ids: Vec<KeyId> = self.keys.iter().map(|key| KeyId::of(key.name())).collect();
            ids.sort_unstable();
            ids
        });
        ids.binary_search(&id).is_ok()
    }
}

impl std::fmt::Debug for KeyGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(|key| key.name()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_a_name_and_an_identity_of_its_own() {
        // Two keys of one name would share a value found by name, and only the first
        // would be found by identity.
        let mut names: Vec<&str> = super::super::ALL_KEYS
            .iter()
            .map(|key| key.name())
            .collect();
        let mut ids: Vec<KeyId> = names.iter().map(|name| KeyId::of(name)).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        ids.sort();
        ids.dedup();
        assert_eq!((names.len(), ids.len()), (count, count));
    }

    #[test]
    fn a_value_is_found_by_its_key_and_the_first_one_set_stays() {
        let mut table = KeyTable::default();
        table.set_once(super::super::TIMEOUT_SERVER.name, Box::new(7_u32));
        table.set_once(super::super::TIMEOUT_SERVER.name, Box::new(8_u32));
        assert_eq!(table.get::<u32>(super::super::TIMEOUT_SERVER.name), Some(7));
        assert_eq!(table.get::<u32>(super::super::TIMEOUT_CONNECT.name), None);
        assert!(table.contains(super::super::TIMEOUT_SERVER.name));
        let mut set = KeySet::default();
        set.insert(super::super::HSTS.name);
        assert!(set.contains(super::super::HSTS.name));
        assert!(!set.contains(super::super::TIMEOUT_SERVER.name));
    }
}
