//! The structured answers a council exchanges between its stages: the plan
//! the chair returns (`baton.council.plan/1`) and a review (`baton.council.review/1`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The chair's plan (`baton.council.plan/1`), as validated by baton. The
/// implementation stages read only `steps`, `authorized_files`, `test_cmd`
/// and `acceptance`; the ledgers are for people and for the gates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub summary: String,
    pub steps: Vec<String>,
    /// Paths (or globs, as `--allow` takes them) the writer may change.
    pub authorized_files: Vec<String>,
    /// The command baton runs in the worktree as the oracle (argv, no shell
    /// unless the user's own `--test-cmd` said so). `None`: no test oracle.
    pub test_cmd: Option<String>,
    pub acceptance: Vec<String>,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    #[serde(default)]
    pub assumptions: Vec<String>,
    #[serde(default)]
    pub disagreements: Vec<Disagreement>,
    #[serde(default)]
    pub dismissed_findings: Vec<Dismissed>,
    /// Proposal labels the plan takes from (mandatory, at least one).
    pub adopted_from: Vec<String>,
}

/// One cited file and line range; baton checks it at the base commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub claim: String,
    pub file: String,
    pub lines: Option<[u32; 2]>,
    /// Set by baton, not by the chair: `verified` or `missing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    pub topic: String,
    pub ruling: String,
    pub would_settle: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dismissed {
    pub finding: String,
    pub reason: String,
}

/// A review of the writer's diff (`baton.council.review/1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub verdict: Verdict,
    pub summary: String,
    pub files_reviewed: Vec<String>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Approve,
    RequestChanges,
    Reject,
}

/// One finding of a critique or a review. Ordered by severity so the
/// deduplication can keep the highest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub severity: Severity,
    /// correctness, security, tests, design, style, …
    pub category: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub description: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Nit,
    Minor,
    Major,
    Blocker,
}
