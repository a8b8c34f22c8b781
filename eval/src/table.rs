//! The score table: items × metrics, one `Option<f64>` per cell (`None` where the item lacks
//! what the metric needs), every value finite.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A metric's name as it appears in tables, plots and caches (`BLEU-4`, `SLM`, …).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MetricName(String);

impl MetricName {
    /// A name.
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MetricName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for MetricName {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

/// One metric's scores, one cell per item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The metric.
    pub metric: MetricName,
    /// One cell per item, in item order.
    pub values: Vec<Option<f64>>,
}

impl Column {
    /// A column.
    pub fn new(metric: impl Into<MetricName>, values: Vec<Option<f64>>) -> Self {
        Self { metric: metric.into(), values }
    }

    /// A column of `n` cells with `values` placed at the item indices `at` (in order) and `None`
    /// elsewhere.
    ///
    /// # Errors
    /// [`Error::Column`] when `at` and `values` differ in length or an index is out of range.
    pub fn spread(metric: impl Into<MetricName>, n: usize, at: &[usize], values: &[f64]) -> Result<Self> {
        let metric = metric.into();
        if at.len() != values.len() {
            return Err(Error::Column { metric: metric.0, problem: format!("{} values for {} items", values.len(), at.len()) });
        }
        let mut cells = vec![None; n];
        for (&i, &v) in at.iter().zip(values) {
            let cell = cells.get_mut(i).ok_or_else(|| Error::Column { metric: metric.0.clone(), problem: format!("item index {i} of {n}") })?;
            *cell = Some(v);
        }
        Ok(Self { metric, values: cells })
    }

    /// Items with a value.
    pub fn count(&self) -> usize {
        self.values.iter().filter(|v| v.is_some()).count()
    }
}

/// Scores of every metric for every item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreTable {
    items: usize,
    columns: Vec<Column>,
}

impl ScoreTable {
    /// An empty table for `items` items.
    pub fn new(items: usize) -> Self {
        Self { items, columns: Vec::new() }
    }

    /// Adds a column.
    ///
    /// # Errors
    /// [`Error::Column`] when its length is not the table's item count, a value is NaN or
    /// infinite (named by item index), or its metric is already in the table.
    pub fn push(&mut self, column: Column) -> Result<()> {
        let problem = |p: String| Err(Error::Column { metric: column.metric.0.clone(), problem: p });
        if column.values.len() != self.items {
            return problem(format!("{} values for {} items", column.values.len(), self.items));
        }
        if let Some(i) = column.values.iter().position(|v| v.is_some_and(|v| !v.is_finite())) {
            return problem(format!("item {i} has the non-finite score {:?}", column.values[i]));
        }
        if self.column(&column.metric).is_some() {
            return problem("already in the table".into());
        }
        self.columns.push(column);
        Ok(())
    }

    /// Items (rows).
    pub fn items(&self) -> usize {
        self.items
    }

    /// Every column, in the order added.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The column of `metric`.
    pub fn column(&self, metric: &MetricName) -> Option<&Column> {
        self.columns.iter().find(|c| &c.metric == metric)
    }

    /// The metric names, in column order.
    pub fn metrics(&self) -> impl Iterator<Item = &MetricName> {
        self.columns.iter().map(|c| &c.metric)
    }

    /// The columns, moved out (to rebuild a table without copying its cells).
    pub fn into_columns(self) -> Vec<Column> {
        self.columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_refuses_short_columns_non_finite_values_and_duplicates() {
        let mut t = ScoreTable::new(3);
        assert!(t.push(Column::new("a", vec![Some(1.0), None, Some(0.5)])).is_ok());
        assert!(matches!(t.push(Column::new("b", vec![Some(1.0)])), Err(Error::Column { .. })));
        let nan = t.push(Column::new("c", vec![None, Some(f64::NAN), None]));
        assert!(nan.is_err_and(|e| e.to_string().contains("item 1")));
        assert!(t.push(Column::new("a", vec![None, None, None])).is_err());
        assert_eq!(t.columns().len(), 1);
        assert_eq!(t.column(&"a".into()).map(Column::count), Some(2));
    }

    #[test]
    fn spread_places_values_and_checks_indices() {
        let c = Column::spread("m", 4, &[1, 3], &[0.5, 0.25]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.values, vec![None, Some(0.5), None, Some(0.25)]);
        assert!(Column::spread("m", 2, &[5], &[1.0]).is_err());
        assert!(Column::spread("m", 2, &[0, 1], &[1.0]).is_err());
    }
}
