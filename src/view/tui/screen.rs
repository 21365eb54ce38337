//! One frame of the interactive `watch`: the title line, the fleet table or
//! the detail pane, and the status bar (a prompt, a message, or the keys).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Pane, Prompt};
use super::theme::Theme;
use super::{detail, fleet, group};
use crate::output::render::{Shape, clean};
use crate::view::watch::Row;

/// Rows of the transcript in a terminal `height` rows high.
pub fn transcript_rows(height: u16) -> usize {
    height.saturating_sub(2 + detail::HEAD_ROWS) as usize
}

pub fn draw(f: &mut Frame, app: &App, theme: &Theme) {
    let [top, body, bar] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    // A council counts once (its header), not once per run.
    let tops = || {
        app.jobs
            .iter()
            .filter(|v| !matches!(v.row, Row::Run { .. }))
    };
    let running = tops().filter(|v| v.status == "running").count();
    // Both are groups of runs; a fan-out is not a council.
    let fanouts = tops().filter(|v| group::is_fanout(v)).count();
    let councils = tops().filter(|v| v.row == Row::Council).count() - fanouts;
    let attention = tops()
        .filter(|v| {
            matches!(
                v.status,
                "stalled"
                    | "failed"
                    | "lost"
                    | "timeout"
                    | "corrupt"
                    | "needs_human"
                    | "awaiting_approval"
                    | "approved"
            )
        })
        .count();
    let total = tops().count() - councils - fanouts + app.hidden;
    let mut title = format!(
        "baton watch{} · {total} job{}",
        match (app.repos.shown(), app.repos.only) {
            (false, _) => String::new(),
            (true, None) => format!(" --all · {} repositories", app.repos.labels.len()),
            (true, Some(i)) => format!(" --all · {}", app.repos.labels[i]),
        },
        if total == 1 { "" } else { "s" }
    );
    if councils > 0 {
        title.push_str(&format!(
            " · {councils} council{}",
            if councils == 1 { "" } else { "s" }
        ));
    }
    if fanouts > 0 {
        title.push_str(&format!(
            " · {fanouts} fan-out{}",
            if fanouts == 1 { "" } else { "s" }
        ));
    }
    title.push_str(&format!(
        " · {running} running · {attention} need attention"
    ));
    if app.hidden > 0 {
        title.push_str(&format!(" · {} older not listed", app.hidden));
    }
    f.render_widget(Paragraph::new(Line::styled(title, theme.title())), top);
    match app.pane {
        Pane::Fleet => fleet::render(f, body, app, theme),
        Pane::Detail => detail::render(f, body, app, theme),
    }
    let line = match (&app.prompt, &app.status) {
        (Some(Prompt::Cancel(id)), _) => {
            Line::styled(format!("cancel {} {id}? y/n", app.noun(id)), theme.prompt())
        }
        (Some(Prompt::Continue { id, text }), _) => Line::from(vec![
            Span::styled(format!("continue job {id}: "), theme.prompt()),
            Span::raw(format!("{}_", clean(text, Shape::Line))),
            Span::styled("  (Enter sends, Esc leaves)", theme.dim()),
        ]),
        // A status can quote an error's message, which can quote a peer.
        (None, Some(s)) => Line::raw(clean(s, Shape::Line)),
        (None, None) => Line::styled(
            match app.pane {
                Pane::Fleet if app.repos.shown() => {
                    "↑↓ select  Enter open  c cancel  n continue  r repository  q quit"
                }
                Pane::Fleet => "↑↓ select  Enter open  c cancel  n continue  q quit",
                Pane::Detail => {
                    "↑↓ PgUp PgDn scroll  End follow  d diff  c cancel  n continue  Esc back  q quit"
                }
            },
            theme.dim(),
        ),
    };
    f.render_widget(Paragraph::new(line), bar);
}
