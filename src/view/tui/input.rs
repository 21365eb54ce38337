//! The terminal's key events as the app's `Key`s: arrows, paging, Enter,
//! Esc, Backspace, letters, and Ctrl-C (which quits even from a text field).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::Key;

/// The app's key for a terminal key press (`None`: not one it uses).
pub fn key(e: KeyEvent) -> Option<Key> {
    if e.kind == KeyEventKind::Release {
        return None;
    }
    if e.modifiers.contains(KeyModifiers::CONTROL) {
        return match e.code {
            KeyCode::Char('c' | 'd') => Some(Key::Interrupt),
            _ => None,
        };
    }
    Some(match e.code {
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Left => Key::Esc,
        KeyCode::Right => Key::Enter,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Char(c) => Key::Char(c),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_and_ctrl_c_interrupts() {
        let k = |c, m| key(KeyEvent::new(c, m));
        assert_eq!(
            k(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Key::Interrupt)
        );
        assert_eq!(
            k(KeyCode::Char('c'), KeyModifiers::NONE),
            Some(Key::Char('c'))
        );
        assert_eq!(
            k(KeyCode::Char('Y'), KeyModifiers::SHIFT),
            Some(Key::Char('Y'))
        );
        assert_eq!(k(KeyCode::PageUp, KeyModifiers::NONE), Some(Key::PageUp));
        assert_eq!(k(KeyCode::F(1), KeyModifiers::NONE), None);
    }
}
