//! `make bench-redact`: recall and false positives per family on the
//! generated corpus, redaction throughput on a 10 MB packet, and the
//! council's blinding (names stripped per shape, text that names nobody
//! kept).
//!
//! Run by `cargo bench --bench redact` (the bench profile, which inherits
//! the release profile's settings, per-package opt-levels included: what
//! ships). Under `cargo test` (no `--bench` argument) it runs a small smoke
//! version so the harness-less target still checks itself.
//!
//! `-- --throughput-only` skips the corpora and repeats the throughput runs
//! (for `perf record`); `BENCH_REDACT_SRC=DIR` builds the source packet from
//! `DIR` instead of this checkout's `src/`, so two builds can be compared on
//! the same bytes.

#[path = "../tests/support/names.rs"]
mod names;
#[path = "../tests/support/secrets.rs"]
mod secrets;

use std::collections::BTreeMap;
use std::time::Instant;

use baton::council::blind::Stripper;
use baton::redact::{Counts, Redactor};

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let only_throughput = std::env::args().any(|a| a == "--throughput-only");
    let seeds: Vec<u64> = if full { (1..=10).collect() } else { vec![1] };
    let r = Redactor::with_env(Vec::<(String, String)>::new());
    if only_throughput {
        throughput(&r, full, 50);
        return;
    }

    let t0 = Instant::now();
    r.redact("warm-up", &mut Counts::new());
    println!(
        "rule set compiled in {:.1} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );

    // Recall per family.
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for &seed in &seeds {
        for s in secrets::corpus(seed) {
            let out = r.redact(&s.text, &mut Counts::new());
            let e = per.entry(s.family).or_default();
            e.0 += 1;
            if !out.contains(&s.secret) {
                e.1 += 1;
            } else if misses.len() < 5 {
                misses.push(format!("  missed {} (seed {seed}): {:?}", s.family, s.text));
            }
        }
    }
    println!(
        "\nrecall on generated secrets (seeds {:?}):",
        (seeds[0], seeds[seeds.len() - 1])
    );
    println!(
        "{:<24} {:>8} {:>9} {:>8}",
        "family", "samples", "redacted", "recall"
    );
    let (mut all, mut hit) = (0, 0);
    for (f, (n, k)) in &per {
        println!(
            "{f:<24} {n:>8} {k:>9} {:>7.2}%",
            100.0 * *k as f64 / *n as f64
        );
        all += n;
        hit += k;
    }
    println!(
        "{:<24} {all:>8} {hit:>9} {:>7.2}%",
        "ALL",
        100.0 * hit as f64 / all as f64
    );
    for m in &misses {
        println!("{m}");
    }

    // False positives: look-alikes that were changed, by the kind that fired.
    let mut fp_total = 0;
    let mut fp_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut examples = Vec::new();
    for &seed in &seeds {
        for t in secrets::false_positives(seed) {
            fp_total += 1;
            let mut c = Counts::new();
            let out = r.redact(&t, &mut c);
            if out != t {
                for k in c.keys() {
                    *fp_by_kind.entry(k.clone()).or_default() += 1;
                }
                if examples.len() < 5 {
                    examples.push(format!("  {t:?} -> {out:?}"));
                }
            }
        }
    }
    let fp: usize = fp_by_kind.values().sum();
    println!("\nfalse positives on look-alikes: {fp} of {fp_total} texts changed");
    for (k, n) in &fp_by_kind {
        println!("  {k:<22} {n}");
    }
    for e in &examples {
        println!("{e}");
    }

    blinding();
    throughput(&r, full, if full { 9 } else { 1 });
}

/// Throughput: a packet of this repository's own source, with a secret
/// every ~100 KB, and the same size of plain prose; best and median of `runs`.
fn throughput(r: &Redactor, full: bool, runs: usize) {
    let mb = if full { 10 } else { 1 };
    let code = packet_of_source(mb << 20);
    let prose = prose(mb << 20);
    for (name, text) in [("source code + secrets", &code), ("prose", &prose)] {
        let (mut walls, mut cpus) = (Vec::new(), Vec::new());
        let mut counts = Counts::new();
        for _ in 0..runs {
            counts.clear();
            let (t, c) = (Instant::now(), cpu_seconds());
            let out = r.redact(text, &mut counts);
            walls.push(t.elapsed().as_secs_f64());
            cpus.push(cpu_seconds() - c);
            std::hint::black_box(out);
        }
        let best = walls.iter().copied().fold(f64::MAX, f64::min);
        let best_cpu = cpus.iter().copied().fold(f64::MAX, f64::min);
        cpus.sort_by(f64::total_cmp);
        let median_cpu = cpus[cpus.len() / 2];
        let mb = text.len() as f64 / 1e6;
        println!(
            "\nthroughput, {name}: {mb:.1} MB in {:.1} ms wall = {:.0} MB/s; \
             {:.1} ms on the CPU = {:.0} MB/s (median of {runs}: {:.1} ms = {:.0} MB/s) \
             ({} redactions)",
            best * 1e3,
            mb / best,
            best_cpu * 1e3,
            mb / best_cpu,
            median_cpu * 1e3,
            mb / median_cpu,
            counts.values().sum::<usize>()
        );
    }
}

/// The council's name stripping: each shape of name, in sentences, must
/// become `[name removed]` and nothing more; text naming nobody must stay.
fn blinding() {
    let s = Stripper::new(&[]);
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for case in names::corpus() {
        let (out, n) = s.strip(&case.text);
        let e = per.entry(case.shape).or_default();
        e.0 += 1;
        if out == case.want && n == 1 {
            e.1 += 1;
        } else if misses.len() < 5 {
            misses.push(format!(
                "  missed {}: {:?} -> {out:?}",
                case.shape, case.text
            ));
        }
    }
    println!("\nblinding (council) on generated names:");
    println!(
        "{:<24} {:>8} {:>9} {:>8}",
        "shape", "samples", "stripped", "recall"
    );
    let (mut all, mut hit) = (0, 0);
    for (shape, (n, k)) in &per {
        println!(
            "{shape:<24} {n:>8} {k:>9} {:>7.2}%",
            100.0 * *k as f64 / *n as f64
        );
        all += n;
        hit += k;
    }
    println!(
        "{:<24} {all:>8} {hit:>9} {:>7.2}%",
        "ALL",
        100.0 * hit as f64 / all as f64
    );
    for m in &misses {
        println!("{m}");
    }
    let changed: Vec<&&str> = names::KEPT.iter().filter(|t| s.strip(t).0 != **t).collect();
    println!(
        "false positives on text naming nobody: {} of {} texts changed {changed:?}",
        changed.len(),
        names::KEPT.len()
    );
}

/// Time this thread has spent on a CPU (`CLOCK_THREAD_CPUTIME_ID`): on a
/// loaded machine the wall clock also counts the time other processes held
/// the CPU. (`/proc/thread-self/schedstat`, used before, is only brought up
/// to date at the scheduler's ticks, up to 4 ms late: a 10 ms run could
/// read as 3 ms.)
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn packet_of_source(size: usize) -> String {
    let root = std::env::var("BENCH_REDACT_SRC")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/src").to_string());
    let mut files = Vec::new();
    collect(std::path::Path::new(&root), &mut files);
    files.sort();
    let mut rng = secrets::Rng::new(42);
    let mut out = String::with_capacity(size + 4096);
    let mut next_secret = 100_000;
    'outer: loop {
        for f in &files {
            out.push_str(&std::fs::read_to_string(f).unwrap_or_default());
            if out.len() >= next_secret {
                let fam = rng.pick(secrets::FAMILIES);
                let s = secrets::secret(fam, &mut rng, false);
                out.push_str(&format!("\nlet leaked = \"{s}\";\n"));
                next_secret += 100_000;
            }
            if out.len() >= size {
                break 'outer;
            }
        }
    }
    out
}

fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn prose(size: usize) -> String {
    let mut rng = secrets::Rng::new(7);
    let words = [
        "the",
        "adviser",
        "reads",
        "a",
        "packet",
        "of",
        "files",
        "and",
        "diffs",
        "before",
        "it",
        "answers",
        "with",
        "one",
        "recommendation",
        "about",
        "migration",
        "tests",
        "flaky",
    ];
    let mut out = String::with_capacity(size + 64);
    while out.len() < size {
        out.push_str(words[rng.below(words.len())]);
        out.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    out
}
