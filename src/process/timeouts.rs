//! The waits the test suite shortens, in one place. Each is a default and
//! the internal environment variable (milliseconds) that overrides it:
//! undocumented for users, they exist so a test of a CLI that hangs need
//! not wait the real limit (docs/testing.md lists them).

use std::time::Duration;

/// A wait with its default and its override.
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    pub var: &'static str,
    pub default: Duration,
}

impl Knob {
    /// The default, unless the variable holds a number of milliseconds.
    pub fn get(&self) -> Duration {
        std::env::var(self.var)
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(self.default, Duration::from_millis)
    }

    /// `get`, never longer than the default (a test may only shorten it).
    pub fn shortened(&self) -> Duration {
        self.get().min(self.default)
    }
}

/// How long a peer may linger after its own "turn finished" event.
pub const AFTER_FINAL: Knob = Knob {
    var: "BATON_FINAL_GRACE_MS",
    default: Duration::from_secs(10),
};

/// How long an ACP agent may take to answer `initialize` (node agents take
/// 5-25 s on a loaded 2-core machine: measured).
pub const ACP_INIT: Knob = Knob {
    var: "BATON_ACP_INIT_TIMEOUT_MS",
    default: Duration::from_secs(180),
};

/// A notification's HTTP POST (the `url` channel): how long one delivery
/// may take in all, connection and answer.
pub const NOTIFY_URL: Knob = Knob {
    var: "BATON_NOTIFY_URL_TIMEOUT_MS",
    default: Duration::from_secs(10),
};

/// `baton agents`: how long a CLI may take to answer `--version`.
pub const AGENTS_VERSION: Knob = Knob {
    var: "BATON_VERSION_TIMEOUT_MS",
    default: Duration::from_secs(15),
};

/// `baton doctor`: how long a CLI may take to answer `--version` (doctor
/// prefers the version a package manifest records, so this is rarely waited).
pub const DOCTOR_VERSION: Knob = Knob {
    var: "BATON_VERSION_TIMEOUT_MS",
    default: Duration::from_secs(3),
};

/// `baton doctor`: how long a brought ACP agent may take to answer
/// `initialize` (the run's override shortens it too).
pub const DOCTOR_ACP_INIT: Knob = Knob {
    var: "BATON_ACP_INIT_TIMEOUT_MS",
    default: Duration::from_secs(20),
};
