//! Work over all cores with rayon (feature `parallel`), in input order, or sequentially without it.

/// `f` applied to every item, in order. With the `parallel` feature the items are spread over
/// rayon's pool (all cores, or the pool a caller `install`s); the output order is the input
/// order whatever the number of threads, so a deterministic `f` gives identical results on any
/// machine. Without the feature it is a plain sequential map.
///
/// # Examples
/// ```
/// assert_eq!(dialeval_common::par_map(&[1, 2, 3], |x| x * 10), vec![10, 20, 30]);
/// ```
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// Threads [`par_map`] and [`par_join`] spread work over: rayon's current pool with the
/// `parallel` feature, else 1. Splitting work costs a little: callers skip it on one thread.
pub fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// `(a(), b())`, the two run in parallel on rayon's pool with the `parallel` feature (for a
/// divide-and-conquer whose split points do not depend on the thread count, so its result is
/// the same on any machine), one after the other without it.
pub fn par_join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}
