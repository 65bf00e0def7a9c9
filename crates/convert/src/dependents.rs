//! Which memoized results each lookup feeds: what a change makes stale is read here.

use rustc_hash::FxHashMap;

use crate::cache::Memo;
use crate::lookup::Dependency;
use crate::small_set::SmallSet;

/// What each memoized result looked up, and, the other way round, the results each
/// lookup feeds.
#[derive(Debug)]
pub(crate) struct Dependents {
    lookups: FxHashMap<Memo, Vec<Dependency>>,
    dependents: FxHashMap<Dependency, SmallSet<Memo>>,
    /// False for a conversion that has no next one to find stale results for.
    recording: bool,
}

impl Default for Dependents {
    fn default() -> Self {
        Self {
            lookups: FxHashMap::default(),
            dependents: FxHashMap::default(),
            recording: true,
        }
    }
}

impl Dependents {
    /// Records nothing: for a cache that converts every snapshot from scratch.
    pub(crate) fn not_recording() -> Self {
        Self {
            recording: false,
            ..Self::default()
        }
    }

    /// Whether lookups are recorded (a cache that does not record converts every
    /// snapshot from scratch).
    pub(crate) fn is_recording(&self) -> bool {
        self.recording
    }

    /// Nothing recorded, recording as this one does.
    pub(crate) fn emptied(&self) -> Self {
        Self {
            recording: self.recording,
            ..Self::default()
        }
    }

    /// The results that looked `key` up.
    pub(crate) fn of(&self, key: &Dependency) -> impl Iterator<Item = &Memo> {
        self.dependents.get(key).into_iter().flatten()
    }

    /// Records what a memoized result looked up, replacing what it looked up before.
    pub(crate) fn remember(&mut self, memo: Memo, lookups: Vec<Dependency>) {
        if !self.recording {
            return;
        }
        if let Some(before) = self.lookups.remove(&memo) {
            self.forget(&memo, before);
        }
        self.record(memo, lookups);
    }

    /// [`Dependents::remember`] for results each named once.
    pub(crate) fn remember_all(&mut self, results: Vec<(Memo, Vec<Dependency>)>) {
        if !self.recording {
            return;
        }
        // Nothing recorded yet (a start, a rebuild): nothing to replace, and every result
        // is new.
        let fresh = self.lookups.is_empty();
        if fresh {
            self.lookups.reserve(results.len());
            // Results share some lookups (the class, the global ConfigMap, a
            // namespace's Secrets): a synthetic 10k start records ~40,000 lookups of
            // ~30,000 distinct things for Ingresses, ~110,000 of ~30,000 for
            // HTTPRoutes. Half the total saves the early rehashes (all but the last
            // at most) without sizing for every repeat.
            let total: usize = results.iter().map(|(_, lookups)| lookups.len()).sum();
            self.dependents.reserve(total / 2);
        }
        for (memo, lookups) in results {
            if !fresh && let Some(before) = self.lookups.remove(&memo) {
                self.forget(&memo, before);
            }
            let replaced = self.record(memo, lookups);
            debug_assert!(!(fresh && replaced), "a result named twice in one batch");
        }
    }

    fn forget(&mut self, memo: &Memo, before: Vec<Dependency>) {
        for dependency in before {
            if let Some(dependents) = self.dependents.get_mut(&dependency) {
                dependents.remove(memo);
                if dependents.is_empty() {
                    self.dependents.remove(&dependency);
                }
            }
        }
    }

    /// Records what `memo` looked up; returns whether that replaced a record of it.
    fn record(&mut self, memo: Memo, mut lookups: Vec<Dependency>) -> bool {
        if lookups.is_empty() {
            return false;
        }
        // Kept for as long as the result: no room for more.
        lookups.shrink_to_fit();
        for dependency in &lookups {
            // Many results read the same thing (the class, the global ConfigMap, a
            // namespace's Secrets): the key is copied only the first time.
            match self.dependents.get_mut(dependency) {
                Some(dependents) => {
                    dependents.insert(memo.clone());
                }
                None => {
                    let mut dependents = SmallSet::default();
                    dependents.insert(memo.clone());
                    self.dependents.insert(dependency.clone(), dependents);
                }
            }
        }
        self.lookups.insert(memo, lookups).is_some()
    }
}
