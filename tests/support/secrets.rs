//! The redaction corpus: from a seed, secrets shaped like each provider's
//! (real prefix, length and alphabet, also with no digit at all) embedded in
//! many file contexts, and look-alikes that must come through untouched.
//!
//! Shared by the corpus and property tests (`tests/redact.rs`) and the
//! benchmark (`bench/redact.rs`, `make bench-redact`). Contexts follow
//! gitleaks' sample contexts (ini, JSON, XML, YAML, C#, Go, Java, Kotlin, PHP,
//! Python, logstash, Makefile) plus env, shell, TOML, markdown and logs.

#![allow(dead_code)]

/// splitmix64: small, seedable, good enough to vary test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";

/// The alphabet of a template class; `nodigit` drops the digits where
/// letters remain (the measured leak: random parts without a digit).
fn class(code: &str, nodigit: bool) -> String {
    let d = if nodigit { "" } else { DIGITS };
    match code {
        "an" => format!("{UPPER}{LOWER}{d}"),
        "al" => format!("{UPPER}{LOWER}"),
        "lo" => format!("{LOWER}{d}"),
        "lw" => LOWER.into(),
        "up" => format!("{UPPER}{d}"),
        "UP" => UPPER.into(),
        "d" => DIGITS.into(),
        "hx" => "0123456789abcdef".into(),
        "HX" => "0123456789ABCDEF".into(),
        "Hx" => "0123456789abcdefABCDEF".into(),
        "b64" => format!("{UPPER}{LOWER}{d}+/"),
        "url" => format!("{UPPER}{LOWER}{d}_-"),
        "b32" => format!("{UPPER}{}", if nodigit { "" } else { "234567" }),
        // crypt(3)'s alphabet: the salts and hashes of `$apr1$`, bcrypt, `$6$`.
        "cr" => format!("./{UPPER}{LOWER}{d}"),
        // Terraform `random_password`'s default set (no `<>&`: Terraform's
        // JSON escapes them).
        "pw" => format!("{UPPER}{LOWER}{d}!#$%*()-_=+[]{{}}:?@"),
        other => panic!("unknown class {other}"),
    }
}

/// Expand `ghp_{an:36}` or `{an:16-32}` into a random string; braces
/// without a colon (`{SHA}`) are literal.
pub fn expand(template: &str, rng: &mut Rng, nodigit: bool) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').expect("unclosed {") + open;
        let Some((code, len)) = rest[open + 1..close].split_once(':') else {
            out.push_str(&rest[open..=close]);
            rest = &rest[close + 1..];
            continue;
        };
        let n = match len.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
                a + rng.below(b - a + 1)
            }
            None => len.parse().unwrap(),
        };
        let alphabet: Vec<char> = class(code, nodigit).chars().collect();
        for _ in 0..n {
            out.push(*rng.pick(&alphabet));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A family of secrets: how to make one, the identifier people give it, and
/// whether the value identifies itself (can appear bare, in prose or logs).
pub struct Family {
    pub name: &'static str,
    pub idents: &'static [&'static str],
    pub bare: bool,
    pub templates: &'static [&'static str],
    /// More contexts, `{s}` for the secret (e.g. `"SecretAccessKey": "{s}"`).
    pub extra: &'static [&'static str],
    /// Whether the value also goes into the `ASSIGN` contexts (`{i}Token=…`);
    /// a shape of its own (a URL, a `.pgpass` line) does not.
    pub assign: bool,
}

const fn fam(
    name: &'static str,
    idents: &'static [&'static str],
    bare: bool,
    templates: &'static [&'static str],
) -> Family {
    Family {
        name,
        idents,
        bare,
        templates,
        extra: &[],
        assign: true,
    }
}

const UUID: &str = "{hx:8}-{hx:4}-{hx:4}-{hx:4}-{hx:12}";

pub static FAMILIES: &[Family] = &[
    fam(
        "github",
        &["github", "gh"],
        true,
        &[
            "ghp_{an:36}",
            "gho_{an:36}",
            "ghu_{an:36}",
            "ghs_{an:36}",
            "ghr_{an:36}",
            "github_pat_{an:22}_{an:59}",
        ],
    ),
    fam(
        "gitlab",
        &["gitlab"],
        true,
        &[
            "glpat-{url:20}",
            "glpat-{url:27}.{lo:2}{lo:7}",
            "gldt-{url:20}",
            "glrt-{url:20}",
            "glptt-{hx:40}",
            "glft-{url:20}",
            "glimt-{url:25}",
            "glagent-{url:50}",
            "gloas-{url:64}",
            "glsoat-{url:20}",
            "glffct-{url:20}",
            "glcbt-{an:3}_{url:20}",
            "GR1348941{url:20}",
        ],
    ),
    fam(
        "aws-access-key-id",
        &["aws_access_key_id", "aws"],
        true,
        &[
            "AKIA{b32:16}",
            "ASIA{b32:16}",
            "ABIA{b32:16}",
            "ACCA{b32:16}",
            "A3T{UP:1}{b32:16}",
        ],
    ),
    Family {
        name: "aws-secret-access-key",
        idents: &[
            "aws_secret_access_key",
            "secret_access_key",
            "awsSecretAccessKey",
        ],
        bare: false,
        templates: &["{b64:40}"],
        extra: &[
            "{\n    \"Credentials\": {\n        \"AccessKeyId\": \"ASIAQWERTYUIOPASDFGH\",\n        \"SecretAccessKey\": \"{s}\",\n        \"Expiration\": \"2026-01-01T00:00:00Z\"\n    }\n}",
            "[default]\naws_access_key_id = AKIAQWERTYUIOPASDFGH\naws_secret_access_key = {s}\n",
            "AWS_SECRET_ACCESS_KEY={s} aws s3 ls",
        ],
        assign: true,
    },
    fam(
        "stripe",
        &["stripe"],
        true,
        &[
            "sk_live_{an:24}",
            "sk_test_{an:99}",
            "rk_live_{an:24}",
            "rk_prod_{an:34}",
            "whsec_{an:32}",
        ],
    ),
    fam("npm", &["npm"], true, &["npm_{an:36}"]),
    fam("pypi", &["pypi"], true, &["pypi-AgEIcHlwaS5vcmc{url:70}"]),
    fam(
        "huggingface",
        &["huggingface", "hf"],
        true,
        &["hf_{al:34}", "api_org_{al:34}"],
    ),
    fam(
        "slack",
        &["slack"],
        true,
        &[
            "xoxb-{d:12}-{d:13}-{an:24}",
            "xoxp-{d:12}-{d:12}-{d:13}-{hx:32}",
            "xapp-1-{UP:11}-{d:13}-{hx:64}",
            "xoxe.xoxp-1-{up:163}",
            "xoxe-1-{up:146}",
            "xoxs-{d:10}-{d:10}-{d:10}-{hx:32}",
            "xoxa-2-{an:40}",
            "xoxr-{an:40}",
        ],
    ),
    fam(
        "slack-webhook",
        &["slack_webhook"],
        true,
        &["https://hooks.slack.com/services/T{up:8}/B{up:8}/{an:24}"],
    ),
    fam("twilio", &["twilio"], true, &["SK{hx:32}"]),
    fam(
        "twilio-auth-token",
        &["twilio_auth", "twilio"],
        false,
        &["{hx:32}"],
    ),
    fam("sendgrid", &["sendgrid"], true, &["SG.{url:22}.{url:43}"]),
    fam(
        "digitalocean",
        &["digitalocean", "do"],
        true,
        &["dop_v1_{hx:64}", "doo_v1_{hx:64}", "dor_v1_{hx:64}"],
    ),
    fam(
        "databricks",
        &["databricks"],
        true,
        &["dapi{hx:32}", "dapi{hx:32}-2"],
    ),
    Family {
        name: "azure-storage-key",
        idents: &["AccountKey", "azure_storage_key", "storageAccountKey"],
        bare: false,
        templates: &["{b64:86}=="],
        extra: &[
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net",
        ],
        assign: true,
    },
    fam(
        "azure-ad-client-secret",
        &["azure_client_secret", "client_secret"],
        true,
        &["{an:3}{d:1}Q~{url:34}"],
    ),
    fam(
        "shopify",
        &["shopify"],
        true,
        &[
            "shpat_{Hx:32}",
            "shpca_{hx:32}",
            "shppa_{hx:32}",
            "shpss_{hx:32}",
        ],
    ),
    fam("atlassian", &["atlassian"], true, &["ATATT3{url:186}"]),
    fam("jira-legacy", &["jira", "confluence"], false, &["{an:24}"]),
    fam(
        "doppler",
        &["doppler"],
        true,
        &["dp.pt.{an:43}", "dp.st.{an:43}"],
    ),
    fam(
        "vault",
        &["vault"],
        true,
        &["hvs.{url:95}", "hvb.{url:140}"],
    ),
    fam("vault-legacy", &["vault"], false, &["s.{an:24}"]),
    fam(
        "terraform",
        &["terraform", "tfe"],
        true,
        &["{lo:14}.atlasv1.{url:67}"],
    ),
    fam(
        "openai",
        &["openai"],
        true,
        &[
            "sk-proj-{url:74}T3BlbkFJ{url:74}",
            "sk-{an:20}T3BlbkFJ{an:20}",
            "sk-svcacct-{url:58}T3BlbkFJ{url:58}",
        ],
    ),
    fam(
        "anthropic",
        &["anthropic"],
        true,
        &["sk-ant-api03-{url:93}AA", "sk-ant-admin01-{url:93}AA"],
    ),
    fam(
        "google-api-key",
        &["google", "gcp"],
        true,
        &["AIza{url:35}", "GOCSPX-{url:28}"],
    ),
    fam(
        "jwt",
        &["jwt", "session"],
        true,
        &[
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{url:60}.{url:43}",
            "eyJhbGciOiJSUzI1NiJ9.eyJ{url:120}.{url:86}",
        ],
    ),
    fam("mailgun", &["mailgun"], true, &["key-{hx:32}"]),
    fam("mailgun-named", &["mailgun"], false, &["pubkey-{hx:32}"]),
    fam("mailchimp", &["mailchimp"], true, &["{hx:32}-us{d:2}"]),
    fam("heroku", &["heroku"], true, &["HRKU-AA{url:58}"]),
    fam("heroku-legacy", &["heroku"], false, &[UUID]),
    fam("linear", &["linear"], true, &["lin_api_{an:40}"]),
    fam("postman", &["postman"], true, &["PMAK-{hx:24}-{hx:34}"]),
    fam("pulumi", &["pulumi"], true, &["pul-{hx:40}"]),
    fam(
        "grafana",
        &["grafana"],
        true,
        &["glsa_{an:32}_{hx:8}", "glc_{b64:40}", "eyJrIjoi{an:80}"],
    ),
    fam(
        "newrelic",
        &["newrelic"],
        true,
        &[
            "NRAK-{up:27}",
            "NRII-{an:32}",
            "NRJS-{hx:19}",
            "{hx:36}NRAL",
        ],
    ),
    fam(
        "datadog",
        &["datadog", "dd_api_key", "DD_APP_KEY"],
        false,
        &["{hx:32}", "{hx:40}"],
    ),
    fam("sentry", &["sentry"], true, &["sntryu_{hx:64}"]),
    fam("sentry-named", &["sentry"], false, &["{hx:64}"]),
    fam(
        "discord",
        &["discord"],
        false,
        &["M{an:25}.{url:6}.{url:38}", "{hx:64}"],
    ),
    fam(
        "discord-webhook",
        &["discord_webhook"],
        true,
        &["https://discord.com/api/webhooks/{d:18}/{url:68}"],
    ),
    fam("telegram", &["telegram"], true, &["{d:10}:AA{url:33}"]),
    fam(
        "dropbox",
        &["dropbox"],
        true,
        &["sl.{url:140}", "{an:11}AAAAAAAAAA{url:43}"],
    ),
    fam(
        "square",
        &["square"],
        true,
        &["EAAA{url:60}", "sq0atp-{url:22}", "sq0csp-{url:43}"],
    ),
    fam(
        "planetscale",
        &["planetscale"],
        true,
        &[
            "pscale_tkn_{url:43}",
            "pscale_pw_{url:43}",
            "pscale_oauth_{url:43}",
        ],
    ),
    fam("flyio", &["fly"], true, &["fo1_{url:43}", "fm2_{b64:120}"]),
    fam(
        "supabase",
        &["supabase"],
        true,
        &["sbp_{hx:40}", "sb_secret_{url:31}"],
    ),
    fam(
        "cloudflare",
        &["cloudflare"],
        false,
        &["{url:40}", "{hx:37}"],
    ),
    fam(
        "cloudflare-origin-ca",
        &["cloudflare"],
        true,
        &["v1.0-{hx:24}-{hx:146}"],
    ),
    Family {
        name: "bearer",
        idents: &["auth"],
        bare: false,
        templates: &["{an:40}", "{url:64}", "{b64:32}="],
        extra: &[
            "Authorization: Bearer {s}",
            "curl -H \"Authorization: Bearer {s}\" https://api.example.com/v1/me",
            "headers = {\"Authorization\": \"Bearer {s}\"}",
            "req.Header.Set(\"Authorization\", \"Bearer {s}\")",
        ],
        assign: false,
    },
    Family {
        name: "url-password",
        idents: &["url"],
        bare: false,
        templates: &["{an:16}", "{an:8-12}", "p{an:10}!"],
        extra: &[
            "DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
            "git clone https://deploy:{s}@git.example.com/org/repo.git",
            "amqp://worker:{s}@rabbit:5672/",
            "url: \"mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/db\"",
        ],
        assign: false,
    },
    // Issue 20: what reached the adviser unredacted in 0.2.0.
    Family {
        name: "url-password-json",
        idents: &["url"],
        bare: false,
        templates: &["{an:16}", "{an:8-12}", "S3cr3t{an:8}"],
        extra: &[
            "{\"url\": \"https:\\/\\/user:{s}@db.example.com\\/x\"}",
            "{\"DATABASE_URL\":\"postgres:\\/\\/app:{s}@db.internal:5432\\/app\",\"debug\":false}",
            "    \"dsn\": \"mysql:\\/\\/root:{s}@127.0.0.1:3306\\/shop\",",
        ],
        assign: false,
    },
    Family {
        name: "password-suffix",
        idents: &[
            "DB_PASS",
            "db_pass",
            "SMTP_PASSWD",
            "smtp_passwd",
            "MYSQL_PWD",
            "mysql_pwd",
            "REDIS_PASS",
            "ftp_pwd",
            "LDAP_BIND_PASSWD",
            "mail.pass",
            "dbPass",
        ],
        bare: false,
        templates: &["{an:12-24}", "p@{an:10}!", "{b64:20}", "{al:20}", "{hx:24}"],
        extra: &[
            "{i}={s}",
            "export {i}=\"{s}\"",
            "{i}: {s}",
            "{i}: '{s}'",
            "{i} = \"{s}\"",
            "\"{i}\": \"{s}\",",
            "ENV {i}={s}",
            "docker run -e {i}={s} app",
            "<{i}>{s}</{i}>",
            "{i} := \"{s}\"",
        ],
        assign: false,
    },
    Family {
        name: "pgpass",
        idents: &["pgpass"],
        bare: false,
        templates: &["{an:12-20}", "p@{an:10}!", "{b64:16}", "{hx:24}"],
        extra: &[
            "db.example.com:5432:appdb:app:{s}",
            "*:*:*:postgres:{s}",
            "# ~/.pgpass\nhostname:port:database:username:password\nlocalhost:5432:*:me:{s}\n",
            "$ cat ~/.pgpass\nprod-db.internal:6432:orders:orders_rw:{s}\n$ ",
            "@@ -1,2 +1,3 @@\n localhost:5432:*:me:abc\n+10.0.3.7:5433:analytics:reporter:{s}\n",
            "```\n/var/run/postgresql:5432:app:app:{s}\n```",
            "RUN echo '127.0.0.1:5432:test:tester:{s}' > ~/.pgpass",
            "pgpass:\n  - \"replica.example.com:5432:*:replicator:{s}\"\n",
        ],
        assign: false,
    },
    Family {
        name: "htpasswd",
        idents: &["htpasswd"],
        bare: false,
        templates: &[
            "$apr1${cr:8}${cr:22}",
            "$2y$10${cr:53}",
            "$2b$12${cr:53}",
            "{SHA}{b64:27}=",
            "$6$rounds=5000${cr:16}${cr:86}",
        ],
        extra: &[
            "admin:{s}",
            "# .htpasswd\nalice:{s}\n",
            "$ htpasswd -nbB deploy hunter2\ndeploy:{s}\n",
            "+ci-bot:{s}",
            "  - \"traefik.http.middlewares.auth.basicauth.users=user:{s}\"",
            "root:{s}:19000:0:99999:7:::",
        ],
        assign: false,
    },
    Family {
        name: "tfstate-random-password",
        idents: &["tfstate"],
        bare: false,
        templates: &["{pw:16}", "{pw:24}", "{pw:12-32}"],
        extra: &[
            TFSTATE_V4,
            "{\"address\":\"random_password.db\",\"mode\":\"managed\",\"type\":\"random_password\",\"name\":\"db\",\"provider_name\":\"registry.terraform.io/hashicorp/random\",\"schema_version\":3,\"values\":{\"id\":\"none\",\"keepers\":null,\"length\":24,\"result\":\"{s}\",\"special\":true},\"sensitive_values\":{\"result\":true}}",
            "{\n  \"modules\": [{\n    \"resources\": {\n      \"random_password.admin\": {\n        \"type\": \"random_password\",\n        \"depends_on\": [],\n        \"primary\": {\n          \"id\": \"none\",\n          \"attributes\": {\n            \"id\": \"none\",\n            \"length\": \"20\",\n            \"result\": \"{s}\"\n          }\n        }\n      }\n    }\n  }]\n}",
            "{\"state\": \"{\\\"type\\\": \\\"random_password\\\", \\\"instances\\\": [{\\\"attributes\\\": {\\\"result\\\": \\\"{s}\\\"}}]}\"}",
        ],
        assign: false,
    },
    fam(
        "generic",
        &[
            "password",
            "api_key",
            "secret",
            "auth_token",
            "client_secret",
            "db_password",
            "apiKey",
        ],
        false,
        &[
            "{an:16-32}",
            "{b64:24}=",
            "{hx:32}",
            "{al:24}",
            "p@{an:12}!",
        ],
    ),
];

/// A `terraform.tfstate` (format 4) with a `random_password` among other
/// resources; `{s}` its result.
const TFSTATE_V4: &str = r#"{
  "version": 4,
  "terraform_version": "1.9.5",
  "serial": 7,
  "lineage": "3f1c2d4e-0000-4000-8000-000000000000",
  "outputs": {},
  "resources": [
    {
      "mode": "managed",
      "type": "random_pet",
      "name": "server",
      "provider": "provider[\"registry.terraform.io/hashicorp/random\"]",
      "instances": [{"schema_version": 0, "attributes": {"id": "good-dog", "length": 2}}]
    },
    {
      "mode": "managed",
      "type": "random_password",
      "name": "db",
      "provider": "provider[\"registry.terraform.io/hashicorp/random\"]",
      "instances": [
        {
          "schema_version": 3,
          "attributes": {
            "bcrypt_hash": "$2a$10$Kq3UqE0pW2bNnHc8m0y5Be7sWJ6c1QpXl0jZgk3m9GQ1f8rVh2aXy",
            "id": "none",
            "keepers": null,
            "length": 24,
            "lower": true,
            "min_lower": 0,
            "override_special": null,
            "result": "{s}",
            "special": true,
            "upper": true
          },
          "sensitive_attributes": [[{"type": "get_attr", "value": "result"}]]
        }
      ]
    }
  ],
  "check_results": null
}"#;

/// gitleaks' sample contexts and a few more; `{i}` the identifier, `{I}` it
/// upper-cased, `{s}` the secret.
pub const ASSIGN: &[&str] = &[
    "{i}Token=\"{s}\"",
    "{i}Token = \"{s}\"",
    "{i}Token={s}",
    "{i}Token = {s}",
    "{\n    \"{i}_token\": \"{s}\"\n}",
    "{\"config.ini\": \"{I}_TOKEN={s}\\nBACKUP_ENABLED=true\"}",
    "<{i}Token>\n    {s}\n</{i}Token>",
    "<{i}Token>{s}</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    "{i}_token: \"{s}\"",
    "string {i}Token = \"{s}\";",
    "var {i}Token string = \"{s}\"",
    "{i}Token := \"{s}\"",
    "{i}Token := `{s}`",
    "String {i}Token = \"{s}\";",
    "var {i}Token = \"{s}\"",
    "${i}Token .= \"{s}\"",
    "{i}Token = '{s}'",
    "{i}Token = \"{s}\"",
    "System.setProperty(\"{I}_TOKEN\", \"{s}\")",
    "  \"{i}Token\" => \"{s}\"",
    "{I}_TOKEN = \"{s}\"",
    "{I}_TOKEN := \"{s}\"",
    "{I}_TOKEN ::= \"{s}\"",
    "{I}_TOKEN :::= \"{s}\"",
    "{I}_TOKEN ?= \"{s}\"",
    "export {I}_TOKEN=\"{s}\"",
    "{I}_TOKEN={s}\nOTHER=1",
    "[auth]\n{i}_token = \"{s}\"\n",
];

/// Where a self-identifying secret also turns up.
pub const BARE: &[&str] = &[
    "Use `{s}` to authenticate.",
    "2026-05-01T10:00:00Z INFO uploading with credential {s} (retry 2)",
    "https://api.example.com/v1/items?token={s}&page=2",
    "Authorization: token {s}",
    "curl -H 'X-Api-Key: {s}' https://api.example.com",
    "name,{s},2026-05-01",
    "+    client = Client(\"{s}\")",
    "({s})",
];

/// One test case: the text, and the fragments that must not survive.
pub struct Sample {
    pub family: &'static str,
    pub text: String,
    pub secret: String,
}

fn fill(ctx: &str, ident: &str, secret: &str) -> String {
    ctx.replace("{i}", ident)
        .replace("{I}", &ident.to_ascii_uppercase())
        .replace("{s}", secret)
}

/// A secret of `family`, with digits or (when `nodigit`) without.
pub fn secret(f: &Family, rng: &mut Rng, nodigit: bool) -> String {
    let t = *rng.pick(f.templates);
    expand(t, rng, nodigit)
}

/// Every family in every context it can appear in, each twice: once with
/// the full alphabet, once with no digit in the random parts.
pub fn corpus(seed: u64) -> Vec<Sample> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for f in FAMILIES {
        let mut contexts: Vec<&str> = f.extra.to_vec();
        if f.assign {
            contexts.extend(ASSIGN);
        }
        if f.bare {
            contexts.extend(BARE);
        }
        for ctx in contexts {
            for nodigit in [false, true] {
                let s = secret(f, &mut rng, nodigit);
                let ident = *rng.pick(f.idents);
                out.push(Sample {
                    family: f.name,
                    text: fill(ctx, ident, &s),
                    secret: s,
                });
            }
        }
    }
    out.extend(private_keys(&mut rng));
    out
}

const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(data: &[u8]) -> String {
    let a = B64.as_bytes();
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(a[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A PEM private key of random bytes, and its body lines.
pub fn pem_key(rng: &mut Rng, label: &str) -> (String, Vec<String>) {
    let bytes: Vec<u8> = (0..600).map(|_| rng.next_u64() as u8).collect();
    let body = base64(&bytes);
    let lines: Vec<String> = body
        .as_bytes()
        .chunks(64)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let pem = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----",
        lines.join("\n")
    );
    (pem, lines)
}

/// Private keys whole, JSON-escaped (GCP service account), in YAML and
/// diffs, and cut by a line range at either end.
fn private_keys(rng: &mut Rng) -> Vec<Sample> {
    let mut out = Vec::new();
    for label in [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "EC PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        let (pem, lines) = pem_key(rng, label);
        let n = lines.len();
        let texts = [
            format!("# deploy key\n{pem}\n"),
            format!(
                "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo\",\n  \"private_key\": \"{}\\n\",\n  \"client_email\": \"x@demo.iam.gserviceaccount.com\"\n}}",
                pem.replace('\n', "\\n")
            ),
            format!(
                "tls:\n  key: |\n{}\n",
                pem.lines()
                    .map(|l| format!("    {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            format!(
                "@@ -0,0 +1,{n} @@\n{}\n",
                pem.lines()
                    .map(|l| format!("+{l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            format!("KEY=\"{}\"", pem.replace('\n', "\\n")),
            // A range that starts inside the block …
            format!(
                "{}\n-----END {label}-----\nnext line\n",
                lines[3..].join("\n")
            ),
            // … a diff hunk that starts inside it …
            format!(
                "@@ -4,9 +4,9 @@\n{}\n+-----END {label}-----\n",
                lines[3..]
                    .iter()
                    .map(|l| format!("+{l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            // … and one that stops inside it.
            format!(
                "intro\n-----BEGIN {label}-----\n{}\n",
                lines[..n - 3].join("\n")
            ),
        ];
        for text in texts {
            for l in &lines {
                if text.contains(l.as_str()) {
                    out.push(Sample {
                        family: "private-key",
                        text: text.clone(),
                        secret: l.clone(),
                    });
                }
            }
        }
    }
    out
}

const WORDS: &[&str] = &[
    "the",
    "build",
    "server",
    "returns",
    "a",
    "list",
    "of",
    "items",
    "when",
    "cache",
    "is",
    "warm",
    "and",
    "retries",
    "after",
    "timeout",
    "user",
    "request",
    "handler",
    "config",
    "value",
    "with",
    "migration",
    "plan",
    "for",
    "tests",
    "flaky",
    "because",
    "shared",
    "temp",
    "directory",
    "key",
    "token",
    "bearer",
    "secret",
    "password",
    "field",
    "empty",
    "review",
    "this",
    "change",
];

fn sentence(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| *rng.pick(WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Text that must come through untouched: hashes, ids, encodings,
/// placeholders, colours and code that merely talks about secrets.
pub fn false_positives(seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut out: Vec<String> = FIXED_LOOKALIKES.iter().map(|s| s.to_string()).collect();
    let templates: &[&str] = &[
        "commit {hx:40}",
        "Merge: {hx:7} {hx:7}",
        "\"sha\": \"{hx:40}\",",
        "git checkout {hx:40}",
        "rev = \"{hx:40}\"",
        "fixed in {hx:12}, see #123",
        "\"id\": \"{hx:8}-{hx:4}-{hx:4}-{hx:4}-{hx:12}\",",
        "request_id={hx:8}-{hx:4}-{hx:4}-{hx:4}-{hx:12}",
        "\"client_id\": \"{hx:8}-{hx:4}-{hx:4}-{hx:4}-{hx:12}\"",
        "key_id = \"{hx:8}-{hx:4}-{hx:4}-{hx:4}-{hx:12}\"",
        "trace {hx:32} span {hx:16}",
        "\"integrity\": \"sha512-{b64:86}==\",",
        "checksum = \"{hx:64}\"",
        "github.com/pkg/errors v0.9.1 h1:{b64:43}=",
        "integrity sha1-{b64:27}=",
        "    --hash=sha256:{hx:64} \\",
        "\"resolved\": \"https://registry.npmjs.org/x/-/x-1.0.0.tgz#{hx:40}\"",
        "color: #{hx:6};",
        "background: #{hx:3}",
        "--accent: #{HX:6};",
        "docker pull ghcr.io/org/app@sha256:{hx:64}",
        "version = \"{d:1}.{d:2}.{d:1}\"",
        "listening on 10.{d:1}.{d:1}.{d:2}:8080",
    ];
    for i in 0..40 {
        for t in templates {
            out.push(expand(t, &mut rng, false));
        }
        let s = sentence(&mut rng, 6 + i % 10);
        let b = base64(s.as_bytes());
        out.push(format!("\"data\": \"{b}\""));
        out.push(format!("Content: {b}"));
        out.push(s);
    }
    out
}

/// Placeholders, identifiers and prose that name secrets without holding one.
pub const FIXED_LOOKALIKES: &[&str] = &[
    "api_key = \"YOUR_API_KEY\"",
    "token: ${GITHUB_TOKEN}",
    "password = \"<password>\"",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
    "secret: \"{{ .Values.secret }}\"",
    "password: \"********\"",
    "api_key=changeme",
    "token = os.environ[\"API_TOKEN\"]",
    "password: ${{ secrets.DB_PASSWORD }}",
    "client_secret = \"<your-client-secret>\"",
    "export API_KEY=$API_KEY",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "OPENAI_API_KEY=sk-...",
    "STRIPE_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
    "SLACK_WEBHOOK=https://hooks.slack.com/services/XXX/YYY/ZZZ",
    "DATABASE_URL=postgres://user:password@localhost:5432/app",
    "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@db/app",
    "let token = tokenizer.next_token();",
    "const apiKey = process.env.API_KEY;",
    "password = os.environ['DB_PASSWORD']",
    "secretManager.getSecretValue(secretName)",
    "if (passwordField.isEmpty()) return;",
    "auth_header = request.headers.get('Authorization')",
    "token_type: bearer",
    "private_key_path = ~/.ssh/id_ed25519",
    "apiKeyId = generateId()",
    "max_tokens: 4096",
    "public_key = load_pem(path)",
    "SECRET_KEY_BASE = ENV.fetch('SECRET_KEY_BASE')",
    "token_url = https://oauth2.googleapis.com/token",
    "\"key\": \"ctrl+shift+p\",",
    "keyboardLayout = \"en-US-international\"",
    "primary_key = \"user_id\"",
    "password_min_length = 12",
    "the bearer of bad news arrived",
    "Bearer authentication-scheme-description",
    "task-force-management-system-design-review",
    "use sklearn and sk-learn for the model",
    "sk-this-is-not-a-key-at-all-just-words",
    "xoxo-hugs-and-kisses-forever",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    "let secret = vault.read(\"kv/app\")?;",
    "fn password_is_valid(password: &str) -> bool {",
    "access_token_expires_in: 3600",
    "The API key is sent in the X-Api-Key header.",
    "author = \"Jane Doe <jane@example.com>\"",
    "token_count = len(tokens)",
    "cache_key = \"v1-deps-{{ checksum \\\"Cargo.lock\\\" }}\"",
    // Issue 20's shapes, written without a secret.
    "{\"url\": \"https:\\/\\/user:password@db.example.com\\/x\"}",
    "{\"home\": \"https:\\/\\/example.com\\/a\\/b\"}",
    "bypass: true",
    "pass_rate: 0.95",
    "CI_PASS=1",
    "ALL_TESTS_PASS=true",
    "on_pass: notify_slack",
    "compass = north",
    "DB_PASS=${DB_PASS}",
    "password_file = /run/secrets/db_pass",
    "hostname:port:database:username:password",
    "localhost:5432:mydb:myuser:${PGPASSWORD}",
    "*:*:*:*:*",
    "src/main.rs:12:5: error[E0425]: cannot find value `x` in this scope",
    "main.c:10:5:warning:unused",
    "fe80::1ff:fe23:4567:890a",
    "00:1a:2b:3c:4d:5e",
    "redis-cli GET cache:1:users:profile:name",
    "AuthUserFile /etc/apache2/.htpasswd",
    "htpasswd -c .htpasswd admin",
    "bcrypt hashes start with $2y$10$ and are 60 characters long",
    "resource \"random_password\" \"db\" {\n  length  = 16\n  special = true\n}",
    "output \"db_password\" {\n  value     = random_password.db.result\n  sensitive = true\n}",
    "{\"type\": \"random_string\", \"values\": {\"result\": \"good-dog\"}}",
];
