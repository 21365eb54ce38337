//! The table of secret shapes the redactor knows, in the manner of gitleaks:
//! an id, the reported kind, keywords for the pre-filter, a regex, and the gates.
//!
//! Shapes were learned from gitleaks' rules (their regexes, keywords, entropy
//! thresholds and true/false positives) and written anew for the `regex`
//! crate. Order matters only when two rules claim overlapping text: the one
//! listed first names the merged redaction (so `token = "ghp_…"` is a GitHub
//! token, not a generic secret).

/// What the value must also satisfy beyond its regex and entropy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// The regex and entropy are enough: a fixed prefix and length.
    Plain,
    /// A loose prefix (`sk-…`, `xox?-…`): the secret must mix digits and
    /// letters, so prose like `sk-this-is-not-a-key` passes.
    DigitLetter,
    /// Only not a placeholder (`postgres://user:password@host`).
    Placeholder,
    /// Free-form values behind a name (`password = …`, `Bearer …`): not a
    /// placeholder, not an identifier or words, entropy scaled to length.
    Value,
}

/// Where the secret may end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum End {
    /// At an ASCII word boundary (alphabets without `-`).
    Word,
    /// Before a byte that cannot continue a token of `[A-Za-z0-9_-]`, or at
    /// the end: `\b` fails after a trailing `-`.
    Token,
    /// The regex says it all.
    Free,
}

pub struct Rule {
    /// Unique, gitleaks-style (`github-pat`).
    pub id: &'static str,
    /// Reported as `[REDACTED:<kind>]` and counted under it.
    pub kind: &'static str,
    /// Lower-case; the rule runs only on text containing one (any case).
    pub keywords: &'static [&'static str],
    /// An alternation of identifier names that must be assigned the value
    /// (`datadog`, `passw(?:or)?d`); empty when the value stands alone.
    pub names: &'static str,
    /// The secret itself.
    pub pattern: &'static str,
    /// Minimum Shannon entropy (bits per byte) of the secret.
    pub entropy: f32,
    pub check: Check,
    pub end: End,
    /// Whether a word boundary must come right before the secret.
    pub word_start: bool,
}

/// A self-identifying token: a word boundary before, a token boundary after.
const fn tok(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    entropy: f32,
) -> Rule {
    Rule {
        id,
        kind,
        keywords,
        names: "",
        pattern,
        entropy,
        check: Check::Plain,
        end: End::Token,
        word_start: true,
    }
}

/// A value that is only a secret when assigned to one of `names`.
const fn named(
    id: &'static str,
    kind: &'static str,
    keywords: &'static [&'static str],
    names: &'static str,
    pattern: &'static str,
    entropy: f32,
) -> Rule {
    Rule {
        id,
        kind,
        keywords,
        names,
        pattern,
        entropy,
        check: Check::Plain,
        end: End::Token,
        word_start: false,
    }
}

impl Rule {
    const fn check(mut self, c: Check) -> Rule {
        self.check = c;
        self
    }
    const fn end(mut self, e: End) -> Rule {
        self.end = e;
        self
    }
    const fn anywhere(mut self) -> Rule {
        self.word_start = false;
        self
    }
}

const HEX32: &str = "[a-fA-F0-9]{32}";

/// Every rule, most specific first. Private keys (PEM blocks, whole or cut)
/// are found by `pem.rs`, not by a regex.
pub static RULES: &[Rule] = &[
    // --- GitHub: every token kind has a fixed prefix and length, so the
    // body's alphabet and length are the test, not a digit/letter mix.
    tok("github-pat", "github_token", &["ghp_"], "ghp_[A-Za-z0-9]{36,}", 3.0).end(End::Word),
    tok("github-oauth", "github_token", &["gho_"], "gho_[A-Za-z0-9]{36,}", 3.0).end(End::Word),
    tok("github-app-token", "github_token", &["ghu_", "ghs_"], "gh[us]_[A-Za-z0-9]{36,}", 3.0).end(End::Word),
    tok("github-refresh-token", "github_token", &["ghr_"], "ghr_[A-Za-z0-9]{36,}", 3.0).end(End::Word),
    tok("github-fine-grained-pat", "github_token", &["github_pat_"], "github_pat_[A-Za-z0-9_]{30,}", 3.0).end(End::Word),
    // --- GitLab
    tok("gitlab-pat", "gitlab_token", &["glpat-"], r"glpat-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{9})?", 3.0),
    tok(
        "gitlab-token",
        "gitlab_token",
        &["gldt-", "glft-", "glrt-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-", "glcbt-", "glptt-"],
        r"(?:gldt|glft|glrt|glimt|glagent|gloas|glsoat|glffct|glptt|glcbt-[0-9a-zA-Z]{1,5})[-_][A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{9})?",
        3.0,
    ),
    tok("gitlab-runner-registration-token", "gitlab_token", &["gr1348941"], "GR1348941[A-Za-z0-9_-]{20,64}", 3.0),
    // --- AWS: key ids of every principal kind, base32 body.
    tok(
        "aws-access-key-id",
        "aws_access_key_id",
        &["akia", "asia", "abia", "acca", "a3t", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "apka"],
        "(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|APKA)[A-Z0-9]{16}",
        // Below gitleaks' 3.0: a real id of few distinct letters
        // (`ABIAZASIJBNZJZSIIESZ`, 2.85 bits) leaked; prefix and length are
        // specific enough, and `AKIAXXXX…` fillers are refused anyway.
        2.5,
    )
    .end(End::Word),
    named(
        "aws-secret-access-key",
        "aws_secret_key",
        &["secret"],
        r"(?:aws)?[_.-]?secret[_.-]?(?:access)?[_.-]?key",
        "[A-Za-z0-9/+]{40}",
        3.0,
    )
    .end(End::Free),
    named(
        "aws-session-token",
        "aws_session_token",
        &["session"],
        r"(?:aws)?[_.-]?session[_.-]?token",
        "[A-Za-z0-9/+=]{100,}",
        3.0,
    )
    .end(End::Free),
    tok("aws-bedrock-api-key", "aws_bedrock_key", &["absk"], "ABSK[A-Za-z0-9+/]{109,}={0,2}", 3.0).end(End::Free),
    // --- AI providers
    tok("anthropic-api-key", "anthropic_api_key", &["sk-ant-"], "sk-ant-[A-Za-z0-9_-]{20,}", 3.0).check(Check::DigitLetter),
    tok(
        "openai-api-key",
        "api_key",
        &["t3blbkfj"],
        "sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}",
        3.0,
    ),
    // OpenAI's newer keys and the many providers that copied the `sk-` shape.
    tok("sk-api-key", "api_key", &["sk-"], "sk-[A-Za-z0-9_-]{20,}", 3.0).check(Check::DigitLetter),
    tok("huggingface-access-token", "huggingface_token", &["hf_"], "hf_[A-Za-z]{34}", 2.0).end(End::Word),
    tok("huggingface-org-token", "huggingface_token", &["api_org_"], "api_org_[A-Za-z]{34}", 2.0).end(End::Word),
    tok("perplexity-api-key", "perplexity_key", &["pplx-"], "pplx-[A-Za-z0-9]{48}", 3.0).end(End::Word),
    tok("groq-api-key", "groq_key", &["gsk_"], "gsk_[A-Za-z0-9]{52}", 3.0).end(End::Word),
    tok("xai-api-key", "xai_key", &["xai-"], "xai-[A-Za-z0-9]{80}", 3.0).end(End::Word),
    // --- Google
    tok("gcp-api-key", "google_api_key", &["aiza"], "AIza[A-Za-z0-9_-]{35}", 3.0),
    tok("gcp-oauth-client-secret", "google_oauth_secret", &["gocspx-"], "GOCSPX-[A-Za-z0-9_-]{28}", 3.0),
    tok("google-oauth-refresh-token", "google_oauth_token", &["1//0"], "1//0[A-Za-z0-9_-]{40,}", 3.0).anywhere(),
    // --- Payments and commerce
    tok(
        "stripe-access-token",
        "stripe_key",
        &["sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod"],
        "[sr]k_(?:test|live|prod)_[A-Za-z0-9]{10,}",
        2.0,
    )
    .end(End::Word),
    tok("stripe-webhook-secret", "stripe_key", &["whsec_"], "whsec_[A-Za-z0-9+/]{32,88}", 3.0).end(End::Free),
    tok("shopify-token", "shopify_token", &["shpat_", "shpca_", "shppa_", "shpss_"], "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", 2.0).end(End::Word),
    tok("square-access-token", "square_token", &["sq0atp-", "eaaa"], "(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}", 2.0),
    tok("square-secret", "square_token", &["sq0csp-"], "sq0csp-[A-Za-z0-9_-]{43}", 2.0),
    tok("shippo-api-token", "shippo_token", &["shippo_"], "shippo_(?:live|test)_[a-fA-F0-9]{40}", 2.0).end(End::Word),
    tok("easypost-api-token", "easypost_token", &["ezak", "eztk"], "EZ[AT]K[A-Za-z0-9]{54}", 2.0).end(End::Word),
    tok("flutterwave-key", "flutterwave_key", &["flwseck", "flwpubk"], "FLW(?:SECK|PUBK)(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?", 2.0).end(End::Word),
    // --- Package registries
    tok("npm-access-token", "npm_token", &["npm_"], "npm_[A-Za-z0-9]{36}", 2.0).end(End::Word),
    tok("pypi-upload-token", "pypi_token", &["pypi-ag"], "pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}", 3.0),
    tok("rubygems-api-token", "rubygems_token", &["rubygems_"], "rubygems_[a-f0-9]{48}", 2.0).end(End::Word),
    tok("nuget-api-key", "nuget_key", &["oy2"], "oy2[a-z0-9]{43}", 3.0).end(End::Word),
    tok("clojars-api-token", "clojars_token", &["clojars_"], "CLOJARS_[a-z0-9]{60}", 2.0).end(End::Word),
    tok("artifactory-api-key", "artifactory_token", &["akcp"], "AKCp[A-Za-z0-9]{69}", 3.0).end(End::Word),
    tok("artifactory-reference-token", "artifactory_token", &["cmvmd"], "cmVmd[A-Za-z0-9]{59}", 3.0).end(End::Word),
    // --- Chat and messaging
    tok("slack-bot-token", "slack_token", &["xoxb-"], "xoxb-[0-9]{8,14}-[A-Za-z0-9-]{10,}", 2.0),
    tok("slack-user-token", "slack_token", &["xoxp-", "xoxe-"], "xox[pe](?:-[0-9]{10,13}){3}-[A-Za-z0-9-]{28,34}", 2.0),
    tok("slack-app-token", "slack_token", &["xapp-"], "(?i:xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+)", 2.0),
    tok("slack-config-token", "slack_token", &["xoxe"], "(?i:xoxe(?:\\.xox[bp])?-[0-9]-[A-Z0-9]{146,166})", 2.0),
    tok("slack-legacy-token", "slack_token", &["xoxo-", "xoxs-"], "xox[os]-[0-9]+-[0-9]+-[0-9]+-[a-fA-F0-9]+", 2.0),
    tok("slack-legacy-workspace-token", "slack_token", &["xoxa-", "xoxr-"], "xox[ar]-(?:[0-9]-)?[A-Za-z0-9]{8,48}", 3.0),
    tok("slack-token", "slack_token", &["xox"], "xox[abposre]-[A-Za-z0-9-]{10,}", 2.0).check(Check::DigitLetter),
    tok(
        "slack-webhook-url",
        "slack_webhook",
        &["hooks.slack.com"],
        "(?:https?://)?hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}",
        3.0,
    )
    .end(End::Free)
    .anywhere(),
    tok(
        "discord-webhook-url",
        "discord_webhook",
        &["discord"],
        "https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_-]{60,68}",
        3.0,
    ),
    named(
        "discord-token",
        "discord_token",
        &["discord"],
        "discord",
        "[MNO][A-Za-z0-9_-]{23,25}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38}|[a-f0-9]{64}|[A-Za-z0-9=_-]{32}",
        2.0,
    ),
    tok("telegram-bot-token", "telegram_token", &[":a"], "[0-9]{5,16}:A[A-Za-z0-9_-]{34}", 3.0),
    tok("twilio-api-key", "twilio_key", &["sk"], "SK[0-9a-fA-F]{32}", 3.0).end(End::Word),
    named("twilio-auth-token", "twilio_key", &["twilio"], "twilio", HEX32, 3.0),
    tok("sendgrid-api-token", "sendgrid_key", &["sg."], "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", 3.0),
    tok("sendinblue-api-token", "brevo_key", &["xkeysib-"], "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", 2.0).end(End::Word),
    tok("mailgun-private-api-token", "mailgun_key", &["key-"], "key-[a-f0-9]{32}", 3.0).end(End::Word),
    named("mailgun-key", "mailgun_key", &["mailgun"], "mailgun", "pubkey-[a-f0-9]{32}|[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}", 2.0),
    tok("mailchimp-api-key", "mailchimp_key", &["-us"], "[a-f0-9]{32}-us[0-9]{1,2}", 3.0).end(End::Word),
    // --- Cloud and hosting
    tok("digitalocean-token", "digitalocean_token", &["do_v1_", "dop_v1_", "doo_v1_", "dor_v1_"], "do[opr]_v1_[a-f0-9]{64}", 3.0).end(End::Word),
    tok("databricks-api-token", "databricks_token", &["dapi"], "dapi[a-f0-9]{32}(?:-[0-9])?", 3.0),
    named(
        "azure-storage-account-key",
        "azure_storage_key",
        &["accountkey", "account_key", "storage"],
        "account[_.-]?key|storage[_.-]?(?:account[_.-]?)?key",
        "[A-Za-z0-9+/]{86}==",
        4.0,
    )
    .end(End::Free),
    named("azure-sas-signature", "azure_sas", &["sig="], "\\bsig", "[A-Za-z0-9%+/]{40,120}(?:=|%3[dD]){0,2}", 3.5).end(End::Free),
    tok("azure-ad-client-secret", "azure_client_secret", &["q~"], "[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}", 3.0)
        .end(End::Free)
        .anywhere(),
    tok("heroku-api-key-v2", "heroku_key", &["hrku-"], "HRKU-AA[A-Za-z0-9_-]{58}", 3.0),
    named(
        "heroku-api-key",
        "heroku_key",
        &["heroku"],
        "heroku",
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        3.0,
    ),
    tok("flyio-access-token", "flyio_token", &["fo1_", "fm1", "fm2_"], "(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", 3.5).end(End::Free),
    tok("supabase-token", "supabase_key", &["sbp_", "sb_secret_"], "(?:sbp_(?:oauth_)?[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{31,64})", 3.0),
    tok("planetscale-token", "planetscale_token", &["pscale_"], "pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}", 3.0),
    tok("cloudflare-origin-ca-key", "cloudflare_token", &["v1.0-"], "v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}", 2.0).end(End::Word),
    named("cloudflare-api-token", "cloudflare_token", &["cloudflare", "cf_api", "cf-api"], "cloudflare|cf[_-]api", "[A-Za-z0-9_-]{40}|[a-f0-9]{37}", 2.0),
    tok("netlify-token", "netlify_token", &["nfp_"], "nfp_[A-Za-z0-9]{36,40}", 3.0).end(End::Word),
    named("netlify-access-token", "netlify_token", &["netlify"], "netlify", "[A-Za-z0-9=_-]{40,46}", 3.0),
    tok("vercel-token", "vercel_token", &["vcp_", "vci_", "vca_", "vcr_", "vck_"], "vc[piark]_[A-Za-z0-9]{24,64}", 3.0).end(End::Word),
    named("vercel-legacy-token", "vercel_token", &["vercel"], "vercel", "[A-Za-z0-9]{24}", 3.0),
    tok("alibaba-access-key-id", "alibaba_key", &["ltai"], "LTAI[A-Za-z0-9]{20}", 3.0).end(End::Word),
    tok("yandex-key", "yandex_key", &["aqvn"], "AQVN[A-Za-z0-9_-]{35,38}", 3.0),
    // --- Developer tools and SaaS
    tok("atlassian-api-token", "atlassian_token", &["atatt3"], "ATATT3[A-Za-z0-9_=-]{180,200}", 3.5),
    named(
        "atlassian-legacy-token",
        "atlassian_token",
        &["atlassian", "confluence", "jira"],
        "atlassian|confluence|jira",
        "[a-zA-Z0-9]{24}",
        3.5,
    ),
    tok("doppler-token", "doppler_token", &["dp."], "dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}", 2.0).end(End::Word),
    tok("vault-service-token", "vault_token", &["hvs.", "hvb.", "hvr."], "hv[sbr]\\.[A-Za-z0-9_-]{90,}", 3.5),
    named("vault-legacy-token", "vault_token", &["vault"], "vault", "s\\.[A-Za-z0-9]{24}", 3.5),
    tok("terraform-cloud-token", "terraform_token", &["atlasv1"], "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}", 3.5),
    tok("linear-api-key", "linear_key", &["lin_api_"], "lin_api_[A-Za-z0-9]{40}", 2.0).end(End::Word),
    tok("linear-oauth-token", "linear_key", &["lin_oauth_"], "lin_oauth_[a-f0-9]{64}", 2.0).end(End::Word),
    named("linear-client-secret", "linear_key", &["linear"], "linear", HEX32, 2.0),
    tok("postman-api-token", "postman_key", &["pmak-"], "PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", 3.0).end(End::Word),
    tok("pulumi-api-token", "pulumi_token", &["pul-"], "pul-[a-f0-9]{40}", 2.0).end(End::Word),
    tok("grafana-api-key", "grafana_token", &["eyjrijoi"], "eyJrIjoi[A-Za-z0-9]{70,}={0,3}", 3.0).end(End::Free),
    tok("grafana-cloud-token", "grafana_token", &["glc_"], "glc_[A-Za-z0-9+/]{32,}={0,3}", 3.0).end(End::Free),
    tok("grafana-service-account-token", "grafana_token", &["glsa_"], "glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", 3.0).end(End::Word),
    tok("new-relic-key", "newrelic_key", &["nrak-", "nrii-", "nrjs-", "nraa-"], "NR(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9-]{32}|JS-[a-f0-9]{19}|AA-[a-f0-9]{27})", 2.0),
    tok("new-relic-license-key", "newrelic_key", &["nral"], "[a-f0-9]{36}NRAL", 3.0).end(End::Word),
    named(
        "datadog-key",
        "datadog_key",
        &["datadog", "dd_api", "dd_app", "dd-api", "dd-app", "ddapi", "ddapp"],
        "datadog|dd[_-]?(?:api|app)",
        "[a-fA-F0-9]{40}|[a-fA-F0-9]{32}",
        3.0,
    ),
    tok("sentry-user-token", "sentry_token", &["sntryu_"], "sntryu_[a-f0-9]{64}", 3.0).end(End::Word),
    tok("sentry-org-token", "sentry_token", &["sntrys_"], "sntrys_eyJ[A-Za-z0-9+/=]{50,}_[A-Za-z0-9+/]{43}", 3.5).end(End::Free),
    named("sentry-access-token", "sentry_token", &["sentry"], "sentry", "[a-f0-9]{64}", 3.0),
    tok("dropbox-short-lived-token", "dropbox_token", &["sl."], "sl\\.[A-Za-z0-9_=-]{130,160}", 3.0),
    tok("dropbox-long-lived-token", "dropbox_token", &["aaaaaaaaaa"], "[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}", 3.0),
    tok("notion-api-token", "notion_token", &["ntn_", "secret_"], "(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})", 3.5).end(End::Word),
    tok("airtable-pat", "airtable_token", &["pat"], "pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}", 3.0).end(End::Word),
    tok("dynatrace-api-token", "dynatrace_token", &["dt0c01."], "dt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}", 3.5).end(End::Word),
    tok("sourcegraph-token", "sourcegraph_token", &["sgp_"], "sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", 3.0).end(End::Word),
    tok("snyk-token", "snyk_token", &["snyk_"], "snyk_(?:uat|sat)\\.[a-z0-9]{8}\\.[A-Za-z0-9_-]{20,}\\.[A-Za-z0-9_-]{20,}", 3.0),
    tok("sonar-token", "sonar_token", &["squ_", "sqp_", "sqa_"], "sq[upa]_[a-f0-9]{40}", 3.0).end(End::Word),
    tok("prefect-api-token", "prefect_token", &["pnu_"], "pnu_[A-Za-z0-9]{36}", 2.0).end(End::Word),
    tok("readme-api-token", "readme_token", &["rdme_"], "rdme_[a-z0-9]{70}", 2.0).end(End::Word),
    tok("one-password-secret-key", "onepassword_key", &["a3-"], "A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}", 3.0).end(End::Word),
    tok("one-password-service-token", "onepassword_key", &["ops_"], "ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", 4.0).end(End::Free),
    tok("age-secret-key", "age_key", &["age-secret-key-1"], "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 3.0).end(End::Word),
    tok("facebook-access-token", "facebook_token", &["eaam", "eaac"], "EAA[MC][A-Za-z0-9]{100,}", 4.0).end(End::Word),
    tok("octopus-deploy-api-key", "octopus_key", &["api-"], "API-[A-Z0-9]{26}", 3.0).end(End::Word),
    tok("clickhouse-cloud-key", "clickhouse_key", &["4b1d"], "4b1d[A-Za-z0-9]{38}", 3.0).end(End::Word),
    tok("harness-api-key", "harness_key", &["pat.", "sat."], "(?:pat|sat)\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{20}", 3.0).end(End::Word),
    // --- Shapes shared by many providers
    tok(
        "jwt",
        "jwt",
        &["eyj"],
        "eyJ[A-Za-z0-9_-]{10,}={0,2}\\.eyJ[A-Za-z0-9_-]{10,}={0,2}\\.[A-Za-z0-9_-]*",
        3.0,
    )
    .end(End::Free),
    // `Bearer <token>`: the token goes, the word stays so the text still reads.
    tok(
        "bearer-token",
        "bearer_token",
        &["bearer"],
        "(?i:bearer)[ \\t]+(?P<s>[A-Za-z0-9._~+/=-]{16,})",
        3.0,
    )
    .check(Check::Value)
    .end(End::Free),
    tok(
        "basic-auth-header",
        "basic_auth",
        &["basic"],
        "(?i:authorization[\"']?[ \\t]*[:=][ \\t]*[\"']?basic)[ \\t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})",
        2.5,
    )
    .end(End::Free),
    tok(
        "url-password",
        "url_password",
        &["://", ":\\/\\/"],
        // user:password@host in any URL; the secret is the password alone.
        // Also JSON-escaped (`https:\/\/user:pw@host\/x`, as PHP's and
        // Go's encoders write URLs).
        "[a-zA-Z][a-zA-Z0-9+.-]{1,20}:(?://|\\\\/\\\\/)[^\\s:@/'\"<>]{1,64}:(?P<s>[^\\s:@/'\"<>]{3,128})@[A-Za-z0-9.\\[-]",
        0.0,
    )
    .check(Check::Placeholder)
    .end(End::Free),
    // --- Generic assignments: any name that says it holds a secret. Last, so
    // a specific rule that claims the same value names it.
    // Password hashes: an `.htpasswd` line (`user:$apr1$…`, bcrypt,
    // `{SHA}`), `/etc/shadow`, a Terraform `bcrypt_hash`. Offline cracking
    // turns a weak password's hash into the password.
    tok(
        "password-hash",
        "password_hash",
        &["$apr1$", "$1$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "{sha}", "{ssha}"],
        "(?P<s>\\$(?:apr1|1)\\$[./0-9A-Za-z]{1,8}\\$[./0-9A-Za-z]{22}\
         |\\$2[abxy]\\$[0-9]{2}\\$[./0-9A-Za-z]{53}\
         |\\$5\\$(?:rounds=[0-9]{1,9}\\$)?[./0-9A-Za-z]{1,16}\\$[./0-9A-Za-z]{43}\
         |\\$6\\$(?:rounds=[0-9]{1,9}\\$)?[./0-9A-Za-z]{1,16}\\$[./0-9A-Za-z]{86}\
         |\\{SHA\\}[A-Za-z0-9+/]{27}=\
         |\\{SSHA\\}[A-Za-z0-9+/]{28,}={0,2})(?:[^./0-9A-Za-z]|\\z)",
        3.0,
    )
    .end(End::Free)
    .anywhere(),
    named(
        "generic-password",
        "password",
        &["pass", "pwd"],
        // `DB_PASS`, `smtp.pass`, `pass:` and `dbPass`, but not `bypass`,
        // `compass` or `pass_rate`.
        "passw(?:or)?d|pwd|passphrase|(?:\\b|_)pass\\b|(?-i:[a-z0-9]Pass)\\b",
        "[A-Za-z0-9_.~+/=!@#$%^*?-]{6,}",
        0.0,
    )
    .check(Check::Value),
    named(
        "generic-secret",
        "secret",
        &["secret", "token", "key", "credential", "auth", "api"],
        "secret|token|api[_.-]?key|apikey|key|credentials?|auth",
        "[A-Za-z0-9_.~+/=!@#$%^*?-]{8,}",
        0.0,
    )
    .check(Check::Value),
];

#[cfg(test)]
mod tests {
    use super::RULES;
    use crate::redact::{Counts, Redactor, full_pattern, rule_matches};

    const AN: &str = "NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63XykWZeiNNCiia3anXn9k3ksu9mI4ROnl89Sm995ytbxAk7jqevt0MLaMRTvetw0tESulEETldq8b8Vw2zbJYAxyL1aCcTlN99mhWp708DwGw5HqXDgLVXZx3scB8fnvGNx6jvr7SIftRutlZfOjUStEkUdfMI7zc";
    const HX: &str = "7b8ed411fa644d35db41d94e5efaf89fc43c5fa52f8b2b19b8f89a50f8a8e9bb8bdb5eba456bf92d5d98065e5751f75143a5f61debc267b0bc8d3b1939a9b4ddbe45cf642b0c3a4acdd7f9fcc589f8d0a9f94f03e7914c0f87f17f8499ff30499a90ebb4";
    const UP: &str = "CAQ93G8MA114Y4ZMS3ETA1S4TJK495V8J18DEORFEBV1EZ5DHHOHIS2JLL0KENC9GYERDHZIA1FU55WXDISJ6S99OQE9PQS7IPX3YLIBVFCFH63PY34UG7B8YDJ1OHF5NIYWPSVWYYIWS1X7CNLZEGCCLMMC54WA14T1U33GMJKEXY4J9QHRKSPC4CWXUDB34JHUS3PK";
    const LW: &str = "bgwashvctmwlvjfoljcxwofyhfvgbutnxiaoboyvnfbbrqsldwchzpcpbvhubpmzbbinojubbgfwqumgrhckzdcrftcxgtaorlpnsymquexayjwohrdejpcyyimkeercphwcznsvhibpwhbwgzjldcnykmyyrajuyesaoewuzaxbwnidzzmrekcjfeipvkjbcryxraad";

    /// `n` characters of `base`, repeated if need be.
    fn r(base: &str, n: usize) -> String {
        base.chars().cycle().take(n).collect()
    }
    fn an(n: usize) -> String {
        r(AN, n)
    }
    /// Letters only: the digit-free case that leaked.
    fn al(n: usize) -> String {
        r(&AN.replace(|c: char| c.is_ascii_digit(), ""), n)
    }
    fn hx(n: usize) -> String {
        r(HX, n)
    }
    fn up(n: usize) -> String {
        r(UP, n)
    }
    fn lw(n: usize) -> String {
        r(LW, n)
    }

    /// (rule id, text holding a secret, the secret, a look-alike it must
    /// leave alone), partly after gitleaks' published true/false positives.
    fn examples() -> Vec<(&'static str, String, String, String)> {
        let ex = |id, secret: String, fp: &str| {
            (
                id,
                format!("value = \"{secret}\"\n"),
                secret,
                fp.to_string(),
            )
        };
        let assign =
            |id, text: String, secret: String, fp: &str| (id, text, secret, fp.to_string());
        vec![
            ex("github-pat", format!("ghp_{}", al(36)), "ghp_token_prefix"),
            ex("github-oauth", format!("gho_{}", an(36)), "gho_short123"),
            ex(
                "github-app-token",
                format!("ghs_{}", an(36)),
                "ghs_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            ),
            ex("github-refresh-token", format!("ghr_{}", al(36)), "ghr_"),
            ex(
                "github-fine-grained-pat",
                format!("github_pat_{}_{}", an(22), al(59)),
                "github_pat_short",
            ),
            ex("gitlab-pat", format!("glpat-{}", al(20)), "glpat-short"),
            ex(
                "gitlab-token",
                format!("glrt-{}", an(20)),
                "glrt-documentation",
            ),
            ex(
                "gitlab-runner-registration-token",
                format!("GR1348941{}", an(20)),
                "GR1348941",
            ),
            ex(
                "aws-access-key-id",
                format!("ABIA{}", up(16)),
                "AKIAEXAMPLE",
            ),
            assign(
                "aws-secret-access-key",
                format!("\"SecretAccessKey\": \"{}/{}\",", an(20), al(19)),
                format!("{}/{}", an(20), al(19)),
                "aws_secret_access_key = <your secret here>",
            ),
            assign(
                "aws-session-token",
                format!("\"SessionToken\": \"{}\"", an(180)),
                an(180),
                "session_token = null",
            ),
            ex(
                "aws-bedrock-api-key",
                format!("ABSK{}", an(120)),
                "ABSKshort",
            ),
            ex(
                "anthropic-api-key",
                format!("sk-ant-api03-{}AA", an(93)),
                "sk-ant-words-without-any-digits-here",
            ),
            ex(
                "openai-api-key",
                format!("sk-proj-{}T3BlbkFJ{}", al(74), al(74)),
                "sk-proj-T3BlbkFJ",
            ),
            ex(
                "sk-api-key",
                format!("sk-{}", an(48)),
                "sk-this-is-not-a-key-at-all-just-words",
            ),
            ex(
                "huggingface-access-token",
                format!("hf_{}", al(34)),
                "hf_hub_download_function_name",
            ),
            ex(
                "huggingface-org-token",
                format!("api_org_{}", al(34)),
                "api_org_id",
            ),
            ex("perplexity-api-key", format!("pplx-{}", an(48)), "pplx-api"),
            ex("groq-api-key", format!("gsk_{}", an(52)), "gsk_short"),
            ex("xai-api-key", format!("xai-{}", an(80)), "xai-grok"),
            ex("gcp-api-key", format!("AIza{}", al(35)), "AIzaShort"),
            ex(
                "gcp-oauth-client-secret",
                format!("GOCSPX-{}", an(28)),
                "GOCSPX-",
            ),
            ex(
                "google-oauth-refresh-token",
                format!("1//0{}", an(60)),
                "see 1//0 in the docs",
            ),
            ex(
                "stripe-access-token",
                format!("sk_live_{}", al(24)),
                "sk_live_",
            ),
            ex(
                "stripe-webhook-secret",
                format!("whsec_{}", an(32)),
                "whsec_short",
            ),
            ex(
                "shopify-token",
                format!("shpat_{}", hx(32)),
                "shpat_notahexvalue",
            ),
            ex("square-access-token", format!("EAAA{}", an(60)), "EAAA"),
            ex(
                "square-secret",
                format!("sq0csp-{}", an(43)),
                "sq0csp-short",
            ),
            ex(
                "shippo-api-token",
                format!("shippo_live_{}", hx(40)),
                "shippo_live_",
            ),
            ex("easypost-api-token", format!("EZAK{}", an(54)), "EZAKshort"),
            ex(
                "flutterwave-key",
                format!("FLWSECK_TEST-{}-X", hx(32)),
                "FLWSECK_TEST-",
            ),
            ex(
                "npm-access-token",
                format!("npm_{}", al(36)),
                "npm_config_registry",
            ),
            ex(
                "pypi-upload-token",
                format!("pypi-AgEIcHlwaS5vcmc{}", an(70)),
                "pypi-AgEIcHlwaS5vcmc",
            ),
            ex(
                "rubygems-api-token",
                format!("rubygems_{}", hx(48)),
                "rubygems_version",
            ),
            ex("nuget-api-key", format!("oy2{}", lw(43)), "oy2short"),
            ex(
                "clojars-api-token",
                format!("CLOJARS_{}", hx(60)),
                "CLOJARS_USERNAME",
            ),
            ex(
                "artifactory-api-key",
                format!("AKCp{}", an(69)),
                "AKCpshort",
            ),
            ex(
                "artifactory-reference-token",
                format!("cmVmd{}", an(59)),
                "cmVmdGVzdA",
            ),
            ex(
                "slack-bot-token",
                format!("xoxb-263594206564-1234567890123-{}", an(24)),
                "xoxb-not-a-real-token-this-is-ok",
            ),
            ex(
                "slack-user-token",
                format!("xoxp-412381236543-412381236543-412381236543-{}", hx(32)),
                "xoxp-placeholder",
            ),
            ex(
                "slack-app-token",
                format!("xapp-1-A{}-4123812365431-{}", up(10), hx(64)),
                "xapp-1-short",
            ),
            ex(
                "slack-config-token",
                format!("xoxe.xoxp-1-{}", up(163)),
                "xoxe.xoxp-1-short",
            ),
            ex(
                "slack-legacy-token",
                format!("xoxs-4123812365-4123812365-4123812365-{}", hx(32)),
                "xoxs-hello-world",
            ),
            ex(
                "slack-legacy-workspace-token",
                format!("xoxr-{}", an(40)),
                "xoxr-",
            ),
            ex(
                "slack-token",
                format!("xoxa-{}", an(30)),
                "xoxo-hugs-and-kisses-forever",
            ),
            ex(
                "slack-webhook-url",
                format!(
                    "https://hooks.slack.com/services/T{}/B{}/{}",
                    up(8),
                    up(8),
                    an(24)
                ),
                "https://hooks.slack.com/services/XXX/YYY/ZZZ",
            ),
            ex(
                "discord-webhook-url",
                format!(
                    "https://discord.com/api/webhooks/123456789012345678/{}",
                    an(68)
                ),
                "https://discord.com/api/webhooks/123/abc",
            ),
            assign(
                "discord-token",
                format!("DISCORD_TOKEN={}", hx(64)),
                hx(64),
                "discord_channel = general-chat",
            ),
            ex(
                "telegram-bot-token",
                format!("1234567890:AA{}", an(33)),
                "12:30:AA",
            ),
            ex("twilio-api-key", format!("SK{}", hx(32)), "SKIP_TESTS=1"),
            assign(
                "twilio-auth-token",
                format!("TWILIO_AUTH_TOKEN={}", hx(32)),
                hx(32),
                "twilio_region = us1",
            ),
            ex(
                "sendgrid-api-token",
                format!("SG.{}.{}", an(22), an(43)),
                "SG.short.value",
            ),
            ex(
                "sendinblue-api-token",
                format!("xkeysib-{}-{}", hx(64), an(16)),
                "xkeysib-",
            ),
            ex(
                "mailgun-private-api-token",
                format!("key-{}", hx(32)),
                "key-value-store",
            ),
            assign(
                "mailgun-key",
                format!("mailgun_pub = pubkey-{}", hx(32)),
                format!("pubkey-{}", hx(32)),
                "mailgun_domain = mg.example.com",
            ),
            ex("mailchimp-api-key", format!("{}-us12", hx(32)), "en-us12"),
            ex(
                "digitalocean-token",
                format!("dop_v1_{}", hx(64)),
                "dop_v1_",
            ),
            ex(
                "databricks-api-token",
                format!("dapi{}", hx(32)),
                "dapi_version",
            ),
            assign(
                "azure-storage-account-key",
                format!("AccountName=a;AccountKey={}==;EndpointSuffix=x", an(86)),
                format!("{}==", an(86)),
                "AccountKey=<key>",
            ),
            assign(
                "azure-sas-signature",
                format!(
                    "https://a.blob.core.windows.net/c?sv=2020&sig={}%3D",
                    an(43)
                ),
                format!("{}%3D", an(43)),
                "sig=abc",
            ),
            ex(
                "azure-ad-client-secret",
                format!("{}5Q~{}", an(3), an(34)),
                "a Q~ b",
            ),
            ex("heroku-api-key-v2", format!("HRKU-AA{}", an(58)), "HRKU-AA"),
            assign(
                "heroku-api-key",
                format!(
                    "HEROKU_API_KEY={}-{}-{}-{}-{}",
                    hx(8),
                    hx(4),
                    hx(4),
                    hx(4),
                    hx(12)
                ),
                format!("{}-{}-{}-{}-{}", hx(8), hx(4), hx(4), hx(4), hx(12)),
                "request_id=5b8ed411-fa64-4d35-db41-d94e5efaf89f",
            ),
            ex("flyio-access-token", format!("fo1_{}", an(43)), "fo1_short"),
            ex("supabase-token", format!("sbp_{}", hx(40)), "sbp_short"),
            ex(
                "planetscale-token",
                format!("pscale_tkn_{}", an(43)),
                "pscale_tkn_",
            ),
            ex(
                "cloudflare-origin-ca-key",
                format!("v1.0-{}-{}", hx(24), hx(146)),
                "v1.0-beta",
            ),
            assign(
                "cloudflare-api-token",
                format!("CLOUDFLARE_API_TOKEN={}", an(40)),
                an(40),
                "cloudflare_zone = example.com",
            ),
            ex("netlify-token", format!("nfp_{}", an(36)), "nfp_"),
            assign(
                "netlify-access-token",
                format!("NETLIFY_AUTH_TOKEN={}", an(43)),
                an(43),
                "netlify_site = docs",
            ),
            ex("vercel-token", format!("vcp_{}", an(40)), "vcp_"),
            assign(
                "vercel-legacy-token",
                format!("VERCEL_TOKEN={}", an(24)),
                an(24),
                "vercel_project = web",
            ),
            ex("alibaba-access-key-id", format!("LTAI{}", an(20)), "LTAI"),
            ex("yandex-key", format!("AQVN{}", an(36)), "AQVN"),
            ex(
                "atlassian-api-token",
                format!("ATATT3{}", an(186)),
                "ATATT3short",
            ),
            assign(
                "atlassian-legacy-token",
                format!("JIRA_API_TOKEN={}", an(24)),
                an(24),
                "jira_project = CORE",
            ),
            ex("doppler-token", format!("dp.pt.{}", al(43)), "dp.pt.short"),
            ex(
                "vault-service-token",
                format!("hvs.{}", an(95)),
                "hvs.short",
            ),
            assign(
                "vault-legacy-token",
                format!("VAULT_TOKEN=s.{}", an(24)),
                format!("s.{}", an(24)),
                "vault_addr = https://vault:8200",
            ),
            ex(
                "terraform-cloud-token",
                format!("{}.atlasv1.{}", lw(14), an(67)),
                "x.atlasv1.y",
            ),
            ex("linear-api-key", format!("lin_api_{}", al(40)), "lin_api_"),
            ex(
                "linear-oauth-token",
                format!("lin_oauth_{}", hx(64)),
                "lin_oauth_",
            ),
            assign(
                "linear-client-secret",
                format!("LINEAR_CLIENT_SECRET={}", hx(32)),
                hx(32),
                "linear_team = core",
            ),
            ex(
                "postman-api-token",
                format!("PMAK-{}-{}", hx(24), hx(34)),
                "PMAK-",
            ),
            ex("pulumi-api-token", format!("pul-{}", hx(40)), "pul-request"),
            ex("grafana-api-key", format!("eyJrIjoi{}", an(80)), "eyJrIjoi"),
            ex(
                "grafana-cloud-token",
                format!("glc_{}", an(40)),
                "glc_short",
            ),
            ex(
                "grafana-service-account-token",
                format!("glsa_{}_{}", an(32), hx(8)),
                "glsa_",
            ),
            ex("new-relic-key", format!("NRAK-{}", up(27)), "NRAK-"),
            ex("new-relic-license-key", format!("{}NRAL", hx(36)), "NRAL"),
            assign(
                "datadog-key",
                format!("DD_API_KEY={}", hx(32)),
                hx(32),
                "datadog_site = datadoghq.eu",
            ),
            ex("sentry-user-token", format!("sntryu_{}", hx(64)), "sntryu_"),
            ex(
                "sentry-org-token",
                format!("sntrys_eyJpYXQiO{}_{}", an(80), an(43)),
                "sntrys_",
            ),
            assign(
                "sentry-access-token",
                format!("SENTRY_AUTH_TOKEN={}", hx(64)),
                hx(64),
                "sentry_dsn_env = prod",
            ),
            ex(
                "dropbox-short-lived-token",
                format!("sl.{}", an(140)),
                "sl.short",
            ),
            ex(
                "dropbox-long-lived-token",
                format!("{}AAAAAAAAAA{}", an(11), an(43)),
                "AAAAAAAAAA",
            ),
            ex(
                "notion-api-token",
                format!("ntn_{}{}", "12345678901", an(35)),
                "ntn_",
            ),
            ex(
                "airtable-pat",
                format!("pat{}.{}", an(14), hx(64)),
                "pattern.match",
            ),
            ex(
                "dynatrace-api-token",
                format!("dt0c01.{}.{}", up(24), an(64)),
                "dt0c01.",
            ),
            ex("sourcegraph-token", format!("sgp_{}", hx(40)), "sgp_"),
            ex(
                "snyk-token",
                format!("snyk_uat.{}.{}.{}", &HX[..8], an(30), an(30)),
                "snyk_uat",
            ),
            ex("sonar-token", format!("squ_{}", hx(40)), "squ_"),
            ex("prefect-api-token", format!("pnu_{}", an(36)), "pnu_"),
            ex("readme-api-token", format!("rdme_{}", lw(70)), "rdme_"),
            ex(
                "one-password-secret-key",
                format!("A3-{}-{}-{}-{}-{}", up(6), up(11), up(5), up(5), up(5)),
                "A3-paper",
            ),
            ex(
                "one-password-service-token",
                format!("ops_eyJ{}", an(260)),
                "ops_eyJ",
            ),
            ex(
                "age-secret-key",
                format!(
                    "AGE-SECRET-KEY-1{}",
                    r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
                ),
                "AGE-SECRET-KEY-1",
            ),
            ex("facebook-access-token", format!("EAAC{}", an(120)), "EAAC"),
            ex(
                "octopus-deploy-api-key",
                format!("API-{}", up(26)),
                "API-VERSION",
            ),
            ex("clickhouse-cloud-key", format!("4b1d{}", an(38)), "4b1d"),
            ex(
                "harness-api-key",
                format!("pat.{}.{}.{}", an(22), an(24), an(20)),
                "pat.value",
            ),
            ex(
                "jwt",
                format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", an(40), an(43)),
                "eyJ.eyJ.x",
            ),
            assign(
                "bearer-token",
                format!("Authorization: Bearer {}", al(40)),
                al(40),
                "Bearer authentication-scheme-description",
            ),
            assign(
                "basic-auth-header",
                format!("Authorization: Basic {}=", an(31)),
                format!("{}=", an(31)),
                "Authorization: Basic realm",
            ),
            assign(
                "url-password",
                "postgres://app:hunter2x@db:5432/app".into(),
                "hunter2x".into(),
                "postgres://user:password@localhost/app",
            ),
            assign(
                "password-hash",
                "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\n".into(),
                "$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/".into(),
                "echo \"$1$2\" costs $5$ or $6",
            ),
            assign(
                "generic-password",
                format!("DB_PASSWORD={}", an(14)),
                an(14),
                "password = getPassword()",
            ),
            assign(
                "generic-secret",
                format!("client_secret: \"{}\"", al(28)),
                al(28),
                "const apiKey = process.env.API_KEY;",
            ),
        ]
    }

    #[test]
    fn every_rule_compiles_and_has_a_true_and_a_false_positive() {
        let ex = examples();
        let redactor = Redactor::with_env(Vec::<(String, String)>::new());
        for (i, rule) in RULES.iter().enumerate() {
            assert!(
                regex::bytes::Regex::new(&full_pattern(rule)).is_ok(),
                "{}",
                rule.id
            );
            assert!(
                rule.keywords.iter().all(|k| *k == k.to_ascii_lowercase()),
                "{}",
                rule.id
            );
            let Some((_, text, secret, fp)) = ex.iter().find(|e| e.0 == rule.id) else {
                panic!("rule `{}` has no example", rule.id);
            };
            let got: Vec<&str> = rule_matches(i, text).map(|(s, e)| &text[s..e]).collect();
            assert_eq!(got, [secret.as_str()], "rule `{}` on {text:?}", rule.id);
            // Through the whole redactor: the secret goes, counted once.
            let mut counts = Counts::new();
            let out = redactor.redact(text, &mut counts);
            assert!(!out.contains(secret.as_str()), "{}: {out}", rule.id);
            assert_eq!(counts.values().sum::<usize>(), 1, "{}: {counts:?}", rule.id);
            assert_eq!(
                rule_matches(i, fp).count(),
                0,
                "rule `{}` fired on {fp:?}",
                rule.id
            );
        }
        let ids: std::collections::BTreeSet<&str> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len(), "rule ids are unique");
        assert!(RULES.len() >= 100);
    }
}
