//! Benchmarks live as `[[bench]]` targets.
