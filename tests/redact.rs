//! Redaction measured against generated secrets: every family in every
//! context (recall must be 100 %), look-alikes within a false-positive
//! budget, and a property test that a secret anywhere is always removed.

use std::collections::BTreeMap;

use baton::redact::{Counts, Redactor};
use proptest::prelude::*;

use crate::support::secrets::{self, ASSIGN, BARE, FAMILIES, Rng};

fn redact(text: &str) -> (String, Counts) {
    let r = Redactor::with_env(Vec::<(String, String)>::new());
    let mut counts = Counts::new();
    let out = r.redact(text, &mut counts);
    (out, counts)
}

#[test]
fn every_family_is_redacted_in_every_context() {
    let mut per_family: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for seed in [1, 2, 3] {
        for s in secrets::corpus(seed) {
            let (out, counts) = redact(&s.text);
            let e = per_family.entry(s.family).or_default();
            e.0 += 1;
            if out.contains(&s.secret) || counts.is_empty() {
                e.1 += 1;
                if missed.len() < 20 {
                    missed.push(format!("{}: {:?} -> {:?}", s.family, s.text, out));
                }
            }
        }
    }
    // Every family the corpus knows was generated, in many contexts.
    for f in FAMILIES {
        assert!(per_family[f.name].0 >= 12, "{} has too few samples", f.name);
    }
    assert!(per_family["private-key"].0 >= 100);
    assert!(
        missed.is_empty(),
        "recall below 100 %: {:?}\n{}",
        per_family
            .iter()
            .filter(|(_, v)| v.1 > 0)
            .collect::<Vec<_>>(),
        missed.join("\n")
    );
}

#[test]
fn look_alikes_stay_within_the_false_positive_budget() {
    for text in secrets::FIXED_LOOKALIKES {
        let (out, counts) = redact(text);
        assert_eq!(&out, text, "{counts:?}");
    }
    let generated = secrets::false_positives(7);
    let changed: Vec<String> = generated
        .iter()
        .filter_map(|t| {
            let (out, _) = redact(t);
            (out != *t).then(|| format!("{t:?} -> {out:?}"))
        })
        .collect();
    // Budget: one in two hundred look-alikes.
    assert!(
        changed.len() * 200 <= generated.len(),
        "{} of {} look-alikes redacted:\n{}",
        changed.len(),
        generated.len(),
        changed.join("\n")
    );
}

/// The measured leaks of issue 10, kept as named cases.
#[test]
fn measured_leaks_stay_fixed() {
    let cases = [
        // GitHub tokens whose random part has no digit.
        "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
        "token: gho_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIj",
        "github_pat_ABCDEFGHIJKLMNOPQRSTUV_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg",
        // AWS key ids with the ABIA and ACCA prefixes.
        "aws_access_key_id = ABIAQWERTYUIOPASDFGH",
        "id=ACCAZXCVBNMASDFGHJKL",
        // The secret key as `aws sts` prints it.
        "\"SecretAccessKey\": \"wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEYQ\",",
    ];
    for text in cases {
        let (out, counts) = redact(text);
        assert!(out.contains("[REDACTED:"), "{text} -> {out}");
        assert_eq!(counts.values().sum::<usize>(), 1, "{text}: {counts:?}");
        let secret = text
            .rsplit(['=', ' ', '"'])
            .find(|w| w.len() >= 20)
            .unwrap();
        assert!(!out.contains(secret), "{text} -> {out}");
    }
}

/// The leaks of issue 20, kept as named cases: (text, the secret).
#[test]
fn issue_20_leaks_stay_fixed() {
    let cases = [
        (
            r#"{"db": "https:\/\/user:S3cr3tPassw0rd@db.example.com\/x"}"#,
            "S3cr3tPassw0rd",
        ),
        ("DB_PASS=Hq7vT2xLm9Kz", "Hq7vT2xLm9Kz"),
        ("smtp_passwd: 'Wp4nZ8rQ2s'", "Wp4nZ8rQ2s"),
        ("export MYSQL_PWD=Zq8mT2vKx5", "Zq8mT2vKx5"),
        // Random letters that read as camelCase but for the vowels of
        // their humps (found by the property test with a random seed).
        ("MYSQL_PWD: csjegFVWZNtbposewymf", "csjegFVWZNtbposewymf"),
        // Random hex whose digits repeat (2.93 bits per character).
        (
            "\"LDAP_BIND_PASSWD\": \"b60d70c656a088cb0b066601\"",
            "b60d70c656a088cb0b066601",
        ),
        ("redis_pass = \"Qm9vZ2xlUmFu\"", "Qm9vZ2xlUmFu"),
        ("db.example.com:5432:appdb:app:Pg5pAss9Wq", "Pg5pAss9Wq"),
        ("*:*:*:postgres:hunter2hunter2", "hunter2hunter2"),
        // Random base64 without a digit that reads as camelCase.
        (
            "db.example.com:5432:appdb:app:f/URzyoctBrufjKt",
            "f/URzyoctBrufjKt",
        ),
        (
            "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/",
            "$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/",
        ),
        (
            "alice:$2y$10$abcdefghijklmnopqrstuuE8Rk1eS1PGh/JVg0pr1tYpdyH.jDRsa",
            "$2y$10$abcdefghijklmnopqrstuuE8Rk1eS1PGh/JVg0pr1tYpdyH.jDRsa",
        ),
        (
            "bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
            "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
        ),
        (
            "{\"type\": \"random_password\", \"instances\": [{\"attributes\": {\"result\": \"Xy8#kP2!mQ9$vR4@aB1c\"}}]}",
            "Xy8#kP2!mQ9$vR4@aB1c",
        ),
    ];
    for (text, secret) in cases {
        let (out, counts) = redact(text);
        assert!(!out.contains(secret), "{text} -> {out}");
        assert_eq!(counts.values().sum::<usize>(), 1, "{text}: {counts:?}");
    }
}

/// Text around a secret: printable ASCII, newlines and some non-ASCII.
fn noise() -> impl Strategy<Value = String> {
    "[ -~\n\té—✓]{0,300}"
}

proptest! {
    // A fixed seed: CI sees the same 512 cases every time. Random seeds
    // found two misses (a .pgpass password and `MYSQL_PWD:
    // csjegFVWZNtbposewymf`, both fixed and kept as named cases in
    // `issue_20_leaks_stay_fixed`). Explore by changing the seed.
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(20),
        ..ProptestConfig::with_cases(512)
    })]

    #[test]
    fn a_secret_anywhere_is_redacted(
        family in 0..FAMILIES.len(),
        seed in any::<u64>(),
        nodigit in any::<bool>(),
        before in noise(),
        after in noise(),
    ) {
        let f = &FAMILIES[family];
        let mut rng = Rng::new(seed);
        let secret = secrets::secret(f, &mut rng, nodigit);
        let ctx = if f.bare {
            *rng.pick(BARE)
        } else if !f.extra.is_empty() {
            *rng.pick(f.extra)
        } else {
            *rng.pick(ASSIGN)
        };
        let ident = *rng.pick(f.idents);
        let line = ctx
            .replace("{i}", ident)
            .replace("{I}", &ident.to_ascii_uppercase())
            .replace("{s}", &secret);
        let text = format!("{before}\n{line}\n{after}");
        let (out, counts) = redact(&text);
        prop_assert!(!out.contains(&secret), "{} leaked in {:?} -> {:?}", f.name, text, out);
        prop_assert!(counts.values().sum::<usize>() >= 1);
    }

    #[test]
    fn a_private_key_cut_anywhere_is_redacted(
        seed in any::<u64>(),
        from in 0usize..12,
        len in 2usize..14,
        before in noise(),
    ) {
        let mut rng = Rng::new(seed);
        let (pem, lines) = secrets::pem_key(&mut rng, "RSA PRIVATE KEY");
        let all: Vec<&str> = pem.lines().collect();
        // Any run of lines that includes BEGIN or END (a range that starts
        // or ends inside the block).
        let from = from.min(all.len() - 1);
        let to = (from + len).min(all.len());
        let cut = all[from..to].join("\n");
        prop_assume!(cut.contains("-----BEGIN") || cut.contains("-----END"));
        let text = format!("{before}\n{cut}\n");
        let (out, _) = redact(&text);
        for l in &lines {
            prop_assert!(!out.contains(l.as_str()), "body line leaked: {:?}", out);
        }
    }
}
