//! Golden frames of the interactive `watch` (ratatui's `TestBackend`): the
//! fleet and the detail pane at 80×24 and 120×40, without and with colour.
//!
//! `tests/fixtures/tui/<name>.txt` holds the screen's text, then (colour
//! frames) every styled run as `row col+len fg bg modifiers`.
//! `BATON_BLESS=1 cargo test --lib tui` rewrites them after a deliberate change.

use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use super::app::{App, Key, Prompt, tests::job};
use super::screen;
use super::theme::Theme;
use crate::result::Usage;
use crate::view::watch::JobView;

fn fleet() -> Vec<JobView> {
    let mut run = job("1m8q4fhwprzza", "running", 9);
    run.agent = "codex".into();
    run.model = Some("gpt-5.5".into());
    run.elapsed_ms = 4 * 60_000 + 3000;
    run.last_activity_age_ms = Some(2000);
    run.doing =
        Some("$ cargo test --all --locked -- --test-threads=1 parse::trailing_commas".into());
    run.files_changed = vec!["src/parse.rs".into()];
    run.usage = Usage {
        input_tokens: Some(5261),
        output_tokens: Some(108),
        ..Usage::default()
    };
    let mut stall = job("1m8q4fhxdm4a3", "stalled", 7);
    stall.agent = "claude".into();
    stall.model = Some("claude-opus-5".into());
    stall.elapsed_ms = 9 * 60_000;
    stall.last_activity_age_ms = Some(8 * 60_000);
    stall.doing = Some("edit src/config.rs".into());
    stall.files_changed = vec![
        "src/config.rs".into(),
        "src/lib.rs".into(),
        "README.md".into(),
    ];
    stall.usage = Usage {
        input_tokens: Some(11_000),
        output_tokens: Some(1000),
        cost_usd: Some(0.21),
        ..Usage::default()
    };
    let mut lost = job("1m8q4fhyjpq0w", "lost", 8);
    lost.elapsed_ms = 61_000;
    lost.last_activity_age_ms = Some(3 * 60_000);
    lost.doing = Some("codex job 1m8q4fhyjpq0w lost after 61.0s: its runner is gone".into());
    let mut ok = job("1m8q4fhrqqj33", "success", 5);
    ok.agent = "pi".into();
    ok.elapsed_ms = 40_000;
    ok.last_activity_age_ms = Some(2 * 3_600_000);
    ok.doing = Some("pi succeeded in 40.1s, 1 file changed: Added the flag".into());
    ok.files_changed = vec!["src/cli.rs".into()];
    let mut cancelled = job("1m8q4fhqaaaaa", "cancelled", 4);
    cancelled.elapsed_ms = 12_000;
    cancelled.last_activity_age_ms = Some(5 * 3_600_000);
    cancelled.doing = Some("cancelled".into());
    vec![ok, run, cancelled, stall, lost]
}

fn app() -> App {
    let mut app = App::default();
    app.set_jobs(fleet(), 0);
    app
}

fn detail() -> App {
    let mut app = app();
    // The running job (third row: lost, stalled, running).
    app.key(Key::Down);
    app.key(Key::Down);
    app.key(Key::Enter);
    for l in [
        "session t-1 (model gpt-5.5)",
        "» I'll make parse() accept trailing commas and add a test.",
        "$ rg -n 'fn parse' src",
        "edit src/parse.rs",
        "$ cargo test --all --locked -- --test-threads=1 parse::trailing_commas",
        "  exit 101: test parse::trailing_commas ... FAILED",
        "thinking: the comma is consumed before the closing bracket check",
        "edit src/parse.rs",
        "$ cargo test --all --locked -- --test-threads=1 parse::trailing_commas",
    ] {
        app.transcript.push(l.to_string());
    }
    app
}

fn render(app: &mut App, w: u16, h: u16, color: bool) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.page = screen::transcript_rows(h);
    t.draw(|f| screen::draw(f, app, &Theme { color })).unwrap();
    dump(t.backend().buffer(), color)
}

/// The screen's text; with `styles`, then every styled run.
fn dump(b: &Buffer, styles: bool) -> String {
    let (w, h) = (b.area.width, b.area.height);
    let mut out = String::new();
    for y in 0..h {
        let row: String = (0..w).map(|x| b[(x, y)].symbol()).collect();
        out.push_str(row.trim_end());
        out.push('\n');
    }
    if !styles {
        return out;
    }
    out.push_str("-- styles (row col+len fg bg modifiers)\n");
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let c = &b[(x, y)];
            let key = (c.fg, c.bg, c.modifier);
            let start = x;
            while x < w && {
                let d = &b[(x, y)];
                (d.fg, d.bg, d.modifier) == key
            } {
                x += 1;
            }
            if key != (Color::Reset, Color::Reset, Modifier::empty()) {
                out.push_str(&format!(
                    "{y} {start}+{} {:?} {:?} {:?}\n",
                    x - start,
                    key.0,
                    key.1,
                    key.2
                ));
            }
        }
    }
    out
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tui")
        .join(format!("{name}.txt"));
    if std::env::var_os("BATON_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BATON_BLESS=1 writes it)", path.display()));
    assert_eq!(
        actual,
        want,
        "{} differs (BATON_BLESS=1 rewrites it)",
        path.display()
    );
}

#[test]
fn fleet_and_detail_frames_match_the_golden_files() {
    for (w, h) in [(80, 24), (120, 40)] {
        for color in [false, true] {
            let suffix = if color { "color" } else { "no-color" };
            check(
                &format!("fleet-{w}x{h}-{suffix}"),
                &render(&mut app(), w, h, color),
            );
            check(
                &format!("detail-{w}x{h}-{suffix}"),
                &render(&mut detail(), w, h, color),
            );
        }
    }
}

#[test]
fn prompts_and_the_empty_fleet_match_the_golden_files() {
    let mut a = app();
    a.key(Key::Down);
    a.key(Key::Down);
    a.key(Key::Char('c'));
    assert!(matches!(a.prompt, Some(Prompt::Cancel(_))));
    check("confirm-cancel-80x24", &render(&mut a, 80, 24, false));
    let mut a = app();
    a.key(Key::End);
    a.key(Key::Char('n'));
    for c in "now the changelog".chars() {
        a.key(Key::Char(c));
    }
    check("continue-80x24", &render(&mut a, 80, 24, false));
    let mut a = detail();
    a.diff = Some(vec![
        "diff --git a/src/parse.rs b/src/parse.rs".into(),
        "--- a/src/parse.rs".into(),
        "+++ b/src/parse.rs".into(),
        "@@ -10,3 +10,4 @@ fn parse(".into(),
        "-    if c == ',' { return Err(x) }".into(),
        "+    if c == ',' && !closing { return Err(x) }".into(),
    ]);
    check("diff-80x24-color", &render(&mut a, 80, 24, true));
    check("empty-80x24", &render(&mut App::default(), 80, 24, false));
}

/// The fleet with a council: its header and runs among the jobs.
fn with_council() -> App {
    let mut c = super::group::tests::council();
    c.usage = Usage {
        input_tokens: Some(20_000),
        output_tokens: Some(1_500),
        ..Usage::default()
    };
    c.runs[1].usage = c.usage.clone();
    let mut rows = fleet();
    rows.extend(super::group::rows(&c, 100_000));
    let mut app = App::default();
    app.set_jobs(rows, 0);
    app
}

#[test]
fn a_council_group_matches_the_golden_files() {
    for (w, h) in [(80, 24), (120, 40)] {
        check(
            &format!("council-{w}x{h}-no-color"),
            &render(&mut with_council(), w, h, false),
        );
    }
    check(
        "council-120x40-color",
        &render(&mut with_council(), 120, 40, true),
    );
    // A run's detail pane: the council's run, its transcript.
    let mut a = with_council();
    while a.selected.as_deref() != Some("1m8q4fhzzzzzz/proposing-m0") {
        a.key(Key::Down);
    }
    a.key(Key::Enter);
    for l in ["session t-2", "$ rg -n 'fn main' src", "$ make"] {
        a.transcript.push(l.to_string());
    }
    check("council-run-detail-80x24", &render(&mut a, 80, 24, false));
}

#[test]
fn colour_is_off_without_losing_the_selection() {
    let plain = render(&mut app(), 80, 24, true);
    assert!(plain.contains("Cyan") && plain.contains("Red"), "{plain}");
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| screen::draw(f, &app(), &Theme { color: false }))
        .unwrap();
    let b = t.backend().buffer();
    for c in b.content() {
        assert_eq!(c.fg, Color::Reset, "no colour under NO_COLOR");
    }
    assert!(
        b.content()
            .iter()
            .any(|c| c.modifier.contains(Modifier::REVERSED))
    );
}

/// Issue 29 §7: two fan-outs beside a council are two fan-outs, not two
/// more councils, and neither is a job; a fan-out's row is called one.
#[test]
fn the_title_counts_fan_outs_apart_from_councils_and_jobs() {
    let mut rows = fleet();
    rows.extend(super::group::rows(&super::group::tests::council(), 100_000));
    for id in ["1m8q4fhfan001", "1m8q4fhfan002"] {
        let mut f = super::group::tests::council();
        f.council_id = id.into();
        f.kind = "fanout".into();
        rows.extend(super::group::rows(&f, 100_000));
    }
    let mut app = App::default();
    app.set_jobs(rows, 0);
    let screen = render(&mut app, 120, 40, false);
    let title = screen.lines().next().unwrap();
    assert!(
        title.starts_with("baton watch · 5 jobs · 1 council · 2 fan-outs · "),
        "{title}"
    );
    assert_eq!(app.noun("1m8q4fhfan001"), "fan-out");
    assert_eq!(app.noun("1m8q4fhzzzzzz"), "council");
}
