//! Running a function over items on every core, with a panic costing only its item.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// A change on a watched directory touches a file or two: those are read and decoded on
/// the calling thread, with no hand-over to the pool.
const PARALLEL_FROM: usize = 4;

/// Below this many items, sorting on the calling thread is faster than sharing the work
/// out.
const SORT_ON_EVERY_CORE_FROM: usize = 4096;

/// `work` applied to every item, in the items' order, on the shared pool's threads
/// (which share out uneven items). An item whose work panicked (a bug) gives `None`.
pub(crate) fn map_on_every_core<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync + Send,
) -> Vec<Option<R>> {
    use rayon::prelude::*;
    let one = |item: &T| catch_unwind(AssertUnwindSafe(|| work(item))).ok();
    if items.len() < PARALLEL_FROM || rayon::current_num_threads() < 2 {
        return items.iter().map(one).collect();
    }
    items.par_iter().with_max_len(1).map(one).collect()
}

/// Sorts `items` by `order` (unstable): on every core when they are many (every object
/// of a cold start), on the calling thread otherwise.
pub(crate) fn sort_unstable_by<T: Send>(
    items: &mut [T],
    order: impl Fn(&T, &T) -> std::cmp::Ordering + Sync,
) {
    use rayon::slice::ParallelSliceMut;
    if items.len() >= SORT_ON_EVERY_CORE_FROM {
        items.par_sort_unstable_by(order);
    } else {
        items.sort_unstable_by(order);
    }
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
