//! Independent work on every core, for inputs large enough to pay for the threads.

/// `work` applied to every item, in the items' order: on one thread below
/// `parallel_from` items, otherwise on the shared pool's threads.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    work: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    if !shared_out(items.len(), parallel_from) {
        return items.iter().map(work).collect();
    }
    // A panic in the work is a bug: rayon carries it on up, nothing is silently dropped.
    items.par_iter().map(work).collect()
}

/// Whether `items` are enough to share out and there is a pool to share them with.
fn shared_out(items: usize, parallel_from: usize) -> bool {
    items >= parallel_from && rayon::current_num_threads() >= 2
}

/// Whether [`map_streamed`] streams `items`: shared out, by a caller that is not one of
/// the pool's threads.
pub(crate) fn streams(items: usize, parallel_from: usize) -> bool {
    shared_out(items, parallel_from) && rayon::current_thread_index().is_none()
}

/// `work` applied to every item on the shared pool's threads, each result handed to
/// `take` on the calling thread with its item's index as soon as its chunk of `chunk`
/// items is done, in no particular order: the caller's own work on the results overlaps
/// the pool's. On the calling thread alone, in order, below `parallel_from` items or with
/// a pool of one thread; called from one of the pool's threads (which would wait for
/// chunks in place of working on them), every result is computed first, then taken in
/// order.
pub(crate) fn map_streamed<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    chunk: usize,
    work: impl Fn(&T) -> R + Sync + Send,
    mut take: impl FnMut(usize, R),
) {
    if !shared_out(items.len(), parallel_from) {
        for (index, item) in items.iter().enumerate() {
            take(index, work(item));
        }
        return;
    }
    if rayon::current_thread_index().is_some() {
        for (index, result) in map_in_order(items, 0, work).into_iter().enumerate() {
            take(index, result);
        }
        return;
    }
    let chunk = chunk.max(1);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Vec<R>)>();
    let work = &work;
    rayon::in_place_scope(|scope| {
        for (number, part) in items.chunks(chunk).enumerate() {
            let sender = sender.clone();
            scope.spawn(move |_| {
                let results = part.iter().map(work).collect();
                // The receiver lives until every chunk is taken: a send cannot fail. A
                // panic in the work drops its sender and reaches the caller when the
                // scope ends.
                let _ = sender.send((number * chunk, results));
            });
        }
        drop(sender);
        for (start, results) in receiver {
            for (offset, result) in results.into_iter().enumerate() {
                take(start + offset, result);
            }
        }
    });
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
    fn a_streamed_map_takes_every_result_once_with_its_index() {
        // Two threads at least, whatever the machine: the streamed path needs a pool.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build_global();
        let items: Vec<u64> = (0..5000).collect();
        for (parallel_from, chunk) in [(usize::MAX, 128), (1, 128), (1, 1), (1, 7000), (1, 0)] {
            let mut taken = vec![None; items.len()];
            map_streamed(
                &items,
                parallel_from,
                chunk,
                |n| n * 3,
                |index, tripled| {
                    assert!(taken[index].replace(tripled).is_none(), "{index} twice");
                },
            );
            let tripled: Vec<Option<u64>> = items.iter().map(|n| Some(n * 3)).collect();
            assert_eq!(taken, tripled, "{parallel_from} {chunk}");
        }
        map_streamed(
            &[] as &[u64],
            1,
            4,
            |n| *n,
            |_, _| panic!("nothing to take"),
        );
        // From one of the pool's threads: computed first, then taken in order.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build_global();
        let mut taken = Vec::new();
        rayon::scope(|_| {
            map_streamed(
                &items,
                1,
                128,
                |n| n * 3,
                |index, tripled| {
                    taken.push((index, tripled));
                },
            );
        });
        let in_order: Vec<(usize, u64)> = items.iter().map(|&n| (n as usize, n * 3)).collect();
        assert_eq!(taken, in_order);
    }

    #[test]
    fn a_panic_in_a_streamed_map_reaches_the_caller() {
        let items: Vec<u32> = (0..3000).collect();
        let outcome = std::panic::catch_unwind(|| {
            map_streamed(
                &items,
                1,
                64,
                |&n| {
                    assert!(n != 2024, "a bug in one item");
                    n
                },
                |_, _| {},
            );
        });
        assert!(outcome.is_err());
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
