//! `bench report --html FILE`: the report as one self-contained page that
//! opens offline and can be mailed or attached to a CI run. Inline CSS and
//! inline SVG only: no script, no font, no image, no link, nothing fetched
//! (and a Content-Security-Policy of `default-src 'none'` that says so to
//! the browser, so even a string that escaped escaping could not run).
//!
//! Every string from the record (settings, task ids and titles, failure
//! kinds, the set's path) is untrusted: a trial file is JSON anyone with
//! the state folder could have written, a task's text came from a commit
//! message. All of them go through `esc`.

use std::fmt::Write as _;

use super::report::{Report, SettingReport, p_text, percent_range, usd};
use super::report_text::duration;

/// `s` safe inside an element or a quoted attribute.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Escaped, with `code` spans shown as code (the backticks the
/// recommendation and the verdicts put around settings).
fn prose(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    for (i, part) in e.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// A label of at most 28 characters for a chart's row.
fn short(s: &str) -> String {
    match s.char_indices().nth(27) {
        Some((at, _)) if s.chars().count() > 28 => format!("{}…", &s[..at]),
        _ => s.to_string(),
    }
}

const STYLE: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:62rem;padding:0 1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
code{font:0.92em ui-monospace,monospace;background:#f0f0f0;padding:0 .25em;border-radius:3px}
.rec{font-size:1.1rem;padding:.8rem 1rem;border-left:4px solid #3b6ea5;background:#f3f7fb}
.meta{color:#555}.note{color:#8a5a00}
table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.25rem .6rem;text-align:left;border-bottom:1px solid #ddd;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.yes{background:#e3f3e3}td.no{background:#f8e5e5}td.none{color:#999}
svg{max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif;fill:#1b1b1b}
.bar{fill:#3b6ea5}.cost{fill:#c27c2c}.grid{stroke:#ddd}.whisker{stroke:#1b1b1b;stroke-width:1.5}.unknown{fill:#888}
@media (prefers-color-scheme:dark){body{background:#161616;color:#e6e6e6}code{background:#2a2a2a}.rec{background:#1d2733}
th,td{border-color:#333}td.yes{background:#1f3a1f}td.no{background:#3d2020}svg text{fill:#e6e6e6}.whisker{stroke:#e6e6e6}.grid{stroke:#333}}
";

/// The page.
pub fn page(r: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>baton bench {id}</title><style>{STYLE}</style></head>\n<body>\n\
         <h1>baton bench <code>{id}</code></h1>\n<p class=\"meta\">set <code>{set}</code>{tasks} · \
         repeat {rep} · {n} trials</p>\n",
        id = esc(&r.bench_id),
        set = esc(&r.set),
        tasks = match r.set_tasks {
            Some(n) => format!(" ({n} tasks, {} run)", r.tasks_run),
            None => format!(" ({} tasks run)", r.tasks_run),
        },
        rep = r.repeat,
        n = r.trials,
    );
    if let Some(why) = &r.set_note {
        let _ = writeln!(
            h,
            "<p class=\"note\">The set's tasks are not named: {}</p>",
            esc(why)
        );
    }
    let _ = writeln!(h, "<p class=\"rec\">{}</p>", prose(&r.recommendation.text));
    if let Some(d) = &r.describe {
        let _ = writeln!(h, "<p class=\"describe\">{}</p>", prose(&d.line()));
    }
    let ran: Vec<&SettingReport> = r.settings.iter().filter(|s| s.trials > 0).collect();
    if !ran.is_empty() {
        h.push_str("<h2>Solve rate, with its 95 % interval</h2>\n");
        h.push_str(&rate_chart(&ran));
        h.push_str("<h2>Cost per solved task</h2>\n");
        h.push_str(&cost_chart(&ran));
    }
    h.push_str(&settings_table(r));
    h.push_str(&pairs_table(r));
    h.push_str(&tasks_table(r));
    h.push_str(
        "<p class=\"meta\">Made by <code>baton bench report</code>; docs/bench.md says how to \
         read it.</p>\n</body></html>\n",
    );
    h
}

/// Chart geometry: a label column, then the bars, then a value column.
const LABEL_W: f64 = 210.0;
const BAR_W: f64 = 420.0;
const ROW_H: f64 = 30.0;
const WIDTH: f64 = 800.0;

fn chart_open(h: &mut String, rows: usize, label: &str) {
    let height = rows as f64 * ROW_H + 30.0;
    let _ = writeln!(
        h,
        "<svg role=\"img\" aria-label=\"{label}\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" \
         height=\"{height}\">"
    );
}

fn row_label(h: &mut String, i: usize, s: &str) {
    let y = i as f64 * ROW_H + 20.0;
    let _ = writeln!(
        h,
        "<text x=\"{}\" y=\"{y}\" text-anchor=\"end\"><title>{}</title>{}</text>",
        LABEL_W - 10.0,
        esc(s),
        esc(&short(s))
    );
}

fn rate_chart(ran: &[&SettingReport]) -> String {
    let mut h = String::new();
    chart_open(&mut h, ran.len(), "solve rate per setting");
    let bottom = ran.len() as f64 * ROW_H + 5.0;
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let x = LABEL_W + tick * BAR_W;
        let _ = writeln!(
            h,
            "<line class=\"grid\" x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"{bottom}\"/>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{:.0} %</text>",
            bottom + 15.0,
            tick * 100.0
        );
    }
    for (i, s) in ran.iter().enumerate() {
        row_label(&mut h, i, &s.setting);
        let (rate, iv) = (s.solve_rate.unwrap_or(0.0), s.interval);
        let y = i as f64 * ROW_H + 6.0;
        let _ = writeln!(
            h,
            "<rect class=\"bar\" x=\"{LABEL_W}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\"/>",
            rate * BAR_W,
            ROW_H - 12.0
        );
        if let Some(iv) = iv {
            let (x1, x2, cy) = (
                LABEL_W + iv.low * BAR_W,
                LABEL_W + iv.high * BAR_W,
                y + (ROW_H - 12.0) / 2.0,
            );
            let _ = writeln!(
                h,
                "<path class=\"whisker\" d=\"M{x1:.1} {cy}H{x2:.1}M{x1:.1} {:.1}V{:.1}M{x2:.1} {:.1}V{:.1}\"/>",
                cy - 6.0,
                cy + 6.0,
                cy - 6.0,
                cy + 6.0
            );
        }
        let _ = writeln!(
            h,
            "<text x=\"{}\" y=\"{}\">{}/{} · {:.0} % ({})</text>",
            LABEL_W + BAR_W + 10.0,
            y + 14.0,
            s.solved,
            s.trials,
            rate * 100.0,
            iv.map(percent_range).unwrap_or_default()
        );
    }
    h.push_str("</svg>\n");
    h
}

fn cost_chart(ran: &[&SettingReport]) -> String {
    let mut h = String::new();
    chart_open(&mut h, ran.len(), "cost per solved task per setting");
    let max = ran
        .iter()
        .filter_map(|s| s.cost_per_solved_usd)
        .fold(0.0_f64, f64::max);
    for (i, s) in ran.iter().enumerate() {
        row_label(&mut h, i, &s.setting);
        let y = i as f64 * ROW_H + 6.0;
        match s.cost_per_solved_usd {
            Some(c) => {
                let w = if max > 0.0 { c / max * BAR_W } else { 0.0 };
                let _ = writeln!(
                    h,
                    "<rect class=\"cost\" x=\"{LABEL_W}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\"/>\
                     <text x=\"{:.1}\" y=\"{}\">{}</text>",
                    ROW_H - 12.0,
                    LABEL_W + w + 8.0,
                    y + 14.0,
                    usd(c)
                );
            }
            None => {
                let why = s.cost_note.as_deref().unwrap_or("unknown");
                let _ = writeln!(
                    h,
                    "<text class=\"unknown\" x=\"{LABEL_W}\" y=\"{}\">unknown: {}</text>",
                    y + 14.0,
                    esc(&short_note(why))
                );
            }
        }
    }
    h.push_str("</svg>\n");
    h
}

/// The note up to its first colon: `6 of 6 trials unpriced`.
fn short_note(s: &str) -> String {
    s.split(':').next().unwrap_or(s).to_string()
}

fn settings_table(r: &Report) -> String {
    let mut h = String::from(
        "<h2>Per setting</h2>\n<table><tr><th>setting</th><th>solved</th><th>rate</th>\
         <th>95 % interval</th><th>$/solved</th><th>cost</th><th>wall (median)</th>\
         <th>tokens</th><th>tokens (median)</th><th>tampered</th><th>not solved: why</th></tr>\n",
    );
    let dash = || "-".to_string();
    for s in &r.settings {
        let mut why: Vec<String> = Vec::new();
        if s.tests_failed > 0 {
            why.push(format!("tests {}", s.tests_failed));
        }
        why.extend(
            s.failure_kinds
                .iter()
                .map(|(k, n)| format!("{} {n}", esc(k))),
        );
        let cps = match (s.cost_per_solved_usd, &s.cost_note) {
            (Some(c), _) => usd(c),
            (None, Some(n)) => format!(
                "- <span class=\"note\" title=\"{}\">({})</span>",
                esc(n),
                esc(&short_note(n))
            ),
            (None, None) => dash(),
        };
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td class=\"n\">{}/{}</td><td class=\"n\">{}</td><td>{}</td>\
             <td>{cps}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&s.setting),
            s.solved,
            s.trials,
            s.solve_rate
                .map_or_else(dash, |x| format!("{:.0} %", x * 100.0)),
            s.interval.map_or_else(dash, percent_range),
            s.cost_usd.map_or_else(dash, usd),
            s.median_wall_ms.map_or_else(dash, duration),
            s.tokens,
            s.median_tokens.map_or_else(dash, |t| format!("{t:.0}")),
            s.tampered_trials,
            if why.is_empty() {
                dash()
            } else {
                why.join(", ")
            },
        );
    }
    h.push_str("</table>\n");
    h
}

fn pairs_table(r: &Report) -> String {
    if r.pairs.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<h2>Paired on the same (task, repeat)</h2>\n<table><tr><th>a</th><th>b</th><th>both</th>\
         <th>only a</th><th>only b</th><th>neither</th><th>p</th><th>verdict</th></tr>\n",
    );
    for p in &r.pairs {
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&p.a),
            esc(&p.b),
            p.both_solved,
            p.only_a,
            p.only_b,
            p.neither,
            esc(&p_text(p.p_value)),
            prose(&p.verdict)
        );
    }
    h.push_str("</table>\n");
    h
}

fn tasks_table(r: &Report) -> String {
    if r.tasks.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2>Per task</h2>\n<table><tr><th>task</th><th>title</th>");
    for s in &r.settings {
        let _ = write!(h, "<th><code>{}</code></th>", esc(&short(&s.setting)));
    }
    h.push_str("</tr>\n");
    for t in &r.tasks {
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td>",
            esc(&t.id),
            t.title.as_deref().map(esc).unwrap_or_default()
        );
        for c in &t.results {
            let class = match (c.trials, c.solved) {
                (0, _) => "none",
                (_, 0) => "no",
                _ => "yes",
            };
            let text = if c.trials == 0 {
                "-".to_string()
            } else {
                format!("{}/{}", c.solved, c.trials)
            };
            let _ = write!(h, "<td class=\"n {class}\">{text}</td>");
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::super::report::build;
    use super::super::report::tests::{spec, split, trial};
    use super::*;

    fn report_with(settings: &[&str]) -> Report {
        let trials = split((settings[0], Some(0.5)), (settings[1], None), [3, 1, 1, 1]);
        build(&spec(settings), &trials, Err("gone".into()))
    }

    #[test]
    fn the_page_fetches_nothing_and_runs_nothing() {
        let h = page(&report_with(&["claude:opus", "pi:glm-5.2"]));
        for bad in [
            "http:", "https:", "src=", "<link", "<script", "url(", "@import", "href=",
        ] {
            assert!(!h.contains(bad), "{bad} in the page");
        }
        assert!(h.contains("default-src 'none'"));
        assert!(h.starts_with("<!doctype html>"));
        assert!(h.ends_with("</html>\n"));
        // Both charts, a bar and a whisker per setting.
        assert_eq!(h.matches("<svg ").count(), 2);
        assert_eq!(h.matches("class=\"bar\"").count(), 2);
        assert_eq!(h.matches("class=\"whisker\"").count(), 2);
        // The unpriced setting has no cost bar, and says why.
        assert_eq!(h.matches("class=\"cost\"").count(), 1);
        assert!(h.contains("unknown: 6 of 6 trials unpriced"), "{h}");
    }

    #[test]
    fn strings_from_the_record_are_escaped_everywhere() {
        let evil = "<script>alert(1)</script>";
        let mut trials = split(
            (evil, Some(0.5)),
            ("b\"onmouseover='x'", Some(1.0)),
            [2, 0, 0, 1],
        );
        trials[0].failure_kind = Some("<img src=x onerror=alert(2)>".into());
        trials.push(trial("<b>task</b>", evil, true, Some(0.5)));
        let mut r = build(&spec(&[evil]), &trials, Err("<i>gone</i>".into()));
        r.bench_id = "<id>".into();
        r.set = "/tmp/&<set>".into();
        let h = page(&r);
        assert!(!h.contains("<script"), "{h}");
        assert!(!h.contains("<img"), "{h}");
        assert!(!h.contains("<b>task"), "{h}");
        assert!(!h.contains("<i>gone"), "{h}");
        assert!(!h.contains("\"onmouseover"), "{h}");
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(h.contains("b&quot;onmouseover=&#39;x&#39;"));
        assert!(h.contains("&lt;img src=x onerror=alert(2)&gt;"));
        assert!(h.contains("/tmp/&amp;&lt;set&gt;"));
        assert!(h.contains("<title>baton bench &lt;id&gt;</title>"));
    }

    #[test]
    fn escaping_and_labels() {
        assert_eq!(
            esc("a&b<c>\"d'\u{1b}"),
            "a&amp;b&lt;c&gt;&quot;d&#39;\u{fffd}"
        );
        assert_eq!(
            prose("`a<b` solved more than `c`"),
            "<code>a&lt;b</code> solved more than <code>c</code>"
        );
        assert_eq!(short("short"), "short");
        assert_eq!(short(&"x".repeat(28)), "x".repeat(28));
        assert_eq!(short(&"x".repeat(29)), format!("{}…", "x".repeat(27)));
    }

    #[test]
    fn a_report_without_trials_is_still_a_page() {
        let r = build(&spec(&["a", "b"]), &[], Err("gone".into()));
        let h = page(&r);
        assert!(!h.contains("<svg"));
        assert!(h.contains("no trials recorded"));
    }
}
