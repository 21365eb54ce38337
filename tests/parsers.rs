//! The transcript parsers against damaged transcripts: the recorded fixtures
//! of every CLI, truncated, with bytes flipped, lines dropped or doubled.
//! Whatever a peer prints, baton never panics and prints exactly one JSON
//! result.

use std::fs;
use std::path::PathBuf;

use baton::agent::{Agent, ProcessExit};
use proptest::prelude::*;

use crate::support::{Env, Run};

/// Every recorded transcript with the agent that prints it.
fn fixtures() -> Vec<(Agent, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for (dir, agents) in [
        ("codex", &[Agent::Codex][..]),
        ("claude", &[Agent::Claude][..]),
        ("agy", &[Agent::Agy][..]),
        ("pi", &[Agent::Pi, Agent::Zai][..]),
        ("gemini-cli", &[Agent::GeminiCli][..]),
    ] {
        let mut files: Vec<_> = fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.extension()
                    .is_some_and(|x| x == "jsonl" || x == "json" || x == "txt")
                    && !p.to_string_lossy().ends_with(".stderr.txt")
            })
            .collect();
        files.sort();
        for f in files {
            let bytes = fs::read(&f).unwrap();
            for a in agents {
                out.push((*a, bytes.clone()));
            }
        }
    }
    assert!(out.len() > 20, "fixtures missing");
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
    DropLine(usize),
    DuplicateLine(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Mutation::Flip(i, x)),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
    ]
}

fn apply(bytes: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for m in muts {
        match *m {
            Mutation::Truncate(i) => b.truncate(i % (b.len() + 1)),
            Mutation::Flip(i, x) if !b.is_empty() => {
                let n = b.len();
                b[i % n] ^= x;
            }
            Mutation::Flip(..) => {}
            Mutation::DropLine(i) | Mutation::DuplicateLine(i) => {
                let mut lines: Vec<Vec<u8>> =
                    b.split(|c| *c == b'\n').map(<[u8]>::to_vec).collect();
                let k = i % lines.len();
                if matches!(m, Mutation::DropLine(_)) {
                    lines.remove(k);
                } else {
                    let l = lines[k].clone();
                    lines.insert(k, l);
                }
                b = lines.join(&b'\n');
            }
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn damaged_transcripts_never_panic_a_parser(
        pick in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..4),
        code in prop_oneof![Just(Some(0)), Just(Some(1)), Just(None)],
    ) {
        let all = fixtures();
        let (agent, bytes) = &all[pick % all.len()];
        let damaged = apply(bytes, &muts);
        let end = ProcessExit { code, stderr_tail: String::from_utf8_lossy(&damaged).into_owned() };
        let o = agent.parse_transcript(&damaged, &end);
        // An outcome is coherent: success never comes with an error.
        prop_assert!(!(o.success && o.error.is_some()), "{:?}", o);
    }
}

proptest! {
    // Each case runs the real binary: fewer of them.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn damaged_transcripts_always_give_one_json_result(
        pick in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..4),
        code in 0i32..3,
    ) {
        let all = fixtures();
        let (agent, bytes) = &all[pick % all.len()];
        let damaged = apply(bytes, &muts);
        let env = Env::new();
        fs::write(env.fake_dir.join("out"), &damaged).unwrap();
        env.fake(agent.binary(), &format!("cat > /dev/null\ncat \"$FAKE_DIR/out\"\nexit {code}"));
        let r = Run::from(
            env.baton()
                .args(["--agent", agent.name(), "--access", "full", "--raw", "x"])
                .output()
                .unwrap(),
        );
        let j = r.json();
        let status = j["status"].as_str().unwrap_or("");
        prop_assert!(["success", "failed"].contains(&status), "{}", r.stdout);
        prop_assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
        prop_assert!(r.stderr.is_empty() || !r.stderr.contains("panicked"), "{}", r.stderr);
    }
}
