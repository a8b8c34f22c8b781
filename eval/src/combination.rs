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
//! Beside it, one composite per quality family ([`COMPOSITES`], docs/composites.md, the rule
//! written down before it was measured): [`COHERENCE`] (relatedness and closeness to the
//! references: does it follow?) and [`ENGAGEMENT`] (relatedness and specificity: is it worth
//! reading?). Each is the mean of its aspects, each aspect the mean of its parts' ranks, so an
//! aspect weighs the same whatever its number of parts; no weight is fitted to a rating.
//!
//! Like BERT-RUBER's hybrids, the combinations are relative to the corpus scored, so they are
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

/// One thing a response can be judged on, measured by the mean of its parts' ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aspect {
    /// What it measures.
    pub name: &'static str,
    /// Its parts: metrics of the main job, each with the family that gives it.
    pub parts: &'static [(&'static str, &'static str)],
}

/// Does the response follow from its context (and the persona or knowledge the item gives)?
pub const RELATEDNESS: Aspect = Aspect { name: "relatedness", parts: &[("SLM", "slm"), ("BERT-RUBER-unref", "bert_ruber")] };

/// Does it say what people said in that place?
pub const REFERENCE_CLOSENESS: Aspect = Aspect { name: "closeness to the references", parts: &[("Greedy-Matching", "embedding")] };

/// Does it say something particular rather than "i don't know"?
pub const SPECIFICITY: Aspect = Aspect { name: "specificity", parts: &[("NIDF", "specificity")] };

/// A score for one family of qualities: the mean, per item, of the aspects it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Composite {
    /// The column's name.
    pub name: &'static str,
    /// The qualities it serves, for documentation.
    pub serves: &'static str,
    /// Its aspects, each weighing the same.
    pub aspects: &'static [Aspect],
}

impl Composite {
    /// The families its parts come from.
    pub fn families(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.aspects.iter().flat_map(|a| a.parts.iter().map(|(_, family)| *family))
    }
}

/// Coherence: relatedness and closeness to the references (no specificity: a generic reply often
/// follows perfectly).
pub const COHERENCE: Composite =
    Composite { name: "Combined-Coherence", serves: "Coherence, Maintains Context, Relevant, Correct, Semantically appropriate", aspects: &[RELATEDNESS, REFERENCE_CLOSENESS] };

/// Engagement: relatedness and specificity (no references: closeness to one reply people gave
/// rewards the expected reply).
pub const ENGAGEMENT: Composite =
    Composite { name: "Combined-Engagement", serves: "Engagingness, Interesting, Specific, Informative, Uses Knowledge (Groundedness)", aspects: &[RELATEDNESS, SPECIFICITY] };

/// The per-quality composites, in the order their columns follow [`COMBINED`].
pub const COMPOSITES: [Composite; 2] = [COHERENCE, ENGAGEMENT];

/// Whether `metric` is one of the combinations this module computes ([`COMBINED`],
/// [`COMPOSITES`]) rather than a family's metric.
pub fn is_combination(metric: &str) -> bool {
    metric == COMBINED || COMPOSITES.iter().any(|c| c.name == metric)
}

/// Each defined cell's average rank among the defined cells, divided by their count (in
/// (0, 1]); undefined cells stay undefined.
pub fn rank_normalize(values: &[Option<f64>]) -> Vec<Option<f64>> {
    let defined: Vec<f64> = values.iter().flatten().copied().collect();
    let n = defined.len() as f64;
    let mut ranks = rank_average(&defined).into_iter();
    values.iter().map(|v| v.and_then(|_| ranks.next()).map(|r| r / n)).collect()
}

/// The mean, per item, of the `parts` that the item has (`None` where it has none).
fn mean_per_item(parts: &[Vec<Option<f64>>], items: usize) -> Vec<Option<f64>> {
    let mut sum = vec![0.0_f64; items];
    let mut count = vec![0_u32; items];
    for part in parts {
        for (i, value) in part.iter().enumerate().take(items) {
            if let Some(v) = value {
                sum[i] += v;
                count[i] += 1;
            }
        }
    }
    sum.into_iter().zip(count).map(|(s, n)| (n > 0).then(|| s / f64::from(n))).collect()
}

/// The mean, per item, of the rank-normalised `parts` that the item has (`None` where it has
/// none).
pub fn mean_of_ranks(parts: &[&Column], items: usize) -> Vec<Option<f64>> {
    let ranks: Vec<Vec<Option<f64>>> = parts.iter().map(|p| rank_normalize(&p.values)).collect();
    mean_per_item(&ranks, items)
}

/// `composite` over `table`: per item, the mean of its aspects that the item has, each the mean
/// of the ranks of its parts (a part column that is absent scored no item).
pub fn composite_scores(composite: &Composite, table: &ScoreTable) -> Vec<Option<f64>> {
    let aspects: Vec<Vec<Option<f64>>> = composite
        .aspects
        .iter()
        .map(|a| {
            let parts: Vec<&Column> = a.parts.iter().filter_map(|(metric, _)| table.column(&MetricName::new(*metric))).collect();
            mean_of_ranks(&parts, table.items())
        })
        .collect();
    mean_per_item(&aspects, table.items())
}

/// `table` with the [`COMBINED`] column and the [`COMPOSITES`] computed from their parts and
/// put last in that order (replacing those already there, as a merged table of shards has).
/// [`COMBINED`] is computed when every family of [`COMBINED_FAMILIES`] ran (`ran(family)`), a
/// composite when every family of its parts ran: a part column that is absent although its
/// family ran scored no item (no references anywhere) and counts as empty. Otherwise, or when
/// no item has a part, the column is left out (a combination of fewer parts by choice would be
/// another metric under the same name).
///
/// # Errors
/// None in practice: the columns have the table's length and finite values.
pub fn with_combinations(table: ScoreTable, ran: impl Fn(&str) -> bool) -> Result<ScoreTable> {
    combine(table, |name| if name == COMBINED { COMBINED_FAMILIES.iter().all(|f| ran(f)) } else { COMPOSITES.iter().filter(|c| c.name == name).all(|c| c.families().all(&ran)) })
}

/// `table` with the combinations that `applies(name)` recomputed over it, put last, and any
/// other combination column dropped (what a merge of shards does with the combinations the
/// shards had: [`with_combinations`] decided them there).
///
/// # Errors
/// As [`with_combinations`].
pub fn combine(table: ScoreTable, applies: impl Fn(&str) -> bool) -> Result<ScoreTable> {
    let mut combinations = Vec::new();
    if applies(COMBINED) {
        let parts: Vec<&Column> = COMBINED_PARTS.iter().filter_map(|p| table.column(&MetricName::new(*p))).collect();
        combinations.push(Column::new(COMBINED, mean_of_ranks(&parts, table.items())));
    }
    for composite in COMPOSITES.iter().filter(|c| applies(c.name)) {
        combinations.push(Column::new(composite.name, composite_scores(composite, &table)));
    }
    let mut out = ScoreTable::new(table.items());
    for column in table.into_columns().into_iter().filter(|c| !is_combination(c.metric.as_str())) {
        out.push(column)?;
    }
    for c in combinations.into_iter().filter(|c| c.values.iter().any(Option::is_some)) {
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
        let out = with_combinations(table, all).unwrap();
        let combined = out.column(&MetricName::new(COMBINED)).unwrap();
        // ranks: SLM 1, 1/3, 2/3; unref 2/3, 1/3, 1; greedy 1/2, 1 (of two); NIDF 1/3, 1, 2/3.
        let want = [(1.0 + 2.0 / 3.0 + 0.5 + 1.0 / 3.0) / 4.0, (1.0 / 3.0 + 1.0 / 3.0 + 1.0 + 1.0) / 4.0, (2.0 / 3.0 + 1.0 + 2.0 / 3.0) / 3.0];
        for (got, want) in combined.values.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
        }
        assert_eq!(combined.values[3], None, "an item with no part has no combined score");
        assert_eq!(out.metrics().map(MetricName::as_str).nth(out.metrics().count() - 1 - COMPOSITES.len()), Some(COMBINED), "Combined, then the composites, last");
        // Computed again (a merge): replaced, not duplicated, and the same.
        let again = with_combinations(out.clone(), all).unwrap();
        assert_eq!(again, out);
        // A part's family left out: no combined column, and a stale one is dropped.
        let mut partial = ScoreTable::new(4);
        partial.push(slm.clone()).unwrap();
        partial.push(unref.clone()).unwrap();
        partial.push(combined.clone()).unwrap();
        assert!(with_combinations(partial.clone(), |f| f != "embedding").unwrap().column(&MetricName::new(COMBINED)).is_none());
        assert!(with_combinations(partial.clone(), |f| f != "specificity").unwrap().column(&MetricName::new(COMBINED)).is_none());
        // The embedding family ran but no item had a reference (and NIDF scored none): the
        // reference-free parts alone.
        let free = with_combinations(partial, all).unwrap();
        let values = &free.column(&MetricName::new(COMBINED)).unwrap().values;
        assert_eq!(values[0], Some((1.0 + 2.0 / 3.0) / 2.0));
        assert_eq!(values[3], None);
        // No item with any part: no column.
        let mut empty = ScoreTable::new(2);
        empty.push(column("SLM", &[None, None])).unwrap();
        assert!(with_combinations(empty, all).unwrap().column(&MetricName::new(COMBINED)).is_none());
    }

    #[test]
    fn each_composite_is_the_mean_of_its_aspects_whatever_their_number_of_parts() {
        let slm = column("SLM", &[Some(0.9), Some(0.1), Some(0.5), None]);
        let unref = column("BERT-RUBER-unref", &[Some(0.2), Some(0.1), Some(0.3), None]);
        let greedy = column("Greedy-Matching", &[Some(0.7), Some(0.8), None, None]);
        let nidf = column("NIDF", &[Some(0.4), Some(0.6), Some(0.5), None]);
        let mut table = ScoreTable::new(4);
        for c in [slm, unref, greedy, nidf] {
            table.push(c).unwrap();
        }
        let out = with_combinations(table, |_| true).unwrap();
        let names: Vec<&str> = out.metrics().map(MetricName::as_str).collect();
        assert_eq!(&names[names.len() - 3..], [COMBINED, COHERENCE.name, ENGAGEMENT.name], "the combinations come last, in order");
        // relatedness = mean(SLM, unref ranks): (1 + 2/3)/2, (1/3 + 1/3)/2, (2/3 + 1)/2.
        let related = [(1.0 + 2.0 / 3.0) / 2.0, 1.0 / 3.0, (2.0 / 3.0 + 1.0) / 2.0];
        let coherence = &out.column(&MetricName::new(COHERENCE.name)).unwrap().values;
        // Greedy ranks 1/2, 1; the third item has no reference: relatedness alone.
        let want = [(related[0] + 0.5) / 2.0, (related[1] + 1.0) / 2.0, related[2]];
        for (got, want) in coherence.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
        }
        assert_eq!(coherence[3], None);
        let engagement = &out.column(&MetricName::new(ENGAGEMENT.name)).unwrap().values;
        // NIDF ranks 1/3, 1, 2/3: specificity weighs a half, as relatedness with its two parts.
        let want = [(related[0] + 1.0 / 3.0) / 2.0, (related[1] + 1.0) / 2.0, (related[2] + 2.0 / 3.0) / 2.0];
        for (got, want) in engagement.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
        }
        // A family of one aspect left out: that composite (and Combined) go, the other stays.
        let no_nidf = with_combinations(out.clone(), |f| f != "specificity").unwrap();
        assert!(no_nidf.column(&MetricName::new(ENGAGEMENT.name)).is_none() && no_nidf.column(&MetricName::new(COMBINED)).is_none());
        assert_eq!(no_nidf.column(&MetricName::new(COHERENCE.name)).map(|c| &c.values), Some(coherence));
        // Recomputed (a merge) over the same table: the same table.
        assert_eq!(combine(out.clone(), |_| true).unwrap(), out);
        assert!(is_combination(COMBINED) && is_combination("Combined-Engagement") && !is_combination("SLM"));
    }
}
