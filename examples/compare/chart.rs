//! The throughput-against-threads chart, drawn with `plotters` into a PNG.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::sweep::{NAMES, Sweep};

/// Where a sans-serif TTF usually is; the chart needs one for its text.
const FONTS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

const COLOURS: [RGBColor; 5] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    // The keyed floor, grey: a reference line, not a contender.
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// Draws one panel per sweep into `path`.
pub fn draw(
    path: &Path,
    sweeps: &[Sweep],
    machine: &str,
    cores: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let font = FONTS
        .iter()
        .find_map(|f| std::fs::read(f).ok())
        .ok_or("no DejaVuSans.ttf found for the chart's text")?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        Box::leak(font.into_boxed_slice()),
    )
    .map_err(|_| "the font could not be read")?;

    let root = BitMapBackend::new(path, (1200, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(50);
    title.titled(
        &format!("Decisions per second against threads, one shared limiter ({machine})"),
        ("sans-serif", 22),
    )?;
    let panels = body.split_evenly((1, sweeps.len()));
    for (panel, sweep) in panels.iter().zip(sweeps) {
        let top = sweep
            .per_second
            .iter()
            .flatten()
            .fold(0.0_f64, |a, &b| a.max(b))
            / 1e6
            * 1.15;
        let most = sweep.threads.iter().copied().max().unwrap_or(1);
        let mut chart = ChartBuilder::on(panel)
            .caption(sweep.label, ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.5_f64..most as f64 + 0.5, 0.0_f64..top.max(1.0))?;
        chart
            .configure_mesh()
            .x_desc(threads_axis(&sweep.threads, cores))
            .y_desc("million decisions / s")
            .x_labels(most.min(16))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        for (c, name) in NAMES.iter().enumerate() {
            let colour = COLOURS[c % COLOURS.len()];
            let points: Vec<(f64, f64)> = sweep
                .threads
                .iter()
                .zip(&sweep.per_second[c])
                .map(|(&t, &v)| (t as f64, v / 1e6))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
                .label(*name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 4, colour.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 14))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// The thread axis's caption: the core count, and which counts exceed it.
fn threads_axis(threads: &[usize], cores: usize) -> String {
    let over: Vec<String> = threads
        .iter()
        .filter(|&&t| t > cores)
        .map(usize::to_string)
        .collect();
    match over.as_slice() {
        [] => format!("threads ({cores} cores)"),
        [one] => format!("threads ({cores} cores: {one} is oversubscribed)"),
        [rest @ .., last] => format!(
            "threads ({cores} cores: {} and {last} are oversubscribed)",
            rest.join(", ")
        ),
    }
}
