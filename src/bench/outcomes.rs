//! Per-test outcomes read from a test runner's output: what mining and
//! scoring compare (fail_to_pass, pass_to_pass). The output is the
//! project's and, after a trial, shaped by a peer's code: it is parsed,
//! never run or trusted beyond "this name passed".
//!
//! A name printed twice (two test binaries with a `tests::it_works` each)
//! counts as failed if any of its runs failed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::task::{Runner, valid_test_name};

/// One test's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Skipped,
    Failed,
}

/// The outcomes the output shows, by test name.
pub type Outcomes = BTreeMap<String, Outcome>;

pub fn parse(runner: Runner, output: &str) -> Outcomes {
    let mut out = Outcomes::new();
    let mut put = |name: &str, o: Outcome| {
        let name = name.trim();
        if !valid_test_name(name) {
            return;
        }
        // Failed > Skipped > Passed: a failure anywhere is a failure.
        let e = out.entry(name.to_string()).or_insert(o);
        *e = (*e).max(o);
    };
    match runner {
        Runner::Cargo => {
            for line in output.lines() {
                // `test a::b ... ok`, `test a::b - should panic ... ok`.
                let Some(rest) = line.strip_prefix("test ") else {
                    continue;
                };
                let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
                    continue;
                };
                let name = name.strip_suffix(" - should panic").unwrap_or(name);
                match verdict.trim() {
                    "ok" => put(name, Outcome::Passed),
                    "FAILED" => put(name, Outcome::Failed),
                    v if v.starts_with("ignored") => put(name, Outcome::Skipped),
                    _ => {}
                }
            }
        }
        Runner::Pytest => {
            for line in output.lines() {
                let Some((word, rest)) = line.split_once(' ') else {
                    continue;
                };
                let o = match word {
                    "PASSED" | "XPASS" => Outcome::Passed,
                    "FAILED" | "ERROR" => Outcome::Failed,
                    "XFAIL" => Outcome::Skipped,
                    _ => continue,
                };
                // `FAILED t.py::x - AssertionError: …`: the node id ends at
                // the first " - ".
                let id = rest.split(" - ").next().unwrap_or(rest);
                if id.contains("::") || id.ends_with(".py") {
                    put(id, o);
                }
            }
        }
        Runner::Go => {
            for line in output.lines() {
                let l = line.trim_start();
                let Some(rest) = l.strip_prefix("--- ") else {
                    continue;
                };
                let Some((verdict, rest)) = rest.split_once(": ") else {
                    continue;
                };
                let name = rest.split(" (").next().unwrap_or(rest);
                match verdict {
                    "PASS" => put(name, Outcome::Passed),
                    "FAIL" => put(name, Outcome::Failed),
                    "SKIP" => put(name, Outcome::Skipped),
                    _ => {}
                }
            }
        }
        Runner::Jest => {
            // The JSON report is one object; anything printed before it
            // (a banner, a warning) is skipped to its first `{`.
            let Some(start) = output.find('{') else {
                return out;
            };
            let mut de = serde_json::Deserializer::from_str(&output[start..]);
            let Ok(v) = serde_json::Value::deserialize(&mut de) else {
                return out;
            };
            for file in v["testResults"].as_array().into_iter().flatten() {
                for a in file["assertionResults"].as_array().into_iter().flatten() {
                    let Some(name) = a["fullName"].as_str() else {
                        continue;
                    };
                    match a["status"].as_str() {
                        Some("passed") => put(name, Outcome::Passed),
                        Some("failed") => put(name, Outcome::Failed),
                        Some("pending" | "skipped" | "todo" | "disabled") => {
                            put(name, Outcome::Skipped)
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    out
}

/// The names in `want` that did not pass in `got` (absent counts as not
/// passed: a test the peer deleted or renamed did not pass).
pub fn not_passed(want: &[String], got: &Outcomes) -> Vec<String> {
    want.iter()
        .filter(|t| got.get(*t) != Some(&Outcome::Passed))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(o: &Outcomes, v: Outcome) -> Vec<&str> {
        o.iter()
            .filter(|(_, x)| **x == v)
            .map(|(k, _)| k.as_str())
            .collect()
    }

    #[test]
    fn libtest_lines_and_a_name_failed_in_one_binary() {
        let out = "running 3 tests\n\
            test a::ok_one ... ok\n\
            test a::bad ... FAILED\n\
            test a::later ... ignored, slow\n\
            test a::panics - should panic ... ok\n\
            test result: FAILED. 1 passed; 1 failed\n\
            test a::ok_one ... FAILED\n\
            test not a test line\n";
        let o = parse(Runner::Cargo, out);
        assert_eq!(names(&o, Outcome::Passed), vec!["a::panics"]);
        assert_eq!(names(&o, Outcome::Failed), vec!["a::bad", "a::ok_one"]);
        assert_eq!(names(&o, Outcome::Skipped), vec!["a::later"]);
    }

    #[test]
    fn pytest_summary_lines() {
        let out = "tests/t.py ..F\n\
            =========================== short test summary info ============================\n\
            PASSED tests/t.py::test_a\n\
            PASSED tests/t.py::TestK::test_b[1-2]\n\
            FAILED tests/t.py::test_c - AssertionError: assert 1 == 2\n\
            ERROR tests/u.py::test_d - fixture 'x' not found\n\
            XFAIL tests/t.py::test_e - reason\n\
            PASSED everything is fine\n";
        let o = parse(Runner::Pytest, out);
        assert_eq!(
            names(&o, Outcome::Passed),
            vec!["tests/t.py::TestK::test_b[1-2]", "tests/t.py::test_a"]
        );
        assert_eq!(
            names(&o, Outcome::Failed),
            vec!["tests/t.py::test_c", "tests/u.py::test_d"]
        );
        assert_eq!(names(&o, Outcome::Skipped), vec!["tests/t.py::test_e"]);
    }

    #[test]
    fn go_verbose_lines_with_subtests() {
        let out = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n\
            === RUN   TestB\n    --- FAIL: TestB/empty (0.01s)\n--- FAIL: TestB (0.01s)\n\
            --- SKIP: TestC (0.00s)\nFAIL\n";
        let o = parse(Runner::Go, out);
        assert_eq!(names(&o, Outcome::Passed), vec!["TestA"]);
        assert_eq!(names(&o, Outcome::Failed), vec!["TestB", "TestB/empty"]);
        assert_eq!(names(&o, Outcome::Skipped), vec!["TestC"]);
    }

    #[test]
    fn jest_json_after_a_banner() {
        let out = r#"> npm test
{"numFailedTests":1,"testResults":[{"name":"/r/a.test.js","assertionResults":[
 {"fullName":"sum adds","status":"passed"},
 {"fullName":"sum handles empty","status":"failed"},
 {"fullName":"sum later","status":"pending"}]}]}
trailing text"#;
        let o = parse(Runner::Jest, out);
        assert_eq!(names(&o, Outcome::Passed), vec!["sum adds"]);
        assert_eq!(names(&o, Outcome::Failed), vec!["sum handles empty"]);
        assert_eq!(names(&o, Outcome::Skipped), vec!["sum later"]);
        assert!(parse(Runner::Jest, "no json here").is_empty());
    }

    #[test]
    fn a_missing_test_did_not_pass() {
        let o = parse(Runner::Cargo, "test a ... ok\ntest b ... FAILED\n");
        let want = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        assert_eq!(not_passed(&want, &o), vec!["b", "c"]);
    }

    #[test]
    fn a_name_with_a_control_character_is_not_kept() {
        let o = parse(Runner::Cargo, "test a\u{1b}[31m ... ok\n");
        assert!(o.is_empty());
    }
}
