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
    let got = lines(&out);
    for id in JOBS {
        assert!(got.contains(&id), "no {id} in {got:?}");
    }
    assert!(!got.iter().any(|w| w.starts_with('<')), "{got:?}");
    let got = complete("baton cancel 00000000000");
    assert_eq!(&got.lines().skip(1).collect::<Vec<_>>(), &JOBS);
    let got = complete("baton --agent ''");
    for agent in ["codex", "claude", "gemini-cli", "pi"] {
        assert!(lines(&got).contains(&agent), "{got}");
    }
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
    assert!(
        text.contains("(wait|status|result|cancel|logs|continue|attach)"),
        "{text}"
    );
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
    let got = complete("baton logs ");
    for id in JOBS {
        assert!(got.iter().any(|w| w == id), "no {id} in {got:?}");
    }
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
