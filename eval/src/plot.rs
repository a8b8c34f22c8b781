//! Plots of evaluation results, each written as PNG and SVG: a heat map of a correlation table
//! and a grid of scatter plots (one panel per metric). Text is drawn with the bundled DejaVu
//! Sans (`assets/DejaVuSans.ttf`, Bitstream Vera licence), so no system font is needed.
//! [`analysis_plots`] draws the main job's: a heat map of the turn-level Spearman table and one
//! scatter grid per criterion.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;

use crate::analysis::{Analysis, HumanScores};
use crate::error::{Error, Result};
use crate::table::ScoreTable;
use plotters::prelude::*;

type PlotResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // The bytes are a valid TTF compiled in; a failure would only lose text, not the plot.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, include_bytes!("../assets/DejaVuSans.ttf"));
    });
}

/// Writes `stem.png` and `stem.svg` by running `draw` on each backend.
fn both(stem: &Path, size: (u32, u32), draw: &dyn Fn(&DrawingArea<BitMapBackend, Shift>) -> PlotResult, draw_svg: &dyn Fn(&DrawingArea<SVGBackend, Shift>) -> PlotResult) -> PlotResult {
    register_font();
    let png = stem.with_extension("png");
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        draw(&root)?;
        root.present()?;
    }
    let svg = stem.with_extension("svg");
    let root = SVGBackend::new(&svg, size).into_drawing_area();
    draw_svg(&root)?;
    root.present()?;
    Ok(())
}

/// Blue (−1) – white (0) – red (+1).
fn diverging(v: f64) -> RGBColor {
    if !v.is_finite() {
        return RGBColor(200, 200, 200);
    }
    let v = v.clamp(-1.0, 1.0);
    let mix = |a: u8, t: f64| (255.0 + (f64::from(a) - 255.0) * t).round() as u8;
    if v >= 0.0 { RGBColor(mix(178, v), mix(24, v), mix(43, v)) } else { RGBColor(mix(33, -v), mix(102, -v), mix(172, -v)) }
}

/// What a heat map shows: `values[row][col]` in [−1, 1], `marks[row][col]` a suffix such as `*`.
#[derive(Debug, Clone, Copy)]
pub struct Heatmap<'a> {
    /// The title above the grid.
    pub title: &'a str,
    /// Row labels.
    pub rows: &'a [String],
    /// Column labels.
    pub cols: &'a [String],
    /// One row of values per row label.
    pub values: &'a [Vec<f64>],
    /// One row of suffixes per row label.
    pub marks: &'a [Vec<String>],
}

/// Draws `map` into `stem.png` and `stem.svg`, with the numbers printed in the cells (`NaN`
/// cells grey, marked "–").
///
/// # Errors
/// [`Error::Plot`] when a file cannot be written.
pub fn heatmap(stem: &Path, map: &Heatmap<'_>) -> Result<()> {
    let Heatmap { title, rows, cols, values, marks } = *map;
    let (left, top, cell_w, cell_h) = (190_i32, 60_i32, 120_i32, 30_i32);
    let size = ((left + cell_w * cols.len() as i32 + 20) as u32, (top + cell_h * rows.len() as i32 + 20) as u32);
    fn draw<B: DrawingBackend>(root: &DrawingArea<B, Shift>, title: &str, rows: &[String], cols: &[String], values: &[Vec<f64>], marks: &[Vec<String>], geometry: (i32, i32, i32, i32)) -> PlotResult
    where
        B::ErrorType: 'static,
    {
        let (left, top, cell_w, cell_h) = geometry;
        root.fill(&WHITE)?;
        let font = ("sans-serif", 14).into_font();
        root.draw(&Text::new(title.to_owned(), (10, 10), ("sans-serif", 18).into_font()))?;
        for (j, c) in cols.iter().enumerate() {
            root.draw(&Text::new(c.clone(), (left + j as i32 * cell_w + 6, top - 20), font.clone()))?;
        }
        for (i, r) in rows.iter().enumerate() {
            let y = top + i as i32 * cell_h;
            root.draw(&Text::new(r.clone(), (10, y + 8), font.clone()))?;
            for j in 0..cols.len() {
                let v = values.get(i).and_then(|row| row.get(j)).copied().unwrap_or(f64::NAN);
                let x = left + j as i32 * cell_w;
                root.draw(&Rectangle::new([(x, y), (x + cell_w - 2, y + cell_h - 2)], diverging(v).filled()))?;
                let mark = marks.get(i).and_then(|row| row.get(j)).map_or("", String::as_str);
                let label = if v.is_finite() { format!("{v:.3}{mark}") } else { "–".to_owned() };
                let color = if v.abs() > 0.6 { &WHITE } else { &BLACK };
                root.draw(&Text::new(label, (x + 8, y + 8), font.clone().color(color)))?;
            }
        }
        Ok(())
    }
    let geometry = (left, top, cell_w, cell_h);
    both(stem, size, &|root| draw(root, title, rows, cols, values, marks, geometry), &|root| draw(root, title, rows, cols, values, marks, geometry))
        .map_err(|source| Error::Plot { path: stem.to_owned(), source })
}

/// One scatter panel: a metric's scores (x) against human scores (y), with its title.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Panel title (metric name and correlation).
    pub title: String,
    /// (metric, human) points.
    pub points: Vec<(f64, f64)>,
}

/// A grid of scatter panels, four per row.
///
/// # Errors
/// [`Error::Plot`] when a file cannot be written.
pub fn scatter_grid(stem: &Path, title: &str, y_label: &str, panels: &[Panel]) -> Result<()> {
    let cols = 4_usize;
    let rows = panels.len().div_ceil(cols).max(1);
    let size = (4 * 300, 40 + rows as u32 * 260);
    fn draw<B: DrawingBackend>(root: &DrawingArea<B, Shift>, title: &str, y_label: &str, panels: &[Panel], grid: (usize, usize)) -> PlotResult
    where
        B::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 20))?;
        let areas = root.split_evenly(grid);
        for (area, panel) in areas.iter().zip(panels) {
            let finite: Vec<(f64, f64)> = panel.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
            let range = |f: fn(&(f64, f64)) -> f64| {
                let (lo, hi) = finite.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
                if lo.is_finite() && hi > lo {
                    let pad = (hi - lo) * 0.05;
                    (lo - pad)..(hi + pad)
                } else {
                    (lo.min(0.0) - 0.5)..(hi.max(0.0) + 0.5)
                }
            };
            let mut chart =
                ChartBuilder::on(area).caption(&panel.title, ("sans-serif", 13)).margin(8).x_label_area_size(22).y_label_area_size(32).build_cartesian_2d(range(|p| p.0), range(|p| p.1))?;
            chart.configure_mesh().x_labels(4).y_labels(4).y_desc(y_label).label_style(("sans-serif", 11)).draw()?;
            chart.draw_series(finite.iter().map(|&(x, y)| Circle::new((x, y), 2, BLUE.mix(0.45).filled())))?;
        }
        Ok(())
    }
    let grid = (rows, cols);
    both(stem, size, &|root| draw(root, title, y_label, panels, grid), &|root| draw(root, title, y_label, panels, grid)).map_err(|source| Error::Plot { path: stem.to_owned(), source })
}

/// Points a scatter panel draws at most: beyond it, an evenly spaced subsample (every k-th item
/// in corpus order), and the panel's title says so. An SVG of a million circles would be
/// hundreds of megabytes and show nothing more.
pub const MAX_SCATTER_POINTS: usize = 5_000;

/// Every k-th of `points` when there are more than `max`, with k the smallest step that keeps at
/// most `max`; the step is returned (1: all points).
pub fn subsample<T: Copy>(points: &[T], max: usize) -> (Vec<T>, usize) {
    let step = points.len().div_ceil(max.max(1)).max(1);
    (points.iter().step_by(step).copied().collect(), step)
}

/// The main job's plots in `dir`: `heatmap_spearman` (metrics × criteria, ★ best, ↓ worse by
/// Williams' test) and `scatter_<quality slug>` (one panel per metric), each as PNG and SVG.
///
/// # Errors
/// [`Error::Io`] when `dir` cannot be created, [`Error::Plot`].
pub fn analysis_plots(dir: &Path, table: &ScoreTable, human: &HumanScores, analysis: &Analysis) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let rows: Vec<String> = analysis.metrics.iter().map(|m| m.metric.to_string()).collect();
    let cols: Vec<String> = analysis.qualities.iter().map(|q| q.name().to_owned()).collect();
    let values: Vec<Vec<f64>> = analysis.metrics.iter().map(|m| m.cells.iter().map(|c| c.map_or(f64::NAN, |c| c.spearman)).collect()).collect();
    let marks: Vec<Vec<String>> = analysis.metrics.iter().map(|m| m.cells.iter().map(|c| c.map_or("", |c| c.marker()).to_owned()).collect()).collect();
    let map = Heatmap { title: "Turn-level Spearman correlation with human ratings (★ best, ↓ worse by Williams' test)", rows: &rows, cols: &cols, values: &values, marks: &marks };
    heatmap(&dir.join("heatmap_spearman"), &map)?;
    for (c, (quality, human_values)) in human.qualities.iter().enumerate() {
        let panels: Vec<Panel> = table
            .columns()
            .iter()
            .zip(&analysis.metrics)
            .map(|(column, m)| {
                let all: Vec<(f64, f64)> = column.values.iter().zip(human_values).filter_map(|(x, y)| Some(((*x)?, (*y)?))).collect();
                let (points, step) = subsample(&all, MAX_SCATTER_POINTS);
                let rho = m.cells[c].map_or(f64::NAN, |cell| cell.spearman);
                let shown = if step > 1 { format!(", every {step}th of {} points", all.len()) } else { String::new() };
                Panel { title: format!("{} (ρ = {rho:.2}{shown})", column.metric), points }
            })
            .collect();
        scatter_grid(&dir.join(format!("scatter_{}", quality.slug())), &format!("Metric scores against human {quality}"), quality.name(), &panels)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::subsample;

    #[test]
    fn subsampling_keeps_at_most_the_maximum_evenly() {
        let points: Vec<usize> = (0..10_001).collect();
        let (kept, step) = subsample(&points, 5_000);
        assert_eq!(step, 3);
        assert!(kept.len() <= 5_000 && kept.len() > 3_000);
        assert_eq!(&kept[..3], &[0, 3, 6]);
        assert_eq!(subsample(&points[..10], 5_000), (points[..10].to_vec(), 1));
    }
}
