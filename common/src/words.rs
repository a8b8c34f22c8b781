//! Word counts, the unit of every length figure.

/// Length in words (runs separated by white space): the unit of every length figure the
/// crates report (length-matched negatives, a score's correlation with response length).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}
