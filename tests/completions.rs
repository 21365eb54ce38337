//! `baton completions SHELL` loads in bash, zsh and fish without a word on
//! stderr and completes agent names and the current repository's job ids;
//! `baton man` pages render with `man -l` without a warning.
//!
//! A missing shell or `man` skips its test on a developer machine (with a
//! note) but fails it in CI (`CI` set), where .ci/run installs them.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{BATON, Env, Run};

/// Two job ids of baton's form, the newer first.
const JOBS: [&str; 2] = ["0000000000002", "0000000000001"];

fn have(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "`{program}` is not installed; .ci/run installs it (apt-get)"
        );
        eprintln!("skipped: `{program}` is not installed (CI installs it)");
    }
    found
}

/// A repository with two jobs, `baton` on PATH, and the script of `shell`.
fn world(shell: &str) -> (Env, std::path::PathBuf) {
    let env = Env::new();
    env.git_init();
    // The repository's job store (in baton's state directory), as baton
    // names it when a job is not found.
    let missing = env.run(&["status", "0000000000000"]).json();
    let msg = missing["error"]["message"].as_str().unwrap().to_string();
    let store = Path::new(msg.rsplit_once(" in ").unwrap().1).to_path_buf();
    for id in JOBS {
        fs::create_dir_all(store.join(id)).unwrap();
    }
    std::os::unix::fs::symlink(BATON, env.bin.join("baton")).unwrap();
    let r = env.run(&["completions", shell]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let script = env.tmp.path().join(format!("baton.{shell}"));
    fs::write(&script, &r.stdout).unwrap();
    (env, script)
}

fn shell(env: &Env, program: &str, args: &[&str]) -> Run {
    Run::from(
        Command::new(program)
            .args(args)
            .current_dir(&env.work)
            .env("PATH", format!("{}:/usr/bin:/bin", env.bin.display()))
            .env("HOME", env.tmp.path())
            .env("BATON_STATE_DIR", &env.state)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}")),
    )
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

#[test]
fn the_hidden_job_lister_prints_this_repositorys_ids_newest_first() {
    let (env, _) = world("bash");
    let r = env.run(&["__complete-jobs"]);
    assert_eq!(r.code, 0);
    assert_eq!(lines(&r.stdout), JOBS);
}

#[test]
fn bash_loads_the_script_and_completes_job_ids_and_agents() {
    if !have("bash") {
        return;
    }
    let (env, script) = world("bash");
    let complete = |words: &str| {
        let prog = format!(
            "set -u; source '{}' || exit 9; complete -p baton; \
             COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _baton_job_ids baton \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let r = shell(&env, "bash", &["--noprofile", "--norc", "-c", &prog]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.is_empty(), "bash said: {}", r.stderr);
        r.stdout
    };
    let out = complete("baton wait ''");
    assert!(
        out.starts_with("complete -o bashdefault -o default -o nosort -F _baton_job_ids baton")
    );
    // Where the id goes: the ids, newest first, and nothing else.
    let offered = |words: &str| -> Vec<String> {
        complete(words)
            .lines()
            .skip(1)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(offered("baton wait ''"), JOBS);
    assert_eq!(offered("baton cancel 00000000000"), JOBS);
    assert_eq!(offered("baton wait --timeout 5s ''"), JOBS);
    assert_eq!(offered("baton logs --follow ''"), JOBS);
    // Flags only after `-`; after the id, nothing.
    let flags = offered("baton wait -");
    assert!(flags.contains(&"--timeout".to_string()), "{flags:?}");
    assert!(
        !flags.iter().any(|w| JOBS.contains(&w.as_str())),
        "{flags:?}"
    );
    assert_eq!(offered("baton wait 0000000000001 ''"), Vec::<String>::new());
    assert_eq!(
        offered("baton continue 0000000000001 ''"),
        Vec::<String>::new()
    );
    // The hidden commands are not offered.
    let top = offered("baton ''");
    assert!(top.contains(&"wait".to_string()), "{top:?}");
    assert!(!top.iter().any(|w| w.starts_with("__")), "{top:?}");
    assert_eq!(offered("baton __"), Vec::<String>::new());
    let got = complete("baton --agent ''");
    for agent in ["codex", "claude", "gemini-cli", "pi"] {
        assert!(lines(&got).contains(&agent), "{got}");
    }
}

/// What zsh offers for each line when Tab is pressed at its end: an
/// interactive zsh on a pseudo-terminal (`zsh/zpty`) with the script
/// loaded under compinit, `compadd` wrapped to write down every match.
fn zsh_offers(env: &Env, script: &Path, lines: &[&str]) -> Vec<Vec<String>> {
    let dir = env.tmp.path();
    let hits = dir.join("hits");
    let done = dir.join("done");
    fs::write(
        dir.join("inner.zsh"),
        format!(
            r#"autoload -Uz compinit && compinit -u -d "$HOME/zcompdump"
source '{}'
compadd() {{
  if (( ${{@[(I)-[OAD]*]}} )); then builtin compadd "$@"; return; fi
  local -a __h
  builtin compadd -A __h "$@"
  (( $#__h )) && print -rl -- $__h >> '{}'
  builtin compadd "$@"
}}
PROMPT='> '
"#,
            script.display(),
            hits.display()
        ),
    )
    .unwrap();
    let mut got = Vec::new();
    for line in lines {
        let _ = fs::remove_file(&hits);
        let _ = fs::remove_file(&done);
        let outer = format!(
            r#"zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z "source '{inner}'; print RE''ADY"
zpty -r z out '*READY*> ' || exit 7
zpty -w -n z '{line}'$'	'
zpty -w -n z $'\C-u'
zpty -w z "print > '{done}'"
for i in {{1..400}}; do [[ -e '{done}' ]] && break; sleep 0.05; done
zpty -d z
[[ -e '{done}' ]] || exit 8"#,
            inner = dir.join("inner.zsh").display(),
            done = done.display(),
        );
        let r = shell(env, "timeout", &["60", "zsh", "-f", "-c", &outer]);
        assert_eq!(r.code, 0, "{line}: {}{}", r.stdout, r.stderr);
        got.push(
            fs::read_to_string(&hits)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect(),
        );
    }
    got
}

#[test]
fn zsh_completes_job_ids_where_the_id_goes_and_hides_the_internal_commands() {
    if !have("zsh") {
        return;
    }
    let (env, script) = world("zsh");
    let got = zsh_offers(
        &env,
        &script,
        &[
            "baton wait ",
            "baton wait --timeout 5s ",
            "baton wait -",
            "baton wait 0000000000001 ",
            "baton ",
            "baton __",
            "baton run --agent ",
        ],
    );
    let none: Vec<String> = Vec::new();
    assert_eq!(got[0], JOBS, "baton wait <TAB>");
    assert_eq!(got[1], JOBS, "baton wait --timeout 5s <TAB>");
    // wait's own flags (not run's, as when zsh took `wait` for a task).
    let mut flags = got[2].clone();
    flags.sort();
    assert_eq!(flags, ["--help", "--json", "--text", "--timeout", "-h"]);
    assert_eq!(got[3], none, "after the id");
    assert!(got[4].contains(&"wait".to_string()), "{:?}", got[4]);
    assert!(
        !got[4]
            .iter()
            .any(|w| w.starts_with("__") || w.starts_with('-')),
        "{:?}",
        got[4]
    );
    assert_eq!(got[5], none, "baton __<TAB>");
    assert!(got[6].contains(&"gemini-cli".to_string()), "{:?}", got[6]);
}

#[test]
fn zsh_loads_the_script_under_compinit() {
    if !have("zsh") {
        return;
    }
    let (env, script) = world("zsh");
    let prog = format!(
        "autoload -Uz compinit && compinit -u -d \"$HOME/zcompdump\" && source '{}' && \
         print -r -- $_comps[baton] && whence -w _baton_job_ids _baton",
        script.display()
    );
    let r = shell(&env, "zsh", &["-f", "-c", &prog]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.is_empty(), "zsh said: {}", r.stderr);
    assert_eq!(
        lines(&r.stdout),
        [
            "_baton_job_ids",
            "_baton_job_ids: function",
            "_baton: function"
        ]
    );
    let text = fs::read_to_string(&script).unwrap();
    for cmd in [
        "wait", "status", "result", "cancel", "logs", "continue", "attach",
    ] {
        assert!(text.contains(&format!("({cmd}) takes=")), "{cmd}: {text}");
    }
}

#[test]
fn fish_loads_the_script_and_completes_job_ids_and_agents() {
    if !have("fish") {
        return;
    }
    let (env, script) = world("fish");
    let complete = |line: &str| {
        let prog = format!(
            "source '{}'; or exit 9; complete -C '{line}'",
            script.display()
        );
        let r = shell(&env, "fish", &["--no-config", "-c", &prog]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.is_empty(), "fish said: {}", r.stderr);
        r.stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    // Where the id goes: the ids, newest first, and nothing else.
    assert_eq!(complete("baton logs "), JOBS);
    assert_eq!(complete("baton wait --timeout 5s "), JOBS);
    let flags = complete("baton wait -");
    assert!(flags.iter().any(|w| w == "--timeout"), "{flags:?}");
    assert!(
        !flags.iter().any(|w| JOBS.contains(&w.as_str())),
        "{flags:?}"
    );
    assert_eq!(complete("baton wait 0000000000001 "), Vec::<String>::new());
    // The hidden commands are not offered.
    let top = complete("baton ");
    assert!(top.iter().any(|w| w == "wait"), "{top:?}");
    assert!(!top.iter().any(|w| w.starts_with("__")), "{top:?}");
    assert_eq!(complete("baton __"), Vec::<String>::new());
    for line in ["baton run --agent ", "baton ask --agent "] {
        let got = complete(line);
        for agent in ["codex", "claude", "gemini-cli", "zai"] {
            assert!(
                got.iter().any(|w| w == agent),
                "{line}: no {agent} in {got:?}"
            );
        }
    }
    let got = complete("baton setu");
    assert_eq!(got, ["setup"]);
}

#[test]
fn powershell_and_elvish_scripts_are_generated() {
    // Neither shell is in Debian's archive: checked for their registration.
    let env = Env::new();
    for (shell, want) in [
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "set edit:completion:arg-completer[baton]"),
    ] {
        let r = env.run(&["completions", shell]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains(want), "{shell}");
        assert!(r.stdout.contains("setup"), "{shell}: no setup subcommand");
        for offer in [
            "'__job-runner',",
            "cand __job-runner ",
            "'__complete-jobs',",
        ] {
            assert!(!r.stdout.contains(offer), "{shell} offers {offer}");
        }
    }
    let r = env.run(&["completions", "tcsh"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "usage");
}

#[test]
fn every_man_page_renders_without_a_warning() {
    if !have("man") {
        return;
    }
    let env = Env::new();
    let dir = env.tmp.path().join("man1");
    let r = env.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let written: Vec<String> = r.json()["written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(written.len(), names.len());
    for want in [
        "baton.1",
        "baton-setup.1",
        "baton-wait.1",
        "baton-worktree-remove.1",
    ] {
        assert!(names.iter().any(|n| n == want), "no {want} in {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("__")), "{names:?}");
    for page in &written {
        let r = render(&env, Path::new(page));
        assert_eq!(r.code, 0, "{page}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{page}: {}", r.stderr);
        let name = Path::new(page).file_stem().unwrap().to_str().unwrap();
        assert!(r.stdout.contains(&format!("{name}(1)")), "{page}");
    }
    // Without --dir: baton.1 on stdout, the same page.
    let r = env.run(&["man"]);
    assert_eq!(r.stdout, fs::read_to_string(dir.join("baton.1")).unwrap());
    let setup = render(&env, &dir.join("baton-setup.1")).stdout;
    assert!(setup.contains("--uninstall"), "{setup}");
}

/// `man -l PAGE` with groff's warnings on.
fn render(env: &Env, page: &Path) -> Run {
    Run::from(
        Command::new("man")
            .args(["--warnings", "-l"])
            .arg(page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env("PATH", "/usr/bin:/bin")
            .current_dir(&env.work)
            .output()
            .expect("run man"),
    )
}
