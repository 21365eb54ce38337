//! The detail pane of one job: what it is and where it stands, its changed
//! files, then its live transcript (following the tail unless scrolled back)
//! or, on `d`, its diff.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Scroll};
use super::theme::{Theme, glyph};
use crate::job::human;
use crate::output::render::{Shape, clean};
use crate::view::watch::{JobView, tokens, total_tokens};

/// Rows above the transcript: the job line, the task, the files, a rule.
pub const HEAD_ROWS: u16 = 4;

fn files(v: &JobView, width: usize) -> String {
    if v.files_changed.is_empty() {
        return "files: none".into();
    }
    let mut s = format!("files ({}):", v.files_changed.len());
    for (i, f) in v.files_changed.iter().enumerate() {
        let f = clean(f, Shape::Line);
        let more = format!(" (+{})", v.files_changed.len() - i);
        if s.len() + 1 + f.len() + more.len() > width && i > 0 {
            s.push_str(&more);
            return s;
        }
        s.push(' ');
        s.push_str(&f);
    }
    s
}

fn rule(title: &str, width: u16) -> String {
    let head = format!("── {title} ");
    let n = (width as usize).saturating_sub(head.chars().count());
    format!("{head}{}", "─".repeat(n))
}

pub fn render(f: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let [head, body] =
        Layout::vertical([Constraint::Length(HEAD_ROWS), Constraint::Fill(1)]).areas(area);
    let Some(v) = app.selected_job() else {
        f.render_widget(Paragraph::new("the job is no longer in the store"), area);
        return;
    };
    let mut tok =
        total_tokens(&v.usage).map_or("no tokens yet".into(), |t| format!("{} tokens", tokens(t)));
    if let Some(c) = v.usage.cost_usd {
        tok.push_str(&format!(" ${c:.2}"));
    }
    let model = v
        .model
        .as_deref()
        .map_or(String::new(), |m| format!(" {}", clean(m, Shape::Line)));
    let last = v
        .last_activity_age_ms
        .map_or(String::new(), |a| format!(" · last {} ago", human(a)));
    let title = rule(
        &match (&app.diff, app.scroll) {
            (Some(_), _) => "diff (d closes)".to_string(),
            (None, Scroll::Follow) => "transcript (following)".to_string(),
            (None, Scroll::At(_)) => "transcript (held; End follows)".to_string(),
        },
        area.width,
    );
    let lines = vec![
        Line::from(vec![
            Span::styled(
                format!("{} {}", glyph(v.status), v.status),
                theme.status(v.status),
            ),
            Span::styled(format!("  {}", v.job_id), theme.title()),
            Span::raw(format!(
                "  {}{model} · {} · {tok}{last}",
                v.agent,
                human(v.elapsed_ms)
            )),
        ]),
        Line::raw(format!("task: {}", clean(&v.task, Shape::Line))),
        Line::raw(files(v, area.width as usize)),
        Line::styled(title, theme.dim()),
    ];
    f.render_widget(Paragraph::new(lines), head);
    let rows = body.height as usize;
    let text: Vec<Line> = match &app.diff {
        Some(d) => d
            .iter()
            .skip(app.diff_top)
            .take(rows)
            .map(|l| Line::styled(clean(l, Shape::Line), theme.diff(l)))
            .collect(),
        None => {
            let (a, b) = app.visible(rows);
            if a == b {
                vec![Line::styled("(nothing from the peer yet)", theme.dim())]
            } else {
                app.transcript
                    .range(a, b)
                    .map(|l| Line::raw(clean(l, Shape::Line)))
                    .collect()
            }
        }
    };
    f.render_widget(Paragraph::new(text), body);
}
