//! `[notify]` as the channels read it, and which channels one event goes to
//! (`plan`): the rules of `--notify`, `--no-notify` and `on`.

use std::path::Path;
use std::time::Duration;

use super::{Choice, Trigger};
use crate::config::{Config, NOTIFY_STALL_AFTER, Val};
use crate::error::Result;

/// One way of telling the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Channel {
    /// The desktop's notification service.
    Desktop,
    /// The terminal that started the work (BEL, OSC 9, OSC 777).
    Terminal,
    /// A program of the user's, the event as JSON on its stdin.
    Command(Vec<String>),
    /// An HTTP POST of the event; the bearer token read from `token_env`.
    Url {
        url: String,
        token_env: Option<String>,
    },
}

impl Channel {
    pub fn name(&self) -> &'static str {
        match self {
            Channel::Desktop => "desktop",
            Channel::Terminal => "terminal",
            Channel::Command(_) => "command",
            Channel::Url { .. } => "url",
        }
    }
}

/// `[notify]`, checked (config/value.rs checked every value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub desktop: bool,
    pub terminal: bool,
    pub command: Option<Vec<String>>,
    pub url: Option<String>,
    pub url_token_env: Option<String>,
    /// The triggers announced under `Choice::Config`.
    pub on: Vec<Trigger>,
    /// How long a silent peer is `stalled`.
    pub stall_after: Duration,
}

impl Settings {
    pub fn from_config(c: &Config) -> Settings {
        let on = match c.effective("notify.on").map(|s| s.value) {
            Some(Val::List(l)) => l.iter().filter_map(|t| Trigger::parse(t)).collect(),
            _ => Vec::new(),
        };
        let stall_after = c
            .string("notify.stall_after")
            .and_then(|s| crate::duration::parse(&s).ok())
            .unwrap_or_else(default_stall_after);
        Settings {
            desktop: c.flag("notify.desktop").unwrap_or(false),
            terminal: c.flag("notify.terminal").unwrap_or(false),
            command: c.list("notify.command"),
            url: c.string("notify.url"),
            url_token_env: c.string("notify.url_token_env"),
            on,
            stall_after,
        }
    }

    /// The settings of this process's configuration when a command
    /// installed one, else read now for the work's repository (the job
    /// runner and the drivers read no configuration of their own).
    pub fn load(repo: Option<&Path>) -> Result<Settings> {
        if let Some(c) = crate::config::installed() {
            return Ok(Settings::from_config(c));
        }
        let dir = repo.filter(|r| r.is_dir());
        Ok(Settings::from_config(&Config::load(dir)?))
    }

    /// Every channel `[notify]` turns on, in a fixed order.
    pub fn channels(&self) -> Vec<Channel> {
        let mut v = Vec::new();
        if self.desktop {
            v.push(Channel::Desktop);
        }
        if self.terminal {
            v.push(Channel::Terminal);
        }
        if let Some(argv) = &self.command {
            v.push(Channel::Command(argv.clone()));
        }
        if let Some(url) = &self.url {
            v.push(Channel::Url {
                url: url.clone(),
                token_env: self.url_token_env.clone(),
            });
        }
        v
    }

    /// The channels one event goes to: none under `--no-notify`; under
    /// `--notify` the configured ones, or the desktop and the terminal when
    /// none is; else the configured ones if `on` names the trigger (a
    /// `notify test` always goes).
    pub fn plan(&self, trigger: Trigger, choice: Choice) -> Vec<Channel> {
        match choice {
            Choice::Off => Vec::new(),
            Choice::On => {
                let c = self.channels();
                if c.is_empty() {
                    vec![Channel::Desktop, Channel::Terminal]
                } else {
                    c
                }
            }
            Choice::Config if trigger == Trigger::Test || self.on.contains(&trigger) => {
                self.channels()
            }
            Choice::Config => Vec::new(),
        }
    }
}

/// `[notify] stall_after` when nothing sets it (`config::NOTIFY_STALL_AFTER`).
pub fn default_stall_after() -> Duration {
    crate::duration::parse(NOTIFY_STALL_AFTER).unwrap_or(Duration::from_secs(600))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Settings {
        Settings::from_config(&Config::default())
    }

    #[test]
    fn defaults_announce_nothing_until_a_channel_is_configured() {
        let s = none();
        assert_eq!(s.on.len(), 4);
        assert_eq!(s.stall_after, Duration::from_secs(600));
        assert!(s.channels().is_empty());
        for t in [Trigger::Ended, Trigger::Stalled, Trigger::Test] {
            assert!(s.plan(t, Choice::Config).is_empty());
        }
        // --notify with nothing configured: the desktop and the terminal.
        assert_eq!(
            s.plan(Trigger::Ended, Choice::On),
            vec![Channel::Desktop, Channel::Terminal]
        );
    }

    #[test]
    fn the_choice_and_on_decide_the_channels() {
        let s = Settings {
            command: Some(vec!["notify-me".into()]),
            url: Some("https://ntfy.sh/t".into()),
            on: vec![Trigger::Ended],
            ..none()
        };
        let both = s.channels();
        assert_eq!(both.len(), 2);
        assert_eq!(s.plan(Trigger::Ended, Choice::Config), both);
        assert!(s.plan(Trigger::Stalled, Choice::Config).is_empty());
        assert_eq!(s.plan(Trigger::Test, Choice::Config), both);
        // --notify: even a trigger `on` leaves out; never more channels.
        assert_eq!(s.plan(Trigger::Stalled, Choice::On), both);
        for t in [Trigger::Ended, Trigger::Test] {
            assert!(s.plan(t, Choice::Off).is_empty());
        }
    }
}
