//! A fixed combination of the learned reference-free scores, a referenced one and the
//! response's specificity, fitted to no human rating: each part's scores are rank-normalised
//! over the corpus (average ranks divided by the number of items the part scores, so in
//! (0, 1]), and an item's combined score is the mean of the parts it has.
//!
//! [`COMBINED`] = mean of the ranks of [`COMBINED_PARTS`]: the SLM, BERT-RUBER's unreferenced
//! score (relatedness to the context), Greedy Matching (closeness to the references) and NIDF
//! (specificity, `dialeval_metrics::specificity`; the likability side of USL-H's
//! decomposition, which no other part measures). An item without a reference (FED, a human
//! response) is scored by its reference-free parts alone, and so is a corpus without any (its
//! embedding family runs and scores nothing); a part whose family was left out (`--skip`)
//! leaves the combination out. The three-part rule was chosen once among six candidates on
//! USR-PersonaChat and FED together (best mean Spearman with Overall over the two sets, with
//! the BERT-RUBER checkpoint shipped then); NIDF joined it as a fourth equal part in round 3
//! (issue 43; both measured in the README). It takes no parameter and no weight.
//!
//! Like BERT-RUBER's hybrids, the combination is relative to the corpus scored, so it is
//! computed over the whole table (after every chunk, and again after a merge of shards), never
//! per chunk.

use dialeval_metrics::correlation::rank_average;

use crate::error::Result;
use crate::table::{Column, MetricName, ScoreTable};

/// The combined metric's name.
pub const COMBINED: &str = "Combined";

/// The metrics [`COMBINED`] averages, by rank.
pub const COMBINED_PARTS: [&str; 4] = ["SLM", "BERT-RUBER-unref", "Greedy-Matching", "NIDF"];

/// The families that make [`COMBINED_PARTS`], in the same order.
pub const COMBINED_FAMILIES: [&str; 4] = ["slm", "bert_ruber", "embedding", "specificity"];

/// Each defined cell's average rank among the defined cells, divided by their count (in
/// (0, 1]); undefined cells stay undefined.
pub fn rank_normalize(values: &[Option<f64>]) -> Vec<Option<f64>> {
    let defined: Vec<f64> = values.iter().flatten().copied().collect();
    let n = defined.len() as f64;
    let mut ranks = rank_average(&defined).into_iter();
    values.iter().map(|v| v.and_then(|_| ranks.next()).map(|r| r / n)).collect()
}

/// The mean, per item, of the rank-normalised `parts` that the item has (`None` where it has
/// none).
pub fn mean_of_ranks(parts: &[&Column], items: usize) -> Vec<Option<f64>> {
    let mut sum = vec![0.0_f64; items];
    let mut count = vec![0_u32; items];
    for part in parts {
        for (i, rank) in rank_normalize(&part.values).into_iter().enumerate().take(items) {
            if let Some(r) = rank {
                sum[i] += r;
                count[i] += 1;
            }
        }
    }
    sum.into_iter().zip(count).map(|(s, n)| (n > 0).then(|| s / f64::from(n))).collect()
}

/// `table` with the [`COMBINED`] column computed from its parts and put last (replacing one
/// already there, as a merged table of shards has), when every part's family ran (`ran(family)`,
/// for [`COMBINED_FAMILIES`]): a part column that is absent although its family ran scored no
/// item (no references anywhere) and counts as empty. Otherwise, or when no item has a part,
/// `table` without it (a combination of fewer parts by choice would be another metric under
/// the same name).
///
/// # Errors
/// None in practice: the column has the table's length and finite values.
pub fn with_combined(table: ScoreTable, ran: impl Fn(&str) -> bool) -> Result<ScoreTable> {
    let name = MetricName::new(COMBINED);
    let combined = if COMBINED_FAMILIES.iter().all(|f| ran(f)) {
        let parts: Vec<&Column> = COMBINED_PARTS.iter().filter_map(|p| table.column(&MetricName::new(*p))).collect();
        Some(Column::new(COMBINED, mean_of_ranks(&parts, table.items()))).filter(|c| c.values.iter().any(Option::is_some))
    } else {
        None
    };
    let mut out = ScoreTable::new(table.items());
    for column in table.into_columns().into_iter().filter(|c| c.metric != name) {
        out.push(column)?;
    }
    if let Some(c) = combined {
        out.push(c)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, values: &[Option<f64>]) -> Column {
        Column::new(name, values.to_vec())
    }

    #[test]
    fn ranks_are_average_ranks_over_the_defined_cells() {
        let r = rank_normalize(&[Some(3.0), None, Some(1.0), Some(3.0), Some(2.0)]);
        assert_eq!(r, vec![Some(3.5 / 4.0), None, Some(0.25), Some(3.5 / 4.0), Some(0.5)]);
        assert_eq!(rank_normalize(&[None, None]), vec![None, None]);
    }

    #[test]
    fn the_combination_averages_the_parts_an_item_has_and_needs_every_part_column() {
        let slm = column("SLM", &[Some(0.9), Some(0.1), Some(0.5), None]);
        let unref = column("BERT-RUBER-unref", &[Some(0.2), Some(0.1), Some(0.3), None]);
        let greedy = column("Greedy-Matching", &[Some(0.7), Some(0.8), None, None]);
        let nidf = column("NIDF", &[Some(0.4), Some(0.6), Some(0.5), None]);
        let mut table = ScoreTable::new(4);
        for c in [slm.clone(), unref.clone(), greedy, nidf] {
            table.push(c).unwrap();
        }
        let all = |_: &str| true;
        let out = with_combined(table, all).unwrap();
        let combined = out.column(&MetricName::new(COMBINED)).unwrap();
        // ranks: SLM 1, 1/3, 2/3; unref 2/3, 1/3, 1; greedy 1/2, 1 (of two); NIDF 1/3, 1, 2/3.
        let want = [(1.0 + 2.0 / 3.0 + 0.5 + 1.0 / 3.0) / 4.0, (1.0 / 3.0 + 1.0 / 3.0 + 1.0 + 1.0) / 4.0, (2.0 / 3.0 + 1.0 + 2.0 / 3.0) / 3.0];
        for (got, want) in combined.values.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
        }
        assert_eq!(combined.values[3], None, "an item with no part has no combined score");
        assert_eq!(out.metrics().last().map(MetricName::as_str), Some(COMBINED));
        // Computed again (a merge): replaced, not duplicated, and the same.
        let again = with_combined(out.clone(), all).unwrap();
        assert_eq!(again, out);
        // A part's family left out: no combined column, and a stale one is dropped.
        let mut partial = ScoreTable::new(4);
        partial.push(slm.clone()).unwrap();
        partial.push(unref.clone()).unwrap();
        partial.push(combined.clone()).unwrap();
        assert!(with_combined(partial.clone(), |f| f != "embedding").unwrap().column(&MetricName::new(COMBINED)).is_none());
        assert!(with_combined(partial.clone(), |f| f != "specificity").unwrap().column(&MetricName::new(COMBINED)).is_none());
        // The embedding family ran but no item had a reference (and NIDF scored none): the
        // reference-free parts alone.
        let free = with_combined(partial, all).unwrap();
        let values = &free.column(&MetricName::new(COMBINED)).unwrap().values;
        assert_eq!(values[0], Some((1.0 + 2.0 / 3.0) / 2.0));
        assert_eq!(values[3], None);
        // No item with any part: no column.
        let mut empty = ScoreTable::new(2);
        empty.push(column("SLM", &[None, None])).unwrap();
        assert!(with_combined(empty, all).unwrap().column(&MetricName::new(COMBINED)).is_none());
    }
}
