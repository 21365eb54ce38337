//! A misspelled subcommand refused before it becomes a paid task: `run` is
//! the default command, so `baton stauts ID` would start a peer on the task
//! "stauts ID".
//!
//! A typo arrives as bare words; a real task is prose, almost always one
//! quoted argument with spaces. So only the implicit `run` is judged, only
//! when no argument holds a space and there is no `--`, and only a first word
//! a keystroke or two from a command's name (a transposition counts one).
//! `baton -- stauts`, `baton run stauts`, a quoted sentence and a task on
//! stdin are always tasks; so is a word far from every command (`refactor`).

use std::ffi::OsString;

use crate::error::{Error, Result};

/// Refuse `task` when it looks like a misspelled one of `commands`.
pub fn check(args: &[OsString], task: &[String], commands: &[impl AsRef<str>]) -> Result<()> {
    if args.iter().skip(1).any(|a| a == "--") {
        return Ok(());
    }
    let Some(first) = task.first() else {
        return Ok(());
    };
    if task.iter().any(|w| w.contains(char::is_whitespace)) {
        return Ok(());
    }
    let word = first.to_lowercase();
    let Some(name) = commands
        .iter()
        .map(AsRef::as_ref)
        .filter_map(|c| near(&word, c).map(|d| (d, c)))
        .min()
        .map(|(_, c)| c)
    else {
        return Ok(());
    };
    let rest: Vec<&str> = task.iter().skip(1).map(String::as_str).collect();
    let as_task = std::iter::once(first.as_str())
        .chain(rest.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    Err(Error::usage_hint(
        format!("`{first}` is not a command: did you mean `baton {name}`?"),
        format!(
            "did you mean `baton {name}{}`? A task of bare words that starts like a command is \
             not run; to give it to a peer, put it after `--`: `baton -- {as_task}`",
            rest.iter().map(|w| format!(" {w}")).collect::<String>()
        ),
    ))
}

/// How many edits `word` is from `name`, if that is near enough to be a
/// typo of it: for a name of three letters (`run`, `mcp`, `man`) only two
/// letters swapped (a changed letter makes another word: `ran`, `max`), one
/// edit up to six letters (`jbos`, `stauts`), two beyond (`councle`).
fn near(word: &str, name: &str) -> Option<usize> {
    let d = distance(word, name);
    let len = name.chars().count();
    let swapped = || {
        let mut a: Vec<char> = word.chars().collect();
        let mut b: Vec<char> = name.chars().collect();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    };
    let ok = match len {
        0..=3 => d == 1 && swapped(),
        4..=6 => d == 1,
        _ => d <= 2,
    };
    (d > 0 && ok).then_some(d)
}

/// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`:
/// the optimal string alignment distance.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMANDS: [&str; 11] = [
        "status", "jobs", "wait", "result", "logs", "watch", "mcp", "run", "ask", "man", "council",
    ];

    fn judged(args: &[&str]) -> Result<()> {
        let os: Vec<OsString> = std::iter::once("baton")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let task: Vec<String> = args
            .iter()
            .filter(|a| **a != "--")
            .map(|a| a.to_string())
            .collect();
        check(&os, &task, &COMMANDS)
    }

    #[test]
    fn distances_count_a_swap_as_one_edit() {
        assert_eq!(distance("stauts", "status"), 1);
        assert_eq!(distance("jbos", "jobs"), 1);
        assert_eq!(distance("wiat", "wait"), 1);
        assert_eq!(distance("staus", "status"), 1);
        assert_eq!(distance("refactor", "result"), 5);
        assert_eq!(distance("", "run"), 3);
    }

    #[test]
    fn bare_words_near_a_command_are_refused_with_the_command() {
        for (args, name) in [
            (&["stauts", "1m96abcdefghj"][..], "status"),
            (&["jbos"][..], "jobs"),
            (&["wiat", "1m96abcdefghj"][..], "wait"),
            (&["Stauts"][..], "status"),
            (&["reslt", "1m96abcdefghj"][..], "result"),
            (&["rnu"][..], "run"),
            (&["councle", "status"][..], "council"),
        ] {
            let e = judged(args).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(
                e.to_string()
                    .contains(&format!("did you mean `baton {name}`?")),
                "{e}"
            );
            assert!(e.hint().unwrap().contains("`baton -- "), "{:?}", e.hint());
        }
    }

    #[test]
    fn prose_a_dash_dash_and_words_far_from_any_command_are_tasks() {
        for args in [
            &["fix the status bar"][..],
            &["stauts", "of the build, please"][..],
            &["--", "stauts"][..],
            &["refactor"][..],
            &["test"][..],
            &["docs"][..],
            &["status"][..],
            &["task"][..],
            &["ran"][..],
            &["max"][..],
            &["same"][..],
            &[][..],
        ] {
            assert!(judged(args).is_ok(), "{args:?}");
        }
    }
}
