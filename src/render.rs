//! `Render`: how a result type shows itself to people (`--text`).
//! Each result type implements it beside its definition, so `output` prints any of them without knowing features.

/// Text for people; JSON comes from the type's `Serialize`.
pub trait Render {
    /// The full `--text` report, ending in a newline.
    fn text(&self) -> String;
}
