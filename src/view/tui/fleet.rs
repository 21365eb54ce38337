//! The fleet table: one row per job in attention order — status glyph, id,
//! agent and model, elapsed, age of the last activity, files, tokens and
//! cost, and the "now doing" line; more columns when the terminal is wide.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};

use super::app::App;
use super::theme::{Theme, glyph};
use crate::job::human;
use crate::output::render::{Shape, clean};
use crate::view::watch::{JobView, tokens, total_tokens};

/// From this width the status word, the model and the cost are shown.
const WIDE: u16 = 110;

/// Tokens, and the cost where the CLI reports one (wide only).
fn usage(v: &JobView, wide: bool) -> String {
    let t = total_tokens(&v.usage).map_or("-".into(), tokens);
    match v.usage.cost_usd {
        Some(c) if wide => format!("{t} ${c:.2}"),
        _ => t,
    }
}

fn agent(v: &JobView, wide: bool) -> String {
    let s = match &v.model {
        Some(m) if wide => format!("{} {m}", v.agent),
        _ => v.agent.clone(),
    };
    clean(&s, Shape::Line).into_owned()
}

fn doing(v: &JobView) -> String {
    let d = v.doing.as_deref().unwrap_or("");
    clean(d.lines().next().unwrap_or(""), Shape::Line).into_owned()
}

pub fn render(f: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    if app.jobs.is_empty() {
        let p = Paragraph::new(vec![
            Line::raw(""),
            Line::raw(if app.repos.shown() {
                "  no jobs yet in these repositories"
            } else {
                "  no jobs yet in this project"
            }),
            Line::styled(
                "  start one with `baton run --async --agent codex \"…\"`; it shows here at once",
                theme.dim(),
            ),
        ]);
        f.render_widget(p, area);
        return;
    }
    let wide = area.width >= WIDE;
    let rows = app.jobs.iter().map(|v| {
        let st = theme.status(v.status);
        let status = if wide {
            Span::styled(format!("{} {}", glyph(v.status), v.status), st)
        } else {
            Span::styled(glyph(v.status), st)
        };
        let mut cells = vec![Cell::from(status), Cell::from(super::group::label(v))];
        if app.repos.shown() {
            cells.push(Cell::from(
                clean(&app.repos.label(v), Shape::Line).into_owned(),
            ));
        }
        cells.extend([
            Cell::from(agent(v, wide)),
            Cell::from(human(v.elapsed_ms)),
            Cell::from(v.last_activity_age_ms.map_or("-".into(), human)),
            Cell::from(v.files_changed.len().to_string()),
            Cell::from(usage(v, wide)),
            Cell::from(doing(v)),
        ]);
        Row::new(cells)
    });
    let widths = if wide {
        [
            Constraint::Length(11),
            Constraint::Length(13),
            Constraint::Length(20),
            Constraint::Length(7),
            Constraint::Length(5),
            Constraint::Length(5),
            Constraint::Length(13),
            Constraint::Fill(1),
        ]
    } else {
        [
            Constraint::Length(1),
            Constraint::Length(13),
            Constraint::Length(8),
            Constraint::Length(7),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(6),
            Constraint::Fill(1),
        ]
    };
    let head = if wide {
        [
            "STATUS", "ID", "AGENT", "ELAPSED", "LAST", "FILES", "TOKENS", "DOING",
        ]
    } else {
        [
            "", "ID", "AGENT", "ELAPSED", "LAST", "FILES", "TOKENS", "DOING",
        ]
    };
    let mut widths = widths.to_vec();
    let mut head = head.to_vec();
    if app.repos.shown() {
        widths.insert(2, Constraint::Length(if wide { 20 } else { 12 }));
        head.insert(2, "REPO");
    }
    let table = Table::new(rows, widths)
        .header(Row::new(head).style(theme.title()))
        .column_spacing(1)
        .highlight_symbol("›")
        .highlight_spacing(HighlightSpacing::Always)
        .row_highlight_style(theme.selected());
    let mut state = TableState::default().with_selected(app.selected_index());
    f.render_stateful_widget(table, area, &mut state);
}
