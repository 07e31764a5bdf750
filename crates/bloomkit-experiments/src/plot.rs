//! Figures of the studies, drawn with `plotters` as SVG and PNG.
//!
//! A study describes a figure as data — a [`Figure`] of [`Series`] of [`Point`]s — and this
//! module draws it the same way for every study: theory as solid lines, measurements as
//! markers with their error bars (in the colour of their theory curve), references as
//! dashed grey lines, logarithmic axes where a quantity spans decades.
//!
//! # Fonts
//!
//! Text in a figure needs a TrueType font, for the PNG's glyphs and for the layout of both
//! formats (plotters measures labels with it). No system library is used: the font file is
//! read at run time and handed to plotters' pure-Rust `ab_glyph` renderer. It is, in
//! order: `--font FILE`; the file named by the `BLOOMKIT_FONT` environment variable; DejaVu
//! Sans where Debian (`fonts-dejavu-core`), Fedora and Arch install it; a few other common
//! sans-serif fonts. With none of them (or with `BLOOMKIT_FONT` set to an empty value),
//! [`load_font`] says what to install and the studies still print and write their tables,
//! but draw no figures (a message on standard error and in the report says so). A font
//! that was asked for with `--font` or `BLOOMKIT_FONT` and cannot be used is an error.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The environment variable that names a TrueType font file for the figures.
pub const FONT_ENV: &str = "BLOOMKIT_FONT";

/// Where fonts are looked for when none is named: DejaVu Sans as Debian and Ubuntu
/// (`fonts-dejavu-core`), Fedora and Arch install it, then Liberation Sans and Arial.
pub const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Width and height of a figure, in pixels (PNG) or user units (SVG).
pub const SIZE: (u32, u32) = (1000, 680);

/// Width of a figure of small multiples ([`Legend::Panels`]), and the height of one row.
pub const PANELS_SIZE: (u32, u32) = (1400, 400);

/// The size a figure is drawn at: [`SIZE`], or for small multiples as many rows of
/// [`PANELS_SIZE`] as the panels need, under a title.
pub fn size(figure: &Figure) -> (u32, u32) {
    if figure.legend == Legend::Panels {
        let rows = panel_grid(panel_colors(figure).len()).0 as u32;
        (PANELS_SIZE.0, 50 + rows * PANELS_SIZE.1)
    } else {
        SIZE
    }
}

/// Rows and columns of a grid of `count` panels: four to a row.
fn panel_grid(count: usize) -> (usize, usize) {
    // Three columns at most: on paper a figure is about 18 cm wide, and a fourth column
    // shrinks a panel's labels below what prints legibly.
    let columns = count.clamp(1, 3);
    (count.div_ceil(columns).max(1), columns)
}

/// The colours that get a panel each: those of the measured series, in order.
fn panel_colors(figure: &Figure) -> Vec<usize> {
    let mut colors = Vec::new();
    for series in &figure.series {
        let measured = matches!(series.style, Style::Measured | Style::MeasuredLine);
        if measured && series.color != BLACK_INDEX && !colors.contains(&series.color) {
            colors.push(series.color);
        }
    }
    colors
}

/// The font the figures use, once found: its path, or why there is none.
static FONT: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();

/// Finds and registers the figures' font (once per process; later calls return the first
/// answer). `Ok(Some(path))`: figures can be drawn. `Ok(None)`: no font was found; the
/// reason is in [`font_missing_message`]. An error: the font that was asked for (`explicit`
/// or `BLOOMKIT_FONT`) cannot be read or is not a font.
pub fn load_font(explicit: Option<&Path>) -> Result<Option<PathBuf>> {
    let found = FONT.get_or_init(|| find_and_register(explicit));
    match found {
        Ok(path) => Ok(Some(path.clone())),
        Err(message) if message.starts_with("error: ") => {
            Err(anyhow!("{}", &message["error: ".len()..]))
        }
        Err(_) => Ok(None),
    }
}

/// What to do when no font was found, for messages and the report.
pub fn font_missing_message() -> String {
    format!(
        "no TrueType font found, so no figures were drawn (tables and CSV are complete). \
         Install DejaVu Sans (Debian/Ubuntu: `apt-get install fonts-dejavu-core`), or name a \
         .ttf file with --font FILE or the {FONT_ENV} environment variable."
    )
}

fn find_and_register(explicit: Option<&Path>) -> std::result::Result<PathBuf, String> {
    let asked = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(FONT_ENV).map(PathBuf::from));
    match asked {
        // An empty BLOOMKIT_FONT asks for no font: no figures.
        Some(path) if path.as_os_str().is_empty() => return Err(font_missing_message()),
        Some(path) => {
            return register(&path).map_err(|e| format!("error: font {}: {e:#}", path.display()))
        }
        None => {}
    }
    for candidate in FONT_PATHS {
        let path = Path::new(candidate);
        if path.is_file() && register(path).is_ok() {
            return Ok(path.to_path_buf());
        }
    }
    Err(font_missing_message())
}

/// Reads a font file and registers it as plotters' "sans-serif" family.
fn register(path: &Path) -> Result<PathBuf> {
    let bytes = std::fs::read(path).context("reading the font file")?;
    // plotters keeps fonts for the life of the process and wants them `'static`: the one
    // font is leaked once, on purpose.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| anyhow!("not a TrueType or OpenType font"))?;
    Ok(path.to_path_buf())
}

/// An axis: its label, whether it is logarithmic, and optional fixed bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The label under (or beside) the axis.
    pub label: String,
    /// A logarithmic axis (for quantities spanning decades). Values ≤ 0 cannot be shown on
    /// it: measured points at 0 are drawn as their error bar alone, from the bottom of the
    /// axis to the upper bound.
    pub log: bool,
    /// The lower bound; found from the data when `None`.
    pub min: Option<f64>,
    /// The upper bound; found from the data when `None`.
    pub max: Option<f64>,
    /// Room above the data for the legend, as a share of the data's span (of its decades
    /// on a log axis); 0 for none.
    pub headroom: f64,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            log: false,
            min: None,
            max: None,
            headroom: 0.0,
        }
    }

    /// A logarithmic axis.
    pub fn log(label: impl Into<String>) -> Self {
        Axis {
            log: true,
            ..Axis::linear(label)
        }
    }

    /// The same axis with fixed bounds.
    pub fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    /// The same axis with room above the data for the legend: `share` of the data's span
    /// (of its decades on a log axis).
    pub fn headroom(mut self, share: f64) -> Self {
        self.headroom = share;
        self
    }

    /// The same axis starting at `min`.
    pub fn from(mut self, min: f64) -> Self {
        self.min = Some(min);
        self
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A theoretical curve: a solid line.
    Theory,
    /// Measured values: markers with error bars, not joined.
    Measured,
    /// Measured values where there is no theory: markers with error bars, joined by a thin
    /// line to guide the eye.
    MeasuredLine,
    /// A reference level (a target ε, a bound): a dashed line.
    Reference,
}

/// One point; `low` and `high` are the ends of its error bar, if it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// The lower end of the error bar.
    pub low: Option<f64>,
    /// The upper end of the error bar.
    pub high: Option<f64>,
}

impl Point {
    /// A point without an error bar.
    pub fn new(x: f64, y: f64) -> Self {
        Point {
            x,
            y,
            low: None,
            high: None,
        }
    }

    /// A point with an error bar from `low` to `high`.
    pub fn with_bar(x: f64, y: f64, low: f64, high: f64) -> Self {
        Point {
            x,
            y,
            low: Some(low),
            high: Some(high),
        }
    }
}

/// A named set of points drawn in one style and colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend entry (none when empty).
    pub label: String,
    /// How it is drawn.
    pub style: Style,
    /// An index into the palette; a measurement and its theory share one.
    pub color: usize,
    /// The points, in x order for lines.
    pub points: Vec<Point>,
}

impl Series {
    /// A series.
    pub fn new(label: impl Into<String>, style: Style, color: usize, points: Vec<Point>) -> Self {
        Series {
            label: label.into(),
            style,
            color,
            points,
        }
    }

    /// A theoretical curve: `f` sampled at `xs`, non-finite values left out.
    pub fn curve(
        label: impl Into<String>,
        color: usize,
        xs: impl IntoIterator<Item = f64>,
        f: impl Fn(f64) -> f64,
    ) -> Self {
        let points = xs
            .into_iter()
            .map(|x| Point::new(x, f(x)))
            .filter(|p| p.y.is_finite())
            .collect();
        Series::new(label, Style::Theory, color, points)
    }

    /// The same series drawn in another style.
    pub fn with_style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }
}

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legend {
    /// Top right corner (the default).
    #[default]
    UpperRight,
    /// Top left corner.
    UpperLeft,
    /// Bottom right corner.
    LowerRight,
    /// Bottom left corner.
    LowerLeft,
    /// The middle of the plot (for data that fill every corner).
    Center,
    /// No shared legend: small multiples, one panel per colour, on shared axes. Each
    /// panel is titled by the label of its measured series and has its own small legend
    /// ("theory", "measured") in its colour, so that ten kinds do not overlap in one plot.
    /// A series in [`BLACK_INDEX`] is drawn in every panel, under its own label.
    Panels,
}

/// A figure: title, axes, series, and the one-line caption the report shows under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The file name without extension (`rho_fpr` → `rho_fpr.svg`, `rho_fpr.png`).
    pub name: String,
    /// The title drawn above the plot.
    pub title: String,
    /// One line on what the figure shows, for the report.
    pub caption: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// What is drawn, in drawing order (later series on top).
    pub series: Vec<Series>,
    /// Where the legend goes.
    pub legend: Legend,
}

/// Geometric sample points from `low` to `high` (both > 0), `count` of them.
pub fn geometric(low: f64, high: f64, count: usize) -> Vec<f64> {
    let count = count.max(2);
    let ratio = (high / low).ln();
    (0..count)
        .map(|i| low * (ratio * i as f64 / (count - 1) as f64).exp())
        .collect()
}

/// Evenly spaced sample points from `low` to `high`, `count` of them.
pub fn linear(low: f64, high: f64, count: usize) -> Vec<f64> {
    let count = count.max(2);
    (0..count)
        .map(|i| low + (high - low) * i as f64 / (count - 1) as f64)
        .collect()
}

/// The palette: the ten "Tableau 10" colours, distinct in print and for most colour vision.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The grey of reference lines.
const REFERENCE: RGBColor = RGBColor(90, 90, 90);

/// The colour index that means black (for legend entries that stand for every colour).
pub const BLACK_INDEX: usize = usize::MAX;

fn color(index: usize) -> RGBColor {
    if index == BLACK_INDEX {
        RGBColor(0, 0, 0)
    } else {
        PALETTE[index % PALETTE.len()]
    }
}

/// A tick label: short decimals for ordinary values, `1e-5` style for tiny or huge ones.
pub fn tick(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return "0".to_owned();
    }
    let magnitude = value.abs();
    if !(1e-3..1e6).contains(&magnitude) {
        let text = format!("{value:.1e}");
        // "1.0e-5" → "1e-5"; "2.5e-6" stays.
        return text.replace(".0e", "e");
    }
    let digits = (3 - magnitude.log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{value:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// Draws `figure` into `dir` as `NAME.svg` and `NAME.png`; returns both paths.
pub fn write(figure: &Figure, dir: &Path) -> Result<[PathBuf; 2]> {
    let svg = dir.join(format!("{}.svg", figure.name));
    let png = dir.join(format!("{}.png", figure.name));
    {
        let root = SVGBackend::new(&svg, size(figure)).into_drawing_area();
        draw(&root, figure)?;
        root.present()
            .map_err(|e| anyhow!("writing {}: {e}", svg.display()))?;
    }
    {
        let root = BitMapBackend::new(&png, size(figure)).into_drawing_area();
        draw(&root, figure)?;
        root.present()
            .map_err(|e| anyhow!("writing {}: {e}", png.display()))?;
    }
    Ok([svg, png])
}

/// The bounds of one axis from the values it must show.
fn bounds(axis: &Axis, values: impl Iterator<Item = f64>) -> (f64, f64) {
    let values: Vec<f64> = values
        .filter(|v| v.is_finite() && (!axis.log || *v > 0.0))
        .collect();
    let (mut low, mut high) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if !low.is_finite() {
        let (low, high) = if axis.log { (0.1, 1.0) } else { (0.0, 1.0) };
        return (axis.min.unwrap_or(low), axis.max.unwrap_or(high));
    }
    if axis.headroom > 0.0 {
        high = if axis.log {
            high * (high / low).powf(axis.headroom)
        } else {
            high + (high - low.min(0.0)) * axis.headroom
        };
    }
    if axis.log {
        // Out to the next power of ten (or half-decade when that is enough).
        let snap_down = |v: f64| {
            let decade = 10f64.powf(v.log10().floor());
            if v >= 5.0 * decade {
                5.0 * decade
            } else if v >= 2.0 * decade {
                2.0 * decade
            } else {
                decade
            }
        };
        let snap_up = |v: f64| {
            let decade = 10f64.powf(v.log10().floor());
            if v <= decade * 1.000_001 {
                decade
            } else if v <= 2.0 * decade {
                2.0 * decade
            } else if v <= 5.0 * decade {
                5.0 * decade
            } else {
                10.0 * decade
            }
        };
        low = snap_down(low * 0.9);
        high = snap_up(high * 1.1);
        if high <= low {
            high = low * 10.0;
        }
    } else {
        let span = (high - low).max(high.abs() * 1e-3).max(1e-12);
        low -= 0.05 * span;
        high += 0.05 * span;
        if values.iter().all(|&v| v >= 0.0) && low < 0.0 {
            low = 0.0;
        }
    }
    (axis.min.unwrap_or(low), axis.max.unwrap_or(high))
}

/// Draws a figure on any plotters backend.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, figure: &Figure) -> Result<()> {
    root.fill(&WHITE).map_err(|e| anyhow!("drawing: {e}"))?;
    let points = || figure.series.iter().flat_map(|s| s.points.iter());
    let x = bounds(&figure.x, points().map(|p| p.x));
    let y = bounds(
        &figure.y,
        points().flat_map(|p| [Some(p.y), p.low, p.high].into_iter().flatten()),
    );
    let result = if figure.legend == Legend::Panels {
        draw_panels(root, figure, x, y)
    } else {
        draw_chart(root, figure, x, y, &Layout::FULL)
    };
    result.map_err(|e| anyhow!("drawing figure {}: {e}", figure.name))
}

/// Font sizes and margins of one chart.
struct Layout {
    caption: u32,
    margin: u32,
    x_area: u32,
    y_area: u32,
    label: u32,
    desc: u32,
    legend: u32,
    labels: usize,
}

impl Layout {
    /// A figure alone.
    const FULL: Layout = Layout {
        caption: 26,
        margin: 18,
        x_area: 58,
        y_area: 86,
        label: 17,
        desc: 20,
        legend: 16,
        labels: 10,
    };
    /// One panel of small multiples.
    const PANEL: Layout = Layout {
        caption: 24,
        margin: 10,
        x_area: 52,
        y_area: 84,
        label: 18,
        desc: 19,
        legend: 18,
        labels: 6,
    };
}

/// Small multiples: the title, then one chart per colour on the figure's axes.
fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    x: (f64, f64),
    y: (f64, f64),
) -> Result<(), String> {
    let rest = root
        .titled(&figure.title, ("sans-serif", 30))
        .map_err(|e| e.to_string())?;
    let colors = panel_colors(figure);
    let areas = rest.split_evenly(panel_grid(colors.len()));
    for (area, &color) in areas.iter().zip(&colors) {
        let mut title = String::new();
        let series: Vec<Series> = figure
            .series
            .iter()
            .filter(|s| s.color == color || s.color == BLACK_INDEX)
            .map(|s| {
                let mut s = s.clone();
                if s.color == BLACK_INDEX {
                    // Drawn in every panel under its own label: a common yardstick.
                    return s;
                }
                s.label = match s.style {
                    Style::Theory => "theory".into(),
                    Style::Reference => "limit (dashed)".into(),
                    Style::Measured | Style::MeasuredLine => {
                        if title.is_empty() {
                            title = s.label.clone();
                        }
                        "measured".into()
                    }
                };
                s
            })
            .collect();
        let panel = Figure {
            name: figure.name.clone(),
            title,
            caption: String::new(),
            x: figure.x.clone(),
            y: figure.y.clone(),
            series,
            legend: Legend::UpperLeft,
        };
        draw_chart(area, &panel, x, y, &Layout::PANEL)?;
    }
    Ok(())
}

/// The key points of a logarithmic axis from `low` to `high`: (labelled, grid only). One
/// label per decade over many decades, 1-2-5 over a few, 1 … 9 within one or two; each
/// value once (plotters' own log ticks can repeat a label, 10 drawn twice).
fn log_ticks(low: f64, high: f64) -> (Vec<f64>, Vec<f64>) {
    let decades = (high / low).log10();
    let multiples: &[f64] = if decades <= 1.5 {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    } else if decades <= 4.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let step = if decades > 9.0 { 2 } else { 1 };
    let first = low.log10().floor() as i32;
    let last = high.log10().ceil() as i32;
    let inside = |v: f64| v >= low * (1.0 - 1e-9) && v <= high * (1.0 + 1e-9);
    let mut bold = Vec::new();
    let mut light = Vec::new();
    for e in first..=last {
        let decade = 10f64.powi(e);
        for &k in multiples {
            let v = k * decade;
            if inside(v) && (e - first) % step == 0 {
                bold.push(v);
            }
        }
        for k in 1..10 {
            let v = k as f64 * decade;
            if inside(v) {
                light.push(v);
            }
        }
    }
    (bold, light)
}

/// Draws one chart of the figure on `root`, with the axes' types chosen.
fn draw_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    x: (f64, f64),
    y: (f64, f64),
    layout: &Layout,
) -> Result<(), String> {
    // A panel is a third of a figure wide: 1-2-5 labels on its horizontal axis overlap, so
    // it labels decades only (when it spans more than a decade and a half).
    let sparse = |(bold, light): (Vec<f64>, Vec<f64>), span: f64| {
        if layout.labels < Layout::FULL.labels && span > 1.5 {
            let decades = bold
                .into_iter()
                .filter(|v: &f64| (v.log10() - v.log10().round()).abs() < 1e-9)
                .collect();
            (decades, light)
        } else {
            (bold, light)
        }
    };
    let log_x = || {
        let (bold, light) = sparse(log_ticks(x.0, x.1), (x.1 / x.0).log10());
        (x.0..x.1)
            .log_scale()
            .with_key_points(bold)
            .with_light_points(light)
    };
    let log_y = || {
        let (bold, light) = log_ticks(y.0, y.1);
        (y.0..y.1)
            .log_scale()
            .with_key_points(bold)
            .with_light_points(light)
    };
    match (figure.x.log, figure.y.log) {
        (false, false) => chart(root, figure, x.0..x.1, y.0..y.1, y.0, layout),
        (true, false) => chart(root, figure, log_x(), y.0..y.1, y.0, layout),
        (false, true) => chart(root, figure, x.0..x.1, log_y(), y.0, layout),
        (true, true) => chart(root, figure, log_x(), log_y(), y.0, layout),
    }
}

/// Draws the chart once the coordinate types are known.
fn chart<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    x_range: X,
    y_range: Y,
    y_floor: f64,
    layout: &Layout,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut chart = ChartBuilder::on(root)
        .caption(&figure.title, ("sans-serif", layout.caption))
        .margin(layout.margin)
        .x_label_area_size(layout.x_area)
        .y_label_area_size(layout.y_area)
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| err(&e))?;
    let formatter = |v: &f64| tick(*v);
    chart
        .configure_mesh()
        .x_desc(figure.x.label.as_str())
        .y_desc(figure.y.label.as_str())
        .x_labels(layout.labels)
        .y_labels(layout.labels)
        .x_label_formatter(&formatter)
        .y_label_formatter(&formatter)
        .label_style(("sans-serif", layout.label))
        .axis_desc_style(("sans-serif", layout.desc))
        .light_line_style(RGBColor(0, 0, 0).mix(0.05))
        .bold_line_style(RGBColor(0, 0, 0).mix(0.15))
        .draw()
        .map_err(|e| err(&e))?;

    let y_log = figure.y.log;
    let x_log = figure.x.log;
    let visible = |p: &Point| p.x.is_finite() && (!x_log || p.x > 0.0);
    let mut measured = 0usize;
    for series in &figure.series {
        let c = match series.style {
            Style::Reference => REFERENCE,
            _ => color(series.color),
        };
        match series.style {
            Style::Theory | Style::Reference => {
                // On a log axis a curve stops where it leaves the axis at the bottom, rather
                // than running along the bottom edge.
                let line: Vec<(f64, f64)> = series
                    .points
                    .iter()
                    .filter(|p| {
                        visible(p) && p.y.is_finite() && (!y_log || p.y >= y_floor * 0.999_999)
                    })
                    .map(|p| (p.x, p.y))
                    .collect();
                let style = c.stroke_width(2);
                let drawn = if series.style == Style::Theory {
                    chart
                        .draw_series(LineSeries::new(line, style))
                        .map_err(|e| err(&e))?
                } else {
                    chart
                        .draw_series(DashedLineSeries::new(line, 10, 6, style))
                        .map_err(|e| err(&e))?
                };
                if !series.label.is_empty() {
                    // The swatch is drawn as the line is: solid, or dashed for a reference.
                    let dashed = series.style == Style::Reference;
                    drawn
                        .label(series.label.as_str())
                        .legend(move |(x, y)| EmptyElement::at((x, y)) + swatch(dashed, c));
                }
            }
            Style::Measured | Style::MeasuredLine => {
                let marker = measured;
                measured += 1;
                let shown: Vec<&Point> = series.points.iter().filter(|p| visible(p)).collect();
                if series.style == Style::MeasuredLine {
                    let line: Vec<(f64, f64)> = shown
                        .iter()
                        .filter(|p| !y_log || p.y > 0.0)
                        .map(|p| (p.x, p.y))
                        .collect();
                    chart
                        .draw_series(LineSeries::new(line, c.mix(0.6).stroke_width(1)))
                        .map_err(|e| err(&e))?;
                }
                // Error bars: a vertical line with caps; on a log axis a lower end ≤ 0 is
                // drawn from the bottom of the axis.
                let bars: Vec<PathElement<(f64, f64)>> = shown
                    .iter()
                    .filter_map(|p| {
                        let (low, high) = (p.low?, p.high?);
                        let low = if y_log && low <= 0.0 { y_floor } else { low };
                        (!y_log || high > 0.0).then(|| {
                            PathElement::new(vec![(p.x, low), (p.x, high)], c.stroke_width(2))
                        })
                    })
                    .collect();
                chart.draw_series(bars).map_err(|e| err(&e))?;
                let caps = shown.iter().flat_map(|p| {
                    [p.low, p.high]
                        .into_iter()
                        .flatten()
                        .filter(|v| !y_log || *v > 0.0)
                        .map(|v| {
                            EmptyElement::at((p.x, v))
                                + PathElement::new(vec![(-5, 0), (5, 0)], c.stroke_width(2))
                        })
                        .collect::<Vec<_>>()
                });
                chart.draw_series(caps).map_err(|e| err(&e))?;
                let markers = shown
                    .iter()
                    .filter(|p| p.y.is_finite() && (!y_log || p.y > 0.0))
                    .map(|p| EmptyElement::at((p.x, p.y)) + shape(marker, c));
                let drawn = chart.draw_series(markers).map_err(|e| err(&e))?;
                if !series.label.is_empty() {
                    drawn
                        .label(series.label.as_str())
                        .legend(move |(x, y)| EmptyElement::at((x + 12, y)) + shape(marker, c));
                }
            }
        }
    }
    let position = match figure.legend {
        Legend::UpperRight => SeriesLabelPosition::UpperRight,
        Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
        Legend::LowerRight => SeriesLabelPosition::LowerRight,
        Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
        Legend::Center => SeriesLabelPosition::MiddleMiddle,
        Legend::Panels => SeriesLabelPosition::UpperLeft,
    };
    chart
        .configure_series_labels()
        .position(position)
        .label_font(("sans-serif", layout.legend))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .margin(10)
        .draw()
        .map_err(|e| err(&e))?;
    Ok(())
}

/// A legend swatch in pixel coordinates from its anchor: a solid line, or a dashed one.
fn swatch<DB: DrawingBackend>(dashed: bool, c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    let stroke = c.stroke_width(3);
    if dashed {
        plotters::element::DashedPathElement::new(vec![(0, 0), (24, 0)], 9, 6, stroke).into_dyn()
    } else {
        PathElement::new(vec![(0, 0), (24, 0)], stroke).into_dyn()
    }
}

/// A marker in pixel coordinates around its anchor: circles, squares, triangles and
/// diamonds in turn, so that overlapping series stay distinguishable.
fn shape<DB: DrawingBackend>(index: usize, c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    let fill = c.filled();
    match index % 4 {
        0 => Circle::new((0, 0), 5, fill).into_dyn(),
        1 => Rectangle::new([(-4, -4), (4, 4)], fill).into_dyn(),
        2 => Polygon::new(vec![(0, -6), (6, 4), (-6, 4)], fill).into_dyn(),
        _ => Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], fill).into_dyn(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.001), "0.001");
        assert_eq!(tick(0.0001), "1e-4");
        assert_eq!(tick(2.5e-6), "2.5e-6");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(1.0), "1");
        assert_eq!(tick(10000.0), "10000");
        assert_eq!(tick(2_000_000.0), "2e6");
        assert_eq!(tick(0.0), "0");
    }

    #[test]
    fn log_bounds_snap_to_round_values() {
        let axis = Axis::log("y");
        assert_eq!(bounds(&axis, [0.0123, 0.4].into_iter()), (0.01, 0.5));
        assert_eq!(bounds(&axis, [0.0, -1.0].into_iter()), (0.1, 1.0));
        let fixed = Axis::log("y").range(1e-6, 1.0);
        assert_eq!(bounds(&fixed, [0.5].into_iter()), (1e-6, 1.0));
    }

    #[test]
    fn linear_bounds_pad_and_keep_zero() {
        let (low, high) = bounds(&Axis::linear("x"), [0.0, 10.0].into_iter());
        assert_eq!(low, 0.0);
        assert!((high - 10.5).abs() < 1e-9);
    }

    #[test]
    fn log_ticks_are_distinct_and_inside() {
        // Under 1.5 decades every multiple is labelled; each once (10 was drawn twice).
        let (close, _) = log_ticks(0.8, 20.0);
        assert_eq!(close.iter().filter(|&&v| v == 10.0).count(), 1);
        assert_eq!(close.len(), 13);
        let (bold, light) = log_ticks(0.8, 200.0);
        assert_eq!(bold, vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]);
        for window in light.windows(2) {
            assert!(window[0] < window[1], "{light:?}");
        }
        let labels: Vec<String> = bold.iter().map(|&v| tick(v)).collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(labels, unique);
        let (wide, _) = log_ticks(1e-6, 1.0);
        assert_eq!(wide.len(), 7);
    }

    #[test]
    fn panels_get_one_colour_each_and_a_taller_figure() {
        let series = |color, style| Series::new("k", style, color, vec![Point::new(1.0, 1.0)]);
        let figure = Figure {
            name: "f".into(),
            title: "t".into(),
            caption: String::new(),
            x: Axis::linear("x"),
            y: Axis::linear("y"),
            series: (0..6)
                .flat_map(|c| [series(c, Style::Theory), series(c, Style::Measured)])
                .collect(),
            legend: Legend::Panels,
        };
        assert_eq!(panel_colors(&figure), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(panel_grid(6), (2, 3));
        assert_eq!(size(&figure), (PANELS_SIZE.0, 50 + 2 * PANELS_SIZE.1));
    }

    #[test]
    fn sample_points_span_the_range() {
        let g = geometric(0.001, 10.0, 5);
        assert_eq!(g.len(), 5);
        assert!((g[0] - 0.001).abs() < 1e-12 && (g[4] - 10.0).abs() < 1e-9);
        assert!((g[2] - 0.1).abs() < 1e-9);
        assert_eq!(linear(0.0, 1.0, 3), vec![0.0, 0.5, 1.0]);
    }
}
