//! `baton notify test`: one `test` event to every configured channel
//! (whatever `on` says), so a user can check the setup. Exit 0 when every
//! channel delivered, 1 when one failed (the JSON says which and why);
//! with no channel configured, a config error (exit 2) that says how to
//! configure one.

use serde::Serialize;

use super::{Delivery, Event, Origin, Settings, Trigger, Work, deliver};
use crate::config::Config;
use crate::error::{Error, Result, exit};
use crate::output::render::Render;

/// What `notify test` prints (`baton schema notify-test`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TestReport {
    pub schema_version: u32,
    /// One entry per configured channel, in the order desktop, terminal,
    /// command, url.
    pub channels: Vec<Delivery>,
}

impl Render for TestReport {
    fn exit_code(&self) -> i32 {
        if self.channels.iter().all(|c| c.ok) {
            exit::SUCCESS
        } else {
            exit::FAILED
        }
    }

    fn text(&self) -> String {
        let mut t = String::new();
        for c in &self.channels {
            match &c.error {
                None if c.ok => t.push_str(&format!("{:<9} sent\n", c.channel)),
                e => t.push_str(&format!(
                    "{:<9} FAILED: {}\n",
                    c.channel,
                    e.as_deref().unwrap_or("")
                )),
            }
        }
        t
    }
}

/// The event `notify test` sends.
pub fn event(repo: Option<std::path::PathBuf>) -> Event {
    let e = Event::new(Trigger::Test, Work::Run, "test")
        .id("notify-test")
        .summary("If you can read this, baton's notifications reach you here.");
    match repo {
        Some(r) => e.repo(r),
        None => e,
    }
}

/// Send the test event to every channel `config` configures.
pub fn run(config: &Config, origin: &Origin) -> Result<TestReport> {
    let settings = Settings::from_config(config);
    let channels = settings.channels();
    if channels.is_empty() {
        let file = config
            .files
            .iter()
            .find(|f| f.scope == "user")
            .map(|f| f.path.display().to_string())
            .unwrap_or_else(|| "your user file (`baton config path`)".into());
        return Err(Error::Config {
            where_: file,
            key: "notify".into(),
            message: "no notification channel is configured".into(),
            hint: "add a [notify] table to your user file, e.g. `desktop = true`, \
                   `terminal = true`, `command = [\"notify-me\"]` or \
                   `url = \"https://ntfy.sh/your-topic\"` (docs/notify.md)"
                .into(),
        });
    }
    let repo = crate::config::project_root(None).ok();
    let channels = deliver(&channels, &event(repo), origin, super::BOUND);
    Ok(TestReport {
        schema_version: crate::result::SCHEMA_VERSION,
        channels,
    })
}
