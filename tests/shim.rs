//! The plugin shim `plugin/bin/baton` (POSIX sh): platform mapping through a
//! fake `uname`, the overrides, exit 3 with its JSON, the self-exec guard,
//! paths with spaces and symlinks. Each test copies the real shim into a
//! plugin tree under a directory with spaces, beside fake per-target
//! "binaries" that print their target and argv.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::time::Duration;

use crate::support::{Run, wait_for};

const TARGETS: [&str; 4] = ["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"];

fn real_shim() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/bin/baton")
}

fn write_exe(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake binary: prints `ran <name>` and then each argument on its own line.
fn fake_binary(name: &str) -> String {
    format!("#!/bin/sh\nprintf 'ran {name}\\n'\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n")
}

struct Plugin {
    _tmp: tempfile::TempDir,
    /// `<tmp>/my plugins/baton plugin`: the installed plugin's root.
    root: PathBuf,
    /// Holds the fake `uname`, first on PATH.
    path_dir: PathBuf,
}

impl Plugin {
    fn with(targets: &[&str]) -> Plugin {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("my plugins/baton plugin");
        let shim = root.join("bin/baton");
        write_exe(&shim, &fs::read_to_string(real_shim()).unwrap());
        for t in targets {
            write_exe(&root.join("bin").join(t).join("baton"), &fake_binary(t));
        }
        let path_dir = tmp.path().join("fake path");
        write_exe(
            &path_dir.join("uname"),
            "#!/bin/sh\ncase ${1-} in\n-m) printf '%s\\n' \"$FAKE_UNAME_M\" ;;\n*) printf '%s\\n' \"$FAKE_UNAME_S\" ;;\nesac\n",
        );
        Plugin {
            _tmp: tmp,
            root,
            path_dir,
        }
    }

    fn new() -> Plugin {
        Plugin::with(&TARGETS)
    }

    fn shim(&self) -> PathBuf {
        self.root.join("bin/baton")
    }

    fn tmp(&self) -> &Path {
        self._tmp.path()
    }

    /// Run `program` (the shim or a link to it) as if on `os`/`arch`.
    fn cmd_at(&self, program: &Path, os: &str, arch: &str) -> Command {
        let mut c = Command::new(program);
        c.env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", self.path_dir.display()),
        )
        .env("FAKE_UNAME_S", os)
        .env("FAKE_UNAME_M", arch)
        .env_remove("BATON_BIN")
        .env_remove("BATON_TARGET_OVERRIDE")
        .current_dir(self.tmp())
        .stdin(Stdio::null());
        c
    }

    fn cmd(&self, os: &str, arch: &str) -> Command {
        self.cmd_at(&self.shim(), os, arch)
    }

    fn run(&self, os: &str, arch: &str, args: &[&str]) -> Run {
        Run::from(self.cmd(os, arch).args(args).output().unwrap())
    }
}

/// Run `cmd` to its end, failing (and killing it) if it takes longer than `limit`.
fn output_within(mut cmd: Command, limit: Duration) -> Run {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut status = None;
    let done = wait_for(limit, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if !done {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the shim did not exit within {limit:?}");
    }
    Run::from(child.wait_with_output().unwrap())
}

/// The lines a fake binary printed: `ran <target>`, then its arguments.
fn ran(r: &Run) -> Vec<&str> {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    r.stdout.lines().collect()
}

#[test]
fn shim_maps_every_uname_pair_to_its_target() {
    let p = Plugin::new();
    for (os, arch, target) in [
        ("Linux", "x86_64", "linux-amd64"),
        ("Linux", "amd64", "linux-amd64"),
        ("Linux", "aarch64", "linux-arm64"),
        ("Linux", "arm64", "linux-arm64"),
        ("Darwin", "x86_64", "darwin-amd64"),
        ("Darwin", "amd64", "darwin-amd64"),
        ("Darwin", "arm64", "darwin-arm64"),
        ("Darwin", "aarch64", "darwin-arm64"),
    ] {
        let r = p.run(os, arch, &["--version"]);
        assert_eq!(
            ran(&r),
            [format!("ran {target}").as_str(), "--version"],
            "{os} {arch}"
        );
    }
}

#[test]
fn shim_passes_arguments_and_exit_code_through_unchanged() {
    let p = Plugin::new();
    let r = p.run(
        "Linux",
        "x86_64",
        &["run", "two words", "", "--", "--text", "$HOME", "a\"b"],
    );
    assert_eq!(
        ran(&r),
        [
            "ran linux-amd64",
            "run",
            "two words",
            "",
            "--",
            "--text",
            "$HOME",
            "a\"b"
        ]
    );
    write_exe(
        &p.root.join("bin/linux-amd64/baton"),
        "#!/bin/sh\nexit 124\n",
    );
    assert_eq!(p.run("Linux", "x86_64", &[]).code, 124);
}

#[test]
fn shim_runs_under_every_available_posix_shell() {
    // macOS runs it with bash 3.2 as sh; Debian with dash. Try what exists.
    let p = Plugin::new();
    let mut tried = 0;
    for shell in ["/bin/sh", "/bin/dash", "/bin/bash", "/usr/bin/busybox"] {
        if !Path::new(shell).exists() {
            continue;
        }
        let mut c = p.cmd_at(Path::new(shell), "Darwin", "arm64");
        if shell.ends_with("busybox") {
            c.arg("sh");
        }
        let r = Run::from(c.arg(p.shim()).arg("x y").output().unwrap());
        assert_eq!(ran(&r), ["ran darwin-arm64", "x y"], "{shell}");
        tried += 1;
    }
    assert!(tried >= 1);
}

#[test]
fn target_override_wins_over_uname() {
    let p = Plugin::new();
    let r = Run::from(
        p.cmd("Darwin", "arm64")
            .env("BATON_TARGET_OVERRIDE", "linux-arm64")
            .arg("hi")
            .output()
            .unwrap(),
    );
    assert_eq!(ran(&r), ["ran linux-arm64", "hi"]);
}

#[test]
fn target_override_cannot_name_a_path() {
    let p = Plugin::new();
    // A binary planted where `../..`-style overrides would lead.
    write_exe(&p.root.join("bin/evil/baton"), &fake_binary("evil"));
    for bad in ["../bin/evil", "linux-amd64/../evil", "Linux-AMD64", "-x"] {
        let r = Run::from(
            p.cmd("Linux", "x86_64")
                .env("BATON_TARGET_OVERRIDE", bad)
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 2, "{bad}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "usage", "{bad}");
        assert!(!r.stdout.contains("ran "), "{bad}");
    }
}

#[test]
fn unsupported_platform_exits_3_with_a_json_error_in_baton_format() {
    let p = Plugin::new();
    let r = p.run("Linux", "riscv64", &["run", "task"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["status"], "error");
    assert_eq!(j["exit_code"], 3);
    assert_eq!(j["target"], "linux-riscv64");
    assert_eq!(j["error"]["kind"], "unsupported_platform");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.contains("linux-riscv64"), "{msg}");
    assert!(msg.contains("uname: Linux riscv64"), "{msg}");
    assert!(
        msg.contains("linux-amd64, linux-arm64, darwin-amd64, darwin-arm64"),
        "{msg}"
    );
    let hint = j["error"]["hint"].as_str().unwrap();
    assert!(hint.contains("cargo install --locked"), "{hint}");
    assert!(hint.contains("/releases"), "{hint}");
    assert!(hint.contains("SHA-256"), "{hint}");
    assert!(j["summary"].as_str().unwrap().starts_with("baton: "));
    // The same error shape baton itself prints (result::ErrorReport).
    let report: baton::result::ErrorReport = serde_json::from_value(j.clone()).unwrap();
    assert_eq!(report.status, baton::result::Status::Error);
    assert_eq!(
        report.exit_code,
        Some(baton::error::exit::UNSUPPORTED_PLATFORM)
    );
    assert!(r.stderr.contains("baton: error: no prebuilt baton binary"));

    let r = p.run("FreeBSD", "amd64", &[]);
    assert_eq!(r.code, 3);
    assert_eq!(r.json()["target"], "freebsd-amd64");
}

#[test]
fn unsupported_platform_with_text_prints_only_a_message() {
    let p = Plugin::new();
    let r = p.run("SunOS", "sparc64", &["--text", "task"]);
    assert_eq!(r.code, 3);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .contains("baton: error: no prebuilt baton binary for sunos-sparc64"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("baton: hint: install from source"));
    // `--text` after `--` is task text, not the output mode.
    let r = p.run("SunOS", "sparc64", &["--", "--text"]);
    assert_eq!(r.code, 3);
    assert_eq!(r.json()["error"]["kind"], "unsupported_platform");
}

#[test]
fn missing_binary_for_a_known_platform_is_exit_3_listing_what_exists() {
    let p = Plugin::with(&["linux-amd64", "linux-arm64"]);
    let r = p.run("Darwin", "arm64", &[]);
    assert_eq!(r.code, 3);
    let j = r.json();
    assert_eq!(j["target"], "darwin-arm64");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(
        msg.ends_with("this plugin has: linux-amd64, linux-arm64"),
        "{msg}"
    );
}

#[test]
fn binary_without_exec_bit_is_exit_3_saying_so() {
    let p = Plugin::new();
    let bin = p.root.join("bin/linux-arm64/baton");
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o644)).unwrap();
    let r = p.run("Linux", "aarch64", &[]);
    assert_eq!(r.code, 3);
    let j = r.json();
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is not executable")
    );
    assert!(j["error"]["hint"].as_str().unwrap().contains("chmod +x"));
}

#[test]
fn odd_uname_output_still_gives_valid_json() {
    let p = Plugin::new();
    let r = p.run("Linux", "we\"ird\\arch\ttab", &[]);
    assert_eq!(r.code, 3);
    let j = r.json();
    let target = j["target"].as_str().unwrap();
    assert!(
        target
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'),
        "{target}"
    );
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("we\"ird\\arch")
    );
}

#[test]
fn baton_bin_comes_first() {
    let p = Plugin::new();
    let mine = p.tmp().join("my baton dir/baton");
    write_exe(&mine, &fake_binary("mine"));
    let r = Run::from(
        p.cmd("Linux", "riscv64") // even where no plugin binary exists
            .env("BATON_BIN", &mine)
            .args(["a b", "c"])
            .output()
            .unwrap(),
    );
    assert_eq!(ran(&r), ["ran mine", "a b", "c"]);
}

#[test]
fn baton_bin_that_is_not_executable_falls_back_with_a_warning() {
    let p = Plugin::new();
    let not_exe = p.tmp().join("plain file");
    fs::write(&not_exe, "x").unwrap();
    for value in [not_exe.as_path(), Path::new("/nonexistent/baton"), p.tmp()] {
        let r = Run::from(
            p.cmd("Linux", "x86_64")
                .env("BATON_BIN", value)
                .output()
                .unwrap(),
        );
        assert_eq!(ran(&r), ["ran linux-amd64"], "{}", value.display());
        assert!(
            r.stderr.contains("is not an executable file"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn baton_bin_pointing_at_a_shim_is_refused_instead_of_looping() {
    let p = Plugin::new();
    let other = Plugin::new();
    let link = p.tmp().join("link to shim");
    symlink(other.shim(), &link).unwrap();
    for target in [p.shim(), other.shim(), link] {
        let mut cmd = p.cmd("Linux", "x86_64");
        cmd.env("BATON_BIN", &target);
        // Without the guard this would exec itself forever: bound it.
        let r = output_within(cmd, Duration::from_secs(20));
        assert_eq!(r.code, 2, "{}: {}", target.display(), r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "usage");
        assert_eq!(j["exit_code"], 2);
        assert!(
            j["error"]["message"]
                .as_str()
                .unwrap()
                .contains("would loop"),
            "{j}"
        );
        assert!(!r.stdout.contains("ran "));
    }
    // With --text: the message only, on stderr.
    let r = Run::from(
        p.cmd("Linux", "x86_64")
            .env("BATON_BIN", p.shim())
            .arg("--text")
            .output()
            .unwrap(),
    );
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert!(r.stderr.contains("is the baton plugin shim"));
}

#[test]
fn shim_works_through_symlinks_from_elsewhere() {
    let p = Plugin::new();
    // An absolute link in a PATH-like dir, and a relative link to that link.
    let links = p.tmp().join("local bin");
    fs::create_dir_all(&links).unwrap();
    symlink(p.shim(), links.join("baton")).unwrap();
    let deeper = p.tmp().join("other place/deeper");
    fs::create_dir_all(&deeper).unwrap();
    symlink("../../local bin/baton", deeper.join("b")).unwrap();
    for program in [links.join("baton"), deeper.join("b")] {
        let r = Run::from(
            p.cmd_at(&program, "Linux", "aarch64")
                .arg("--help")
                .output()
                .unwrap(),
        );
        assert_eq!(
            ran(&r),
            ["ran linux-arm64", "--help"],
            "{}",
            program.display()
        );
    }
    // Found through PATH by its bare name, from an unrelated working directory.
    let r = Run::from(
        Command::new("sh")
            .args(["-c", "baton \"$@\"", "sh", "x"])
            .env(
                "PATH",
                format!("{}:{}:/usr/bin:/bin", p.path_dir.display(), links.display()),
            )
            .env("FAKE_UNAME_S", "Darwin")
            .env("FAKE_UNAME_M", "x86_64")
            .env_remove("BATON_BIN")
            .env_remove("BATON_TARGET_OVERRIDE")
            .current_dir(&deeper)
            .output()
            .unwrap(),
    );
    assert_eq!(ran(&r), ["ran darwin-amd64", "x"]);
}

#[test]
fn committed_shim_is_executable_and_strict() {
    let shim = real_shim();
    let mode = fs::metadata(&shim).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "plugin/bin/baton must be executable");
    let text = fs::read_to_string(&shim).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("#!/bin/sh"));
    assert!(lines.next().unwrap().contains("baton-plugin-shim"));
    assert!(text.lines().any(|l| l == "set -eu"));
}

#[test]
fn committed_shim_starts_the_committed_binary_on_this_machine() {
    // Only where a committed binary matches the host (linux x86_64 in CI).
    let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
    let target = match (os, arch) {
        ("linux", "x86_64") => "linux-amd64",
        ("linux", "aarch64") => "linux-arm64",
        ("macos", "x86_64") => "darwin-amd64",
        ("macos", "aarch64") => "darwin-arm64",
        _ => return,
    };
    let bin = real_shim().with_file_name(target).join("baton");
    if !bin.exists() {
        eprintln!("no committed binary at {}; skipped", bin.display());
        return;
    }
    let out = Command::new(real_shim())
        .arg("--version")
        .env_remove("BATON_BIN")
        .env_remove("BATON_TARGET_OVERRIDE")
        .output()
        .unwrap();
    let r = Run::from(out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("baton "), "{}", r.stdout);
    assert!(r.stdout.contains(", commit "), "{}", r.stdout);
}

#[test]
fn baton_bin_as_a_bare_name_means_the_file_in_the_working_directory() {
    let p = Plugin::new();
    // A `baton` on PATH that must not be picked: exec of a bare name searches PATH.
    write_exe(&p.path_dir.join("baton"), &fake_binary("from-path"));
    write_exe(&p.tmp().join("baton"), &fake_binary("from-cwd"));
    let r = Run::from(
        p.cmd("Linux", "x86_64")
            .env("BATON_BIN", "baton")
            .output()
            .unwrap(),
    );
    assert_eq!(ran(&r), ["ran from-cwd"]);
}

#[test]
fn cdpath_does_not_confuse_the_shim() {
    // Started by a relative path, with CDPATH naming another plugin tree
    // (without binaries) that also has a `bin/`: `cd bin` must not go there.
    let p = Plugin::new();
    let other = Plugin::with(&[]);
    let r = Run::from(
        p.cmd_at(Path::new("/bin/sh"), "Linux", "x86_64")
            .args(["-c", "bin/baton ok"])
            .env("CDPATH", &other.root)
            .current_dir(&p.root)
            .output()
            .unwrap(),
    );
    assert_eq!(ran(&r), ["ran linux-amd64", "ok"]);
}
