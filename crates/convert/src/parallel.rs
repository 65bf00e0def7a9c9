//! Independent work on every core, for inputs large enough to pay for the threads.

/// `work` applied to every item, in the items' order: on one thread below
/// `parallel_from` items, otherwise on the shared pool's threads.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    work: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    if items.len() < parallel_from || rayon::current_num_threads() < 2 {
        return items.iter().map(work).collect();
    }
    // A panic in the work is a bug: rayon carries it on up, nothing is silently dropped.
    items.par_iter().map(work).collect()
}

/// Sorts `items` (unstable), on the shared pool's threads from `parallel_from` items.
pub(crate) fn sort_unstable<T: Ord + Send>(items: &mut [T], parallel_from: usize) {
    use rayon::slice::ParallelSliceMut;
    if items.len() < parallel_from || rayon::current_num_threads() < 2 {
        items.sort_unstable();
    } else {
        items.par_sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_on_one_thread_and_on_many() {
        let items: Vec<u32> = (0..5000).collect();
        let doubled: Vec<u32> = items.iter().map(|n| n * 2).collect();
        assert_eq!(map_in_order(&items, usize::MAX, |n| n * 2), doubled);
        assert_eq!(map_in_order(&items, 1, |n| n * 2), doubled);
        assert!(map_in_order(&[] as &[u32], 1, |n| *n).is_empty());
    }

    #[test]
    fn sorts_on_one_thread_and_on_many() {
        let items: Vec<u64> = (0..5000u64)
            .map(|n| n.wrapping_mul(2654435761) % 977)
            .collect();
        let mut expected = items.clone();
        expected.sort();
        for parallel_from in [usize::MAX, 1] {
            let mut sorted = items.clone();
            sort_unstable(&mut sorted, parallel_from);
            assert_eq!(sorted, expected);
        }
    }
}
