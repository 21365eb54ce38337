use super::*;

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    let tmp = d.path().join("tmp");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    (d, ws, tmp)
}

fn env() -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), "/usr/bin".into()),
        ("SSH_AUTH_SOCK".into(), "/tmp/agent.1".into()),
        ("TMPDIR".into(), "/tmp".into()),
        ("OPENAI_API_KEY".into(), "sk-x".into()),
    ]
}

fn landlock() -> Sandbox {
    Sandbox::with_backend(Backend::Landlock { abi: 7 }, "/opt/baton/bin/baton".into())
}

#[test]
fn full_access_and_off_wrap_nothing_and_say_so() {
    let (_d, ws, tmp) = dirs();
    let p = Policy::new(Mode::Full, tmp.clone(), None, &[]).with_workspace(ws.clone());
    let w = landlock().wrap(&p, vec!["pi".into()], env()).unwrap();
    assert_eq!(w.argv, ["pi"]);
    assert_eq!(w.env, env());
    assert_eq!(
        w.report,
        SandboxReport::new(By::None, NetworkKind::All, vec![])
    );
    let found = Availability {
        bwrap: Err("no".into()),
        landlock_abi: 0,
        userns_blocked: None,
        outer: vec![],
        seatbelt: false,
    };
    let off = Sandbox::choose_from(Want::Off, &found, "/b".into()).unwrap();
    let p = Policy::new(Mode::Workspace, tmp, None, &[]).with_workspace(ws);
    assert_eq!(off.wrap(&p, vec!["pi".into()], env()).unwrap().argv, ["pi"]);
    // auto without a backend: unconfined, and the report says why not.
    let auto = Sandbox::choose_from(Want::Auto, &found, "/b".into()).unwrap();
    let w = auto.wrap(&p, vec!["pi".into()], env()).unwrap();
    assert_eq!(w.report.degraded, vec![Degraded::Unavailable]);
    // require fails closed.
    let e = Sandbox::choose_from(Want::Require, &found, "/b".into()).unwrap_err();
    assert!(e.reason.contains("no Landlock"), "{e}");
}

#[test]
fn landlock_runs_the_helper_and_reports_what_it_lacks() {
    let (_d, ws, tmp) = dirs();
    let p = Policy::new(Mode::Workspace, tmp.clone(), None, &env()).with_workspace(ws);
    let w = landlock()
        .wrap(&p, vec!["pi".into(), "-p".into()], env())
        .unwrap();
    assert_eq!(w.argv[0], "/opt/baton/bin/baton");
    assert_eq!(w.argv[1], HELPER);
    let args: HelperArgs = serde_json::from_str(w.argv[2].to_str().unwrap()).unwrap();
    assert_eq!(args.stage, Stage::Landlock);
    assert_eq!(args.policy.tmp, std::fs::canonicalize(&tmp).unwrap());
    assert_eq!(&w.argv[3..], ["--", "pi", "-p"]);
    assert_eq!(w.report.by, By::BatonLandlock);
    for d in [Degraded::NoPidNamespace, Degraded::GitMetadataWritable] {
        assert!(w.report.degraded.contains(&d), "{d:?}");
    }
}

#[test]
fn the_environment_loses_agent_sockets_and_gains_tmp_marker_and_proxy() {
    let (_d, ws, tmp) = dirs();
    let mut p = Policy::new(Mode::ReadOnly, tmp.clone(), None, &env()).with_workspace(ws);
    p.network = Network::Provider { port: 41234 };
    let w = landlock().wrap(&p, vec!["pi".into()], env()).unwrap();
    let get = |k: &str| {
        w.env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    };
    assert_eq!(get("SSH_AUTH_SOCK"), None);
    assert_eq!(get("OPENAI_API_KEY").as_deref(), Some("sk-x"));
    let real_tmp = std::fs::canonicalize(&tmp).unwrap();
    assert_eq!(get("TMPDIR").as_deref(), real_tmp.to_str());
    assert_eq!(w.env.iter().filter(|(n, _)| n == "TMPDIR").count(), 1);
    assert_eq!(get(MARKER).as_deref(), Some("baton-landlock"));
    assert_eq!(
        get("HTTPS_PROXY").as_deref(),
        Some("http://127.0.0.1:41234")
    );
    assert_eq!(get("NODE_USE_ENV_PROXY").as_deref(), Some("1"));
    assert_eq!(w.report.network, NetworkKind::Provider);
    assert!(w.report.degraded.contains(&Degraded::ProviderPortAnyHost));
}

#[test]
fn a_helper_or_bwrap_inside_a_writable_root_is_refused() {
    let (_d, ws, tmp) = dirs();
    let p = Policy::new(Mode::Workspace, tmp, None, &[]).with_workspace(ws.clone());
    let inside = Sandbox::with_backend(Backend::Landlock { abi: 7 }, ws.join("baton"));
    let e = inside.wrap(&p, vec!["pi".into()], vec![]).unwrap_err();
    assert!(e.reason.contains("could replace it"), "{e}");
    let bwrap = Sandbox::with_backend(
        Backend::Bwrap {
            path: ws.join(".git/bwrap"),
            disable_userns: true,
            landlock_abi: 7,
        },
        "/opt/baton".into(),
    );
    assert!(bwrap.wrap(&p, vec!["pi".into()], vec![]).is_err());
    // In read-only mode the checkout is not writable: no refusal.
    let ro = Policy {
        mode: Mode::ReadOnly,
        ..p
    };
    assert!(inside.wrap(&ro, vec!["pi".into()], vec![]).is_ok());
}

#[test]
fn a_missing_writable_root_is_an_error_not_a_silent_skip() {
    let (d, _ws, tmp) = dirs();
    let p = Policy::new(Mode::Workspace, tmp, None, &[]).with_workspace(d.path().join("gone"));
    let e = landlock().wrap(&p, vec!["pi".into()], vec![]).unwrap_err();
    assert!(e.reason.contains("gone"), "{e}");
}

#[test]
fn the_helper_arguments_round_trip_and_refuse_unknown_fields() {
    let (_d, ws, tmp) = dirs();
    let p = Policy::new(Mode::Workspace, tmp, None, &[]).with_workspace(ws);
    let json = exec_stage(
        Stage::Wrap {
            backend: Some(WrapWith::Landlock),
            print: false,
        },
        &p,
    );
    let back: HelperArgs = serde_json::from_str(&json).unwrap();
    assert_eq!(back.policy, p);
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["policy"]["surprise"] = true.into();
    assert!(serde_json::from_value::<HelperArgs>(v).is_err());
    let minimal = r#"{"stage":"bwrap","policy":{"mode":"read-only","tmp":"/tmp"}}"#;
    let m: HelperArgs = serde_json::from_str(minimal).unwrap();
    assert_eq!(m.policy.network, Network::All);
    assert_eq!(m.policy.limits, Limits::default());
}
