//! Running a function over items on every core, with a panic costing only its item.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `work` applied to every item, in the items' order, on as many threads as there are
/// cores (items are taken one at a time, so uneven items share out). An item whose work
/// panicked (a bug) gives `None`.
pub(crate) fn map_on_every_core<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let one = |item: &T| catch_unwind(AssertUnwindSafe(|| work(item))).ok();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(one).collect();
    }
    let next = AtomicUsize::new(0);
    let take_items = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, one(item)));
        }
    };
    let mut results: Vec<(usize, Option<R>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(take_items)).collect();
        // Panics are caught per item: a worker itself does not panic.
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    });
    results.sort_unstable_by_key(|(index, _)| *index);
    let mut ordered: Vec<Option<R>> = Vec::with_capacity(items.len());
    ordered.extend(results.into_iter().map(|(_, result)| result));
    ordered.resize_with(items.len(), || None);
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_and_a_panic_costs_only_its_item() {
        let items: Vec<u32> = (0..100).collect();
        let results = map_on_every_core(&items, |&n| {
            assert!(n != 42, "a bug in one item");
            n * 2
        });
        assert_eq!(results.len(), 100);
        assert_eq!(results[41], Some(82));
        assert_eq!(results[42], None);
        assert_eq!(results[99], Some(198));
    }
}
