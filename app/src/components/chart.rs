//! Chart: a bar or line chart drawn as inline SVG on the server, with axes, labels and a text
//! alternative (an SVG `<desc>` summary and a visually hidden table of the data).

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::display_text;
use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 48.0;

/// The kind of chart.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    // Bars, to compare categories.
    #[default]
    Bar,
    // A line, to show a trend over ordered points such as days.
    Line,
}

/// Props of the `Chart` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChartProps {
    /// bar (compare categories, default) or line (a trend over ordered points).
    #[serde(default)]
    pub kind: ChartKind,
    /// What the chart shows, such as "Emails received per month"; also its accessible name.
    pub title: String,
    /// The points, bound with {"$data": "/pointer"}: objects with a label and a numeric value.
    #[serde(default)]
    #[schemars(extend("x-bindable" = true))]
    pub data: Option<Vec<Value>>,
    /// The key of each point's label (default "label").
    #[serde(default)]
    pub label_key: Option<String>,
    /// The key of each point's number (default "value").
    #[serde(default)]
    pub value_key: Option<String>,
    /// The horizontal axis title, such as "Month".
    #[serde(default)]
    pub x_label: Option<String>,
    /// The vertical axis title, such as "Emails".
    #[serde(default)]
    pub y_label: Option<String>,
}

impl ComponentProps for ChartProps {
    const NAME: &'static str = "Chart";
    const ROLE: Role = Role::Display;
    const DESCRIPTION: &'static str =
        "Bar (compare) or line (trend) chart; labelKey and valueKey name the points' keys.";

    fn example() -> (Value, Value) {
        (
            json!({"kind": "bar", "title": "Emails received per month", "data": {"$data": "/monthly"},
                   "labelKey": "month", "valueKey": "count", "xLabel": "Month", "yLabel": "Emails"}),
            json!({"monthly": [
                {"month": "Jan", "count": 120}, {"month": "Feb", "count": 95},
                {"month": "Mar", "count": 143}, {"month": "Apr", "count": 60}
            ]}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        view! { <ChartView dom_id=node.dom_id() props=self/> }.into_any()
    }
}

/// One plotted point.
#[derive(Clone, Debug, PartialEq)]
struct Point {
    label: String,
    value: Option<f64>,
}

fn points(props: &ChartProps) -> Vec<Point> {
    let label_key = props.label_key.as_deref().unwrap_or("label");
    let value_key = props.value_key.as_deref().unwrap_or("value");
    props
        .data
        .iter()
        .flatten()
        .enumerate()
        .map(|(index, item)| match item {
            Value::Object(object) => Point {
                label: object
                    .get(label_key)
                    .map(display_text)
                    .unwrap_or_else(|| (index + 1).to_string()),
                value: object.get(value_key).and_then(number),
            },
            other => Point {
                label: (index + 1).to_string(),
                value: number(other),
            },
        })
        .collect()
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
    .filter(|number: &f64| number.is_finite())
}

/// A "nice" step (1, 2 or 5 times a power of ten) so that about four steps cover `range`.
fn nice_step(range: f64) -> f64 {
    let rough = (range / 4.0).max(f64::MIN_POSITIVE);
    let magnitude = 10_f64.powf(rough.log10().floor());
    let fraction = rough / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// The axis range and its ticks, always including zero.
fn axis(values: &[f64]) -> (f64, f64, Vec<f64>) {
    let low = values.iter().copied().fold(0.0_f64, f64::min);
    let high = values.iter().copied().fold(0.0_f64, f64::max);
    let high = if high == low { low + 1.0 } else { high };
    let step = nice_step(high - low);
    let start = (low / step).floor() * step;
    let end = (high / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut tick = start;
    while tick <= end + step / 2.0 && ticks.len() < 20 {
        ticks.push(tick);
        tick += step;
    }
    (start, end, ticks)
}

fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn short_label(label: &str) -> String {
    if label.chars().count() > 12 {
        format!("{}\u{2026}", label.chars().take(11).collect::<String>())
    } else {
        label.to_owned()
    }
}

/// A `<figure>`: title, SVG (`role="img"`, named by the title and described by a summary), and a
/// visually hidden table of the same data.
#[component]
pub fn ChartView(dom_id: String, props: ChartProps) -> impl IntoView {
    let points = points(&props);
    let title_id = format!("{dom_id}-title");
    let desc_id = format!("{dom_id}-desc");
    let values: Vec<f64> = points.iter().filter_map(|point| point.value).collect();
    if values.is_empty() {
        return view! {
            <figure id=dom_id.clone() class="space-y-2">
                <figcaption class="font-semibold text-slate-900 dark:text-slate-100">{props.title}</figcaption>
                <p class="text-sm italic text-slate-600 dark:text-slate-300">"No data to chart."</p>
            </figure>
        }
        .into_any();
    }
    let (low, high, ticks) = axis(&values);
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let y_of = move |value: f64| TOP + (high - value) / (high - low) * plot_height;
    let slot = plot_width / points.len() as f64;
    let x_of = move |index: usize| LEFT + slot * (index as f64 + 0.5);
    let zero_y = y_of(0.0);

    let summary = {
        let max = points
            .iter()
            .filter(|point| point.value.is_some())
            .max_by(|left, right| {
                left.value
                    .partial_cmp(&right.value)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        let min = points
            .iter()
            .filter(|point| point.value.is_some())
            .min_by(|left, right| {
                left.value
                    .partial_cmp(&right.value)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        let kind = if props.kind == ChartKind::Bar {
            "Bar chart"
        } else {
            "Line chart"
        };
        match (max, min) {
            (Some(max), Some(min)) => format!(
                "{kind} of {} points. Highest: {} at {}. Lowest: {} at {}.",
                points.len(),
                max.label,
                format_number(max.value.unwrap_or_default()),
                min.label,
                format_number(min.value.unwrap_or_default())
            ),
            _ => format!("{kind} of {} points.", points.len()),
        }
    };

    let grid = ticks
        .iter()
        .map(|tick| {
            let y = y_of(*tick);
            view! {
                <g>
                    <line x1=LEFT.to_string() x2=(WIDTH - RIGHT).to_string() y1=y.to_string() y2=y.to_string() stroke="currentColor" stroke-opacity="0.2" stroke-width="1"></line>
                    <text x=(LEFT - 8.0).to_string() y=(y + 4.0).to_string() text-anchor="end" font-size="12" fill="currentColor">{format_number(*tick)}</text>
                </g>
            }
        })
        .collect_view();

    let x_labels = points
        .iter()
        .enumerate()
        .map(|(index, point)| {
            view! {
                <text x=x_of(index).to_string() y=(HEIGHT - BOTTOM + 18.0).to_string() text-anchor="middle" font-size="12" fill="currentColor">
                    {short_label(&point.label)}
                </text>
            }
        })
        .collect_view();

    let marks = match props.kind {
        ChartKind::Bar => {
            let bar_width = (slot * 0.7).max(1.0);
            points
                .iter()
                .enumerate()
                .filter_map(|(index, point)| point.value.map(|value| (index, value)))
                .map(|(index, value)| {
                    let top = y_of(value.max(0.0));
                    let height = (y_of(value.min(0.0)) - top).max(0.5);
                    view! {
                        <rect x=(x_of(index) - bar_width / 2.0).to_string() y=top.to_string() width=bar_width.to_string() height=height.to_string() rx="2" fill="#4338ca"></rect>
                    }
                })
                .collect_view()
                .into_any()
        }
        ChartKind::Line => {
            let coordinates: Vec<(f64, f64)> = points
                .iter()
                .enumerate()
                .filter_map(|(index, point)| point.value.map(|value| (x_of(index), y_of(value))))
                .collect();
            let path = coordinates
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect::<Vec<_>>()
                .join(" ");
            let dots = coordinates
                .iter()
                .map(|(x, y)| view! { <circle cx=x.to_string() cy=y.to_string() r="3.5" fill="#4338ca"></circle> })
                .collect_view();
            view! {
                <polyline points=path fill="none" stroke="#4338ca" stroke-width="2.5"></polyline>
                {dots}
            }
            .into_any()
        }
    };

    let x_axis_title = props.x_label.clone().map(|label| {
        view! { <text x=(LEFT + plot_width / 2.0).to_string() y=(HEIGHT - 6.0).to_string() text-anchor="middle" font-size="12" font-weight="600" fill="currentColor">{label}</text> }
    });
    let y_axis_title = props.y_label.clone().map(|label| {
        let middle = TOP + plot_height / 2.0;
        view! {
            <text x="14" y=middle.to_string() text-anchor="middle" font-size="12" font-weight="600" fill="currentColor" transform=format!("rotate(-90 14 {middle})")>{label}</text>
        }
    });

    let label_header = props.x_label.clone().unwrap_or_else(|| "Label".to_owned());
    let value_header = props.y_label.clone().unwrap_or_else(|| "Value".to_owned());
    let table_rows = points
        .iter()
        .map(|point| {
            view! {
                <tr>
                    <th scope="row">{point.label.clone()}</th>
                    <td>{point.value.map(format_number).unwrap_or_default()}</td>
                </tr>
            }
        })
        .collect_view();

    let labelled_by = format!("{title_id} {desc_id}");
    view! {
        <figure id=dom_id class="space-y-2">
            <figcaption id=title_id.clone() class="font-semibold text-slate-900 dark:text-slate-100">{props.title.clone()}</figcaption>
            <svg
                role="img"
                aria-labelledby=labelled_by
                viewBox=format!("0 0 {WIDTH} {HEIGHT}")
                class="h-auto w-full max-w-2xl text-slate-700 dark:text-slate-300"
                xmlns="http://www.w3.org/2000/svg"
            >
                <desc id=desc_id>{summary}</desc>
                {grid}
                <line x1=LEFT.to_string() x2=(WIDTH - RIGHT).to_string() y1=zero_y.to_string() y2=zero_y.to_string() stroke="currentColor" stroke-opacity="0.8" stroke-width="1.5"></line>
                <line x1=LEFT.to_string() x2=LEFT.to_string() y1=TOP.to_string() y2=(HEIGHT - BOTTOM).to_string() stroke="currentColor" stroke-opacity="0.8" stroke-width="1.5"></line>
                {marks}
                {x_labels}
                {x_axis_title}
                {y_axis_title}
            </svg>
            <table class="sr-only">
                <caption>{format!("Data of the chart: {}", props.title)}</caption>
                <thead>
                    <tr>
                        <th scope="col">{label_header}</th>
                        <th scope="col">{value_header}</th>
                    </tr>
                </thead>
                <tbody>{table_rows}</tbody>
            </table>
        </figure>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_includes_zero_and_covers_every_value() {
        let (low, high, ticks) = axis(&[120.0, 95.0, 143.0]);
        assert_eq!(low, 0.0);
        assert!(high >= 143.0);
        assert_eq!(ticks.first().copied(), Some(0.0));
        let (low, _, _) = axis(&[-5.0, 3.0]);
        assert!(low <= -5.0);
    }

    #[test]
    fn points_read_their_keys_and_skip_non_numbers() -> Result<(), String> {
        let props: ChartProps = crate::catalog::parse_props(&json!({
            "title": "t", "data": [{"m": "Jan", "n": "4"}, {"m": "Feb", "n": "x"}, 7], "labelKey": "m", "valueKey": "n"
        }))?;
        assert_eq!(
            points(&props),
            vec![
                Point {
                    label: "Jan".to_owned(),
                    value: Some(4.0)
                },
                Point {
                    label: "Feb".to_owned(),
                    value: None
                },
                Point {
                    label: "3".to_owned(),
                    value: Some(7.0)
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn numbers_are_formatted_without_noise() {
        assert_eq!(format_number(120.0), "120");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(0.126), "0.13");
    }
}
