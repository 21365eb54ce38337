//! The packet as asked for: `--packet` file, then flags and words on top
//! (`packet_input`); `packet::build` reads, redacts and measures it.

use std::io::IsTerminal;
use std::path::Path;

use crate::error::{Error, Result};

use super::AskRequest;
use super::packet;
use super::packet::{FileRef, HelpType, PacketInput, Snippet};

/// The packet from `--packet`, with flags added (scalars replace, lists append).
pub fn packet_input(args: &AskRequest) -> Result<PacketInput> {
    let stdin = Path::new("-");
    if args.packet.as_deref() == Some(stdin) && args.previous_advice.as_deref() == Some(stdin) {
        return Err(Error::usage(
            "--packet and --previous-advice cannot both read stdin",
        ));
    }
    let mut input = match &args.packet {
        Some(p) => PacketInput::parse(
            &packet::read_source(p, "--packet")?,
            &p.display().to_string(),
        )?,
        None => PacketInput::default(),
    };
    if !args.question.is_empty() {
        input.question = Some(args.question.join(" "));
    }
    if let Some(h) = &args.help_type {
        input.help_type = Some(HelpType::parse(h)?);
    }
    for (field, flag) in [
        (&mut input.goal, &args.goal),
        (&mut input.hypothesis, &args.hypothesis),
        (&mut input.follow_up, &args.follow_up),
        (&mut input.task_id, &args.task_id),
    ] {
        if flag.is_some() {
            field.clone_from(flag);
        }
    }
    PacketInput::extend_list(&mut input.constraints, &args.constraints);
    PacketInput::extend_list(&mut input.tried, &args.tried);
    PacketInput::extend_list(&mut input.observations, &args.observations);
    input
        .snippets
        .extend(args.snippets.iter().cloned().map(Snippet::Text));
    input
        .files
        .extend(args.files.iter().cloned().map(FileRef::Spec));
    if let Some(p) = &args.previous_advice {
        let text = packet::read_source(p, "--previous-advice")?;
        input.previous_advice = Some(packet::previous_advice(&text));
    }
    let stdin_free =
        args.packet.as_deref() != Some(stdin) && args.previous_advice.as_deref() != Some(stdin);
    if input.question.is_none() && stdin_free && !std::io::stdin().is_terminal() {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Error::io("reading the question from stdin", e))?;
        packet::check_stdin_content(&s, "the question")?;
        if !s.trim().is_empty() {
            input.question = Some(s);
        }
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> AskRequest {
        crate::cli::ask::parse_for_test(args)
    }

    #[test]
    fn flags_fill_and_extend_the_packet() {
        let d = tempfile::tempdir().unwrap();
        let pf = d.path().join("p.json");
        std::fs::write(
            &pf,
            r#"{"question":"from file","tried":["a"],"goal":"g1","task_id":"t"}"#,
        )
        .unwrap();
        let args = parse(&[
            "--packet",
            pf.to_str().unwrap(),
            "--tried",
            "b",
            "--goal",
            "g2",
            "--help-type",
            "code-review",
            "--snippet",
            "x=1",
            "--file",
            "a.rs:1-2",
        ]);
        let i = packet_input(&args).unwrap();
        assert_eq!(i.question.as_deref(), Some("from file"));
        assert_eq!(i.goal.as_deref(), Some("g2"));
        assert_eq!(i.help_type, Some(HelpType::CodeReview));
        assert_eq!(i.task_id.as_deref(), Some("t"));
        match i.tried {
            Some(packet::OneOrMany::Many(v)) => assert_eq!(v, ["a", "b"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(i.snippets, [Snippet::Text("x=1".into())]);
        assert_eq!(i.files, [FileRef::Spec("a.rs:1-2".into())]);
        let words = packet_input(&parse(&["--packet", pf.to_str().unwrap(), "new", "q"])).unwrap();
        assert_eq!(words.question.as_deref(), Some("new q"));
    }
}
