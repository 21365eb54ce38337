//! How the interactive `watch` looks: a glyph and a colour per status, and
//! every style it uses — colour off under `NO_COLOR` (reverse video and bold
//! stay, so the selection and headers still show).

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to something (no-color.org).
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub fn status(&self, status: &str) -> Style {
        self.fg(match status {
            "running" => Color::Cyan,
            "success" | "ok" | "ready" | "done" => Color::Green,
            "stalled" | "timeout" | "awaiting_approval" | "approved" | "needs_human" => {
                Color::Yellow
            }
            "failed" | "lost" | "corrupt" | "error" => Color::Red,
            _ => Color::Gray,
        })
    }

    pub fn dim(&self) -> Style {
        self.fg(Color::DarkGray)
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    pub fn prompt(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// A diff line by its first character.
    pub fn diff(&self, line: &str) -> Style {
        if line.starts_with("+++") || line.starts_with("---") {
            self.title()
        } else if line.starts_with('+') {
            self.fg(Color::Green)
        } else if line.starts_with('-') {
            self.fg(Color::Red)
        } else if line.starts_with("@@") {
            self.fg(Color::Cyan)
        } else {
            Style::new()
        }
    }
}

/// One column wide each, in fonts over SSH too.
pub fn glyph(status: &str) -> &'static str {
    match status {
        "running" => "●",
        "stalled" => "◐",
        "success" | "ok" | "ready" | "done" => "✓",
        "failed" | "error" => "✗",
        // A council waiting for a person (approval, or a look at it).
        "awaiting_approval" | "approved" => "◆",
        "needs_human" => "△",
        "timeout" => "◷",
        "cancelled" => "⊘",
        "lost" => "?",
        "corrupt" => "!",
        _ => "·",
    }
}
