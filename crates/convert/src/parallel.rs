//! Independent work on every core, for inputs large enough to pay for the threads.

/// `work` applied to every item, in the items' order: on one thread below
/// `parallel_from` items, otherwise in one contiguous chunk per core.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if items.len() < parallel_from || threads < 2 {
        return items.iter().map(work).collect();
    }
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|chunk| scope.spawn(move || chunk.iter().map(work).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            // A panic in the work is a bug: it goes on up, nothing is silently dropped.
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
            .collect()
    })
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
}
