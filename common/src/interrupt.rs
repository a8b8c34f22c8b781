//! A cooperative stop for long work, process-wide: a binding asks for it when its user presses
//! Ctrl-C (Python's `dialeval.evaluate` polls for the signal while the job runs on another
//! thread), and the long loops check it between units of work — the pipeline between chunks
//! and families, the encoders between batches, the lexical family between items — and stop
//! with their crate's `Interrupted` error. What was finished (cached chunks, encoded texts)
//! stays, so the next run resumes from it.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every long loop of this process to stop at its next check.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Withdraws the request (a binding does so before it starts a job).
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
