//! `baton run` against fake CLIs.

use crate::support::Env;

#[test]
fn codex_success_reports_the_transcript() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["--agent", "codex", "say", "hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["message"], "Hi from the mock model!");
    assert_eq!(j["session"], "01a22af9-9e2e-70e3-ad11-07b983a9c1d0");
    assert_eq!(j["usage"]["input_tokens"], 120);
    // The prompt goes on stdin, never in argv.
    assert!(env.stdin("codex").contains("say hi"));
    assert!(!env.argv("codex").iter().any(|a| a.contains("say hi")));
}
