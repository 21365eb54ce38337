//! `watch --all`: which repository each row belongs to, and the one the
//! fleet is narrowed to (`r` cycles through them, then back to all).

use std::collections::HashMap;

use crate::view::watch::{JobView, Row};

#[derive(Debug, Default)]
pub struct Repos {
    /// Each repository's label (its root); empty: one repository, no column.
    pub labels: Vec<String>,
    /// The repository of each row id (a job's, a council's).
    pub of: HashMap<String, usize>,
    /// Only this repository's rows are shown (`None`: all).
    pub only: Option<usize>,
}

impl Repos {
    /// Whether the fleet spans repositories (a REPO column, the `r` key).
    pub fn shown(&self) -> bool {
        !self.labels.is_empty()
    }

    /// The repository index of a row (a council's run: its council's).
    pub fn index(&self, v: &JobView) -> Option<usize> {
        match &v.row {
            Row::Run { council, .. } => self.of.get(council).copied(),
            _ => self.of.get(&v.job_id).copied(),
        }
    }

    /// The label of a row's repository for its narrow column: the last
    /// part of its root (a marker kept: `web (gone)`).
    pub fn label(&self, v: &JobView) -> String {
        self.index(v)
            .and_then(|i| self.labels.get(i))
            .map_or_else(String::new, |l| name(l))
    }

    /// Whether a row passes the repository filter.
    pub fn keeps(&self, v: &JobView) -> bool {
        self.only.is_none() || self.index(v) == self.only
    }

    /// Narrow to the next repository, then back to all; what the status bar says.
    pub fn cycle(&mut self) -> String {
        self.only = match self.only {
            None if !self.labels.is_empty() => Some(0),
            Some(i) if i + 1 < self.labels.len() => Some(i + 1),
            _ => None,
        };
        match self.only {
            Some(i) => format!(
                "repository {} ({}/{}); r for the next, all after the last",
                self.labels[i],
                i + 1,
                self.labels.len()
            ),
            None => "every repository".into(),
        }
    }
}

/// `/home/me/web (gone)` → `web (gone)`.
fn name(label: &str) -> String {
    let (path, mark) = match label.find(" (") {
        Some(i) => label.split_at(i),
        None => (label, ""),
    };
    let last = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path);
    format!("{last}{mark}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_cycles_through_each_repository_then_all() {
        let mut r = Repos {
            labels: vec!["/a".into(), "/b".into()],
            ..Repos::default()
        };
        r.of.insert("j1".into(), 0);
        r.of.insert("c1".into(), 1);
        let mut job = crate::view::tui::app::tests::job("j1", "running", 1);
        let mut run = job.clone();
        run.job_id = "c1/x".into();
        run.row = Row::Run {
            council: "c1".into(),
            who: "m0".into(),
            log: None,
            last: true,
        };
        assert!(r.keeps(&job) && r.keeps(&run));
        assert!(r.cycle().contains("/a (1/2)"));
        assert!(r.keeps(&job) && !r.keeps(&run));
        assert_eq!(r.label(&run), "b");
        assert_eq!(name("/home/me/web (gone)"), "web (gone)");
        r.cycle();
        assert!(!r.keeps(&job) && r.keeps(&run));
        assert_eq!(r.cycle(), "every repository");
        job.job_id = "unknown".into();
        assert_eq!(r.label(&job), "");
        assert!(!Repos::default().shown());
    }
}
