//! `baton doctor` against the real, pinned CLIs: the version comes from the
//! npm package (no CLI started), it is the tested one, the credentials the
//! suite configured are found, and `--probe` makes a real round trip through
//! `baton run --read-only` to the mock.

use std::fs;

use crate::support::{Agent, Peer};

fn doctor_sees_the_pinned_cli_and_probes_it(agent: Agent) {
    let peer = Peer::new(agent, "doctor");
    if agent == Agent::Pi {
        // The probe runs `baton run --agent pi`: the mock provider comes from
        // the user config file, in the peer's HOME.
        let dir = peer.home.join(".config/baton");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("config.toml"),
            "[agents.pi]\nprovider = \"mock\"\nmodel = \"mock-model\"\n",
        )
        .unwrap();
    }
    let o = peer.baton_exact(&["doctor", "--agent", agent.name(), "--probe"]);
    assert_eq!(o.code, 0, "{}", o.dump());
    let j = &o.json;
    assert_eq!(j["status"], "success", "{}", o.dump());
    let row = &j["agents"][0];
    assert_eq!(row["name"], agent.name());
    assert_eq!(row["version_source"], "package.json", "{}", o.dump());
    let check = |id: &str| {
        j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == format!("agent.{}.{id}", agent.name()))
            .cloned()
            .unwrap_or_else(|| panic!("no {id} check: {}", o.dump()))
    };
    let v = check("version");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("the version baton is tested with"),
        "{v}"
    );
    let probe = check("probe");
    assert_eq!(probe["ok"], true, "{}", o.dump());
    assert!(
        probe["message"].as_str().unwrap().contains("round trip"),
        "{probe}"
    );
}

per_agent!([codex => Codex, claude => Claude, zai => Zai, pi => Pi, gemini_cli => GeminiCli]
    doctor_sees_the_pinned_cli_and_probes_it);
