//! `--plot DIR`: SVG charts of a suite run, drawn with `plotters` (SVG backend only; text is
//! left to the SVG viewer, so no system font library is needed).
//!
//! - `micros_per_op.svg`: grouped bars of median µs/op per workload, one bar per engine, with
//!   a whisker from the fastest to the slowest repeat; log scale, since workloads span four
//!   orders of magnitude.
//! - `fillseq_latency.svg`: the seed blog's chart, average latency of each batch of 1000
//!   writes against elapsed time during `fillseq`, one line per engine (the median repeat), so
//!   write stalls show as spikes. Points above the cap (twice the 99.5th percentile of all
//!   points) are drawn at the cap, as the blog chopped its outliers.
//! - `fillrandom_latency.svg`: the same chart for `fillrandom` (issue 13's stall test).
//! - `p99_latency.svg`, `write_amplification.svg`, `space_amplification.svg`: grouped bars
//!   like the first, of the 99th-percentile latency (workloads where every op was timed),
//!   and of the two amplifications (see `disk`), each over the workloads that have it. Peak
//!   memory, one figure per engine, is in the table and JSON only.

use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::config::{Benchmark, EngineKind};
use super::engine::BenchResult;
use super::stats::{median, spread, RunResult};
use super::suite::{Series, SuiteResults};

/// Each engine's colour, fixed so charts compare at a glance.
fn colour(engine: EngineKind) -> RGBColor {
    match engine {
        EngineKind::Strata => RGBColor(0x1f, 0x77, 0xb4),
        EngineKind::Leveldb => RGBColor(0xff, 0x7f, 0x0e),
        EngineKind::Rocksdb => RGBColor(0x2c, 0xa0, 0x2c),
        EngineKind::RocksdbBlob => RGBColor(0x94, 0x67, 0xbd),
    }
}

/// A figure drawn as grouped bars: one group per workload, one bar per engine.
struct Metric {
    /// File name in the output directory.
    file: &'static str,
    caption: &'static str,
    axis: &'static str,
    /// The figure of one run; runs without it are left out.
    of: fn(&RunResult) -> Option<f64>,
}

/// The bar charts, in the order they are written.
const METRICS: [Metric; 4] = [
    Metric {
        file: "micros_per_op.svg",
        caption: "µs per operation (median; whiskers: min–max)",
        axis: "µs/op (log scale)",
        of: |r| Some(r.micros_per_op),
    },
    Metric {
        file: "p99_latency.svg",
        caption: "99th-percentile latency, µs (median; whiskers: min–max)",
        axis: "p99 µs (log scale)",
        of: |r| r.latency.map(|l| l.p99_us),
    },
    Metric {
        file: "write_amplification.svg",
        caption: "bytes written to disk per byte put (median; whiskers: min–max)",
        axis: "write amplification (log scale)",
        of: RunResult::write_amplification,
    },
    Metric {
        file: "space_amplification.svg",
        caption: "directory size per live byte (median; whiskers: min–max)",
        axis: "space amplification (log scale)",
        of: RunResult::space_amplification,
    },
];

impl Metric {
    /// The figure of each of `s`'s runs that has it (positive ones: the scale is log).
    fn values(&self, s: &Series) -> Vec<f64> {
        s.runs
            .iter()
            .filter_map(self.of)
            .filter(|v| *v > 0.0)
            .collect()
    }
}

fn err<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("plot {what}: {e}")
}

/// Writes every chart into `dir` (created if missing); returns the files written.
pub fn write_all(dir: &Path, results: &SuiteResults) -> BenchResult<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for metric in &METRICS {
        let bars = dir.join(metric.file);
        if bar_chart(&bars, results, metric)? {
            written.push(bars);
        }
    }
    for bench in [Benchmark::Fillseq, Benchmark::Fillrandom] {
        let trace = dir.join(format!("{}_latency.svg", bench.name()));
        if trace_chart(&trace, results, bench)? {
            written.push(trace);
        }
    }
    Ok(written)
}

/// The grouped bar chart of `metric`; `false` if there is nothing to draw.
fn bar_chart(path: &Path, results: &SuiteResults, metric: &Metric) -> BenchResult<bool> {
    let engines: Vec<EngineKind> = results.engines.iter().map(|e| e.kind).collect();
    // Workload positions that have the figure, in order, with their labels.
    let mut groups: Vec<(usize, String)> = Vec::new();
    for s in results
        .series
        .iter()
        .filter(|s| !metric.values(s).is_empty())
    {
        if groups.last().map(|(p, _)| *p) != Some(s.pos) {
            groups.push((s.pos, s.label()));
        }
    }
    let values: Vec<f64> = results
        .series
        .iter()
        .flat_map(|s| metric.values(s))
        .collect();
    if groups.is_empty() || values.is_empty() {
        return Ok(false);
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min) / 2.0;
    let hi = values.iter().copied().fold(0.0, f64::max) * 2.0;
    let n = groups.len();

    let root = SVGBackend::new(path, (140 + 120 * n as u32, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(err("bars"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(metric.caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo..hi).log_scale())
        .map_err(err("bars"))?;
    let label_of = |x: &f64| {
        let i = x.round();
        if (x - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        groups
            .get(i as usize)
            .map_or(String::new(), |(_, l)| l.clone())
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label_of)
        .x_label_style(("sans-serif", 13))
        .y_label_formatter(&|v: &f64| short_number(*v))
        .y_desc(metric.axis)
        .draw()
        .map_err(err("bars"))?;

    let width = 0.8 / engines.len() as f64;
    for (ei, &engine) in engines.iter().enumerate() {
        let c = colour(engine);
        let mut bars = Vec::new();
        let mut whiskers = Vec::new();
        for (gi, (pos, _)) in groups.iter().enumerate() {
            let Some(s) = results
                .series
                .iter()
                .find(|s| s.pos == *pos && s.engine == engine)
            else {
                continue;
            };
            let runs = metric.values(s);
            if runs.is_empty() {
                continue;
            }
            let median = median(&runs);
            let x0 = gi as f64 - 0.4 + width * ei as f64;
            bars.push(Rectangle::new([(x0, lo), (x0 + width, median)], c.filled()));
            let (min, max) = spread(&runs);
            if max > min {
                let mid = x0 + width / 2.0;
                whiskers.push(PathElement::new(vec![(mid, min), (mid, max)], BLACK));
            }
        }
        chart
            .draw_series(bars)
            .map_err(err("bars"))?
            .label(engine.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], c.filled()));
        chart.draw_series(whiskers).map_err(err("bars"))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err("bars"))?;
    root.present().map_err(err("bars"))?;
    Ok(true)
}

/// A tick value without trailing zeros: `0.05`, `1`, `10000`.
fn short_number(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let text = format!("{v:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// Points of one engine's trace: (elapsed seconds at the end of the batch, µs/op).
fn trace_points(trace: &[f64]) -> Vec<(f64, f64)> {
    let mut elapsed = 0.0;
    trace
        .iter()
        .map(|&us| {
            elapsed += us * super::stats::TRACE_BATCH as f64 / 1e6;
            (elapsed, us)
        })
        .collect()
}

/// The latency-over-time chart of `bench`; `false` if no trace of it was recorded.
fn trace_chart(path: &Path, results: &SuiteResults, bench: Benchmark) -> BenchResult<bool> {
    let lines: Vec<(EngineKind, Vec<(f64, f64)>)> = results
        .series
        .iter()
        .filter(|s| s.bench == bench && s.occurrence == 1)
        .filter_map(|s| {
            let run = s.median_run()?;
            let trace = run.trace.as_ref()?;
            (!trace.is_empty()).then(|| (s.engine, trace_points(trace)))
        })
        .collect();
    if lines.is_empty() {
        return Ok(false);
    }
    let mut all: Vec<f64> = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, y)| *y))
        .collect();
    all.sort_by(f64::total_cmp);
    let p995 = all
        .get((all.len() as f64 * 0.995) as usize)
        .or(all.last())
        .copied()
        .unwrap_or(1.0);
    let max = all.last().copied().unwrap_or(1.0);
    let cap = (p995 * 2.0).min(max * 1.05).max(f64::MIN_POSITIVE);
    let end = lines
        .iter()
        .filter_map(|(_, p)| p.last().map(|(x, _)| *x))
        .fold(0.0, f64::max);

    let root = SVGBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err("trace"))?;
    let mut chart: ChartContext<'_, _, Cartesian2d<RangedCoordf64, RangedCoordf64>> =
        ChartBuilder::on(&root)
            .caption(
                format!(
                    "{}: average latency per batch of {} writes",
                    bench.name(),
                    super::stats::TRACE_BATCH
                ),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..end.max(1e-3), 0.0..cap)
            .map_err(err("trace"))?;
    chart
        .configure_mesh()
        .x_desc("elapsed seconds")
        .y_desc(format!("µs per write (capped at {cap:.1})"))
        .draw()
        .map_err(err("trace"))?;
    for (engine, points) in lines {
        let c = colour(engine);
        let clipped = points.into_iter().map(|(x, y)| (x, y.min(cap)));
        chart
            .draw_series(LineSeries::new(clipped, c.stroke_width(1)))
            .map_err(err("trace"))?
            .label(engine.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err("trace"))?;
    root.present().map_err(err("trace"))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::disk::DiskUse;
    use super::super::stats::sample_run;
    use super::super::suite::{EngineRun, Series};
    use super::*;

    fn run(micros: f64, trace: Option<Vec<f64>>) -> RunResult {
        RunResult {
            ops: 3000,
            mb_per_s: Some(50.0),
            user_bytes_written: 3000 * 116,
            trace,
            disk: Some(DiskUse {
                written: Some(3000 * 116 * 3),
                read: Some(0),
                dir_bytes: 200_000,
                live_bytes: Some(3000 * 116),
            }),
            ..sample_run(micros)
        }
    }

    #[test]
    fn tick_numbers_are_short() {
        assert_eq!(short_number(10000.0), "10000");
        assert_eq!(short_number(0.05), "0.05");
        assert_eq!(short_number(0.5), "0.5");
    }

    #[test]
    fn trace_points_accumulate_batch_durations() {
        let p = trace_points(&[2.0, 4.0]);
        // 1000 ops at 2 µs = 2 ms, then 1000 at 4 µs = 4 ms more.
        assert!((p[0].0 - 0.002).abs() < 1e-12 && p[0].1 == 2.0);
        assert!((p[1].0 - 0.006).abs() < 1e-12 && p[1].1 == 4.0);
    }

    #[test]
    fn writes_the_charts_that_have_figures_as_svg() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let results = SuiteResults {
            engines: vec![
                EngineRun::started(EngineKind::Strata, "Strata"),
                EngineRun::started(EngineKind::Leveldb, "LevelDB"),
            ],
            series: vec![
                Series {
                    pos: 0,
                    bench: Benchmark::Fillseq,
                    occurrence: 1,
                    engine: EngineKind::Strata,
                    runs: vec![run(1.5, Some(vec![1.0, 1.2, 9.0, 1.1]))],
                },
                Series {
                    pos: 0,
                    bench: Benchmark::Fillseq,
                    occurrence: 1,
                    engine: EngineKind::Leveldb,
                    runs: vec![run(2.5, Some(vec![2.0, 2.2, 2.1]))],
                },
                Series {
                    pos: 1,
                    bench: Benchmark::Readseq,
                    occurrence: 1,
                    engine: EngineKind::Strata,
                    runs: vec![run(0.2, None), run(0.25, None), run(0.3, None)],
                },
            ],
        };
        let written = write_all(dir.path(), &results).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = written
            .iter()
            .filter_map(|f| Some(f.file_name()?.to_string_lossy().into_owned()))
            .collect();
        // No run timed every op: no p99 chart.
        assert_eq!(
            names,
            [
                "micros_per_op.svg",
                "write_amplification.svg",
                "space_amplification.svg",
                "fillseq_latency.svg"
            ]
        );
        for file in written {
            let svg = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
            assert!(svg.starts_with("<svg"), "{}", file.display());
            assert!(svg.contains("strata") && svg.contains("leveldb"));
        }
        let bars = std::fs::read_to_string(dir.path().join("micros_per_op.svg"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(bars.contains("fillseq") && bars.contains("readseq"));
    }
}
