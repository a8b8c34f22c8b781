"""The one timing helper of the benchmark scripts: the best of `runs` wall-clock runs, in ms
(the minimum is the run least disturbed by the rest of the machine)."""
import time


def best_ms(fn, runs):
    """Calls `fn` `runs` times and returns the fastest call's wall time in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)
