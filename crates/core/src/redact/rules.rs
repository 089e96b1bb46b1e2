//! The table of provider token formats: each rule names the literals that can start it (the
//! prefilter's keys), a regex for the whole token and how to validate a candidate. Prefixes,
//! lengths and character sets follow the providers' documented formats, cross-checked against
//! gitleaks' and detect-secrets' rule sets.

/// Extra validation for a regex match beyond its shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Check {
    /// The shape is specific enough; only the placeholder filter applies.
    Shape,
    /// The random part (after `body_from` bytes) must reach this entropy in bits per byte.
    Entropy(f64),
    /// GitHub / npm style: a valid CRC32 tail proves the token; otherwise the body must look
    /// random enough (documentation examples carry no valid checksum).
    CrcTail,
    /// Mixed-case or digits plus letters, with this entropy: formats whose charset is common
    /// in ordinary identifiers (`sk-…`, `hf_…`).
    Varied(f64),
    /// Upper case, lower case and digits (or a long hex run), with this entropy: formats
    /// whose prefix also starts ordinary slugs (`sk-circle-bounce-1`).
    Mixed(f64),
    /// Base64 whose decoded head names a private key (`LS0tLS1CRUdJTi…`).
    Base64PrivateKey,
}

/// One provider token format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleSpec {
    /// Stable id reported in findings (`github-pat`).
    pub id: &'static str,
    /// Literals (ASCII case-insensitive) whose presence makes the rule worth running.
    pub literals: &'static [&'static str],
    /// The token's shape; group 1, if present, is the secret, else the whole match.
    pub pattern: &'static str,
    /// How many bytes before the literal a match can start.
    pub back: usize,
    /// Longest match, in bytes, counted from the literal.
    pub max_len: usize,
    /// Leading bytes of the secret left visible as a vendor hint (at most 4).
    pub keep: usize,
    /// Validation of the candidate.
    pub check: Check,
    /// Bytes of the secret that form the fixed prefix (skipped by entropy checks).
    pub body_from: usize,
}

const fn rule(
    id: &'static str,
    literals: &'static [&'static str],
    pattern: &'static str,
    max_len: usize,
) -> RuleSpec {
    RuleSpec {
        id,
        literals,
        pattern,
        back: 0,
        max_len,
        keep: 0,
        check: Check::Shape,
        body_from: 0,
    }
}

impl RuleSpec {
    const fn keep(mut self, n: usize) -> Self {
        self.keep = n;
        self
    }
    const fn back(mut self, n: usize) -> Self {
        self.back = n;
        self
    }
    const fn check(mut self, check: Check, body_from: usize) -> Self {
        self.check = check;
        self.body_from = body_from;
        self
    }
}

/// Every provider rule. Order matters only for which id a finding reports when two rules
/// match the same text (the earlier one wins).
pub(crate) const RULES: &[RuleSpec] = &[
    // GitHub
    rule("github-token", &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], r"\bgh[pousr]_[A-Za-z0-9]{36,251}\b", 260)
        .keep(4)
        .check(Check::CrcTail, 4),
    rule("github-fine-grained-pat", &["github_pat_"], r"\bgithub_pat_[A-Za-z0-9_]{60,255}", 270)
        .check(Check::Entropy(3.5), 11),
    // GitLab
    rule(
        "gitlab-token",
        &["glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-"],
        r"\bgl(?:pat|dt|ptt|rt|cbt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{2}\.[0-9a-z]{7,9})?",
        340,
    )
    .check(Check::Entropy(3.0), 5),
    rule("gitlab-runner-registration", &["gr1348941"], r"\bGR1348941[A-Za-z0-9_-]{20,}", 80),
    // Package registries
    rule("npm-token", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b", 60).keep(4).check(Check::CrcTail, 4),
    rule("pypi-token", &["pypi-ag"], r"\bpypi-Ag[A-Za-z0-9_-]{50,}", 4096),
    rule("docker-hub-token", &["dckr_pat_", "dckr_oat_"], r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", 120)
        .check(Check::Entropy(3.0), 9),
    rule("rubygems-token", &["rubygems_"], r"\brubygems_[a-f0-9]{48}\b", 80),
    rule("nuget-key", &["oy2"], r"\boy2[a-z0-9]{43}\b", 60).check(Check::Entropy(3.5), 3),
    rule("crates-io-token", &["cio"], r"\bcio[A-Za-z0-9]{32}\b", 60).check(Check::Mixed(3.8), 3),
    rule("clojars-token", &["clojars_"], r"(?i)\bCLOJARS_[a-z0-9]{60}\b", 80),
    rule("artifactory-key", &["akcp", "cmvmd"], r"\b(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b", 80)
        .check(Check::Entropy(4.0), 4),
    // Cloud
    rule("aws-access-key-id", &["akia", "asia", "abia", "acca", "a3t"], r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b", 24)
        .keep(4)
        .check(Check::Entropy(2.8), 4),
    rule("aws-bedrock-key", &["absk"], r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}", 290),
    rule("gcp-api-key", &["aiza"], r"\bAIza[A-Za-z0-9_-]{35}", 50).keep(4).check(Check::Entropy(3.5), 4),
    rule("gcp-oauth-client-secret", &["gocspx-"], r"\bGOCSPX-[A-Za-z0-9_-]{28}", 50),
    rule("google-oauth-access-token", &["ya29."], r"\bya29\.[A-Za-z0-9_-]{30,}", 4096)
        .keep(4)
        .check(Check::Entropy(3.5), 5),
    rule("google-oauth-refresh-token", &["1//0"], r"1//0[A-Za-z0-9_-]{40,}", 1024).check(Check::Varied(3.5), 4),
    rule(
        "azure-ad-client-secret",
        &["q~"],
        r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{30,36})(?:[^A-Za-z0-9_~.-]|$)",
        45,
    )
    .back(5)
    .check(Check::Entropy(3.0), 0),
    rule("azure-sas-signature", &["sig="], r"\bsig=([A-Za-z0-9%+/=]{30,120})", 130).check(Check::Entropy(3.5), 0),
    rule("azure-devops-pat", &["jqqj99"], r"\b[A-Za-z0-9]{52}JQQJ99[A-Za-z0-9]{3}AZDO[A-Za-z0-9]{4}\b", 20)
        .back(52),
    rule("alibaba-access-key-id", &["ltai"], r"\bLTAI[A-Za-z0-9]{20}\b", 30).check(Check::Varied(3.5), 4),
    rule("tencent-secret-id", &["akid"], r"\bAKID[A-Za-z0-9]{32}\b", 40).check(Check::Varied(3.5), 4),
    rule("digitalocean-token", &["dop_v1_", "doo_v1_", "dor_v1_"], r"\bdo[opr]_v1_[a-f0-9]{64}\b", 80),
    rule("vault-token", &["hvs.", "hvb."], r"\bhv[sb]\.[A-Za-z0-9_-]{90,400}", 420),
    rule("terraform-cloud-token", &["atlasv1"], r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", 90).back(15),
    rule("doppler-token", &["dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."], r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}\b", 60),
    rule("pulumi-token", &["pul-"], r"\bpul-[a-f0-9]{40}\b", 50),
    rule("flyio-token", &["fo1_", "fm1a_", "fm1r_", "fm2_"], r"\b(?:fo1_[A-Za-z0-9_-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3})", 4096),
    rule("heroku-token", &["hrku-"], r"\bHRKU-[A-Za-z0-9_-]{58,}", 80),
    rule("cloudflare-origin-ca-key", &["v1.0-"], r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", 180),
    rule("supabase-token", &["sbp_", "sb_secret_"], r"\b(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{30,})", 80),
    rule("planetscale-token", &["pscale_"], r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}", 80),
    rule("tailscale-key", &["tskey-"], r"\btskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}", 120),
    rule("databricks-token", &["dapi"], r"\bdapi[a-f0-9]{32}(?:-\d)?\b", 40).check(Check::Entropy(3.0), 4),
    rule("dynatrace-token", &["dt0c01."], r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b", 100),
    rule("new-relic-key", &["nrak-", "nrii-", "nrjs-"], r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,40}\b", 50).check(Check::Entropy(3.2), 5),
    rule("sentry-token", &["sntrys_", "sntryu_"], r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}", 600),
    rule("grafana-token", &["glsa_", "glc_", "eyjrijoi"], r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})", 420),
    // Chat and messaging
    rule("slack-token", &["xox"], r"\bxox(?:[abcdeoprs]|e\.xox[bp])-[0-9A-Za-z-]{10,300}", 320).check(Check::Entropy(3.0), 5),
    rule("slack-app-token", &["xapp-"], r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", 200),
    rule("slack-webhook", &["hooks.slack.com"], r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}", 200).back(8),
    rule("discord-webhook", &["/api/webhooks/"], r"https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}", 200).back(40),
    rule(
        "discord-bot-token",
        &["discord", ".run(", "bot "],
        r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
        200,
    )
    .back(80)
    .check(Check::Varied(3.5), 0),
    // Telegram tokens also appear glued to `bot` in API URLs (`/bot123456:AA…/sendMessage`).
    rule("telegram-bot-token", &[":aa"], r"(?:^|[^0-9])(\d{8,10}:AA[A-Za-z0-9_-]{33})(?:[^A-Za-z0-9_-]|$)", 40)
        .back(11)
        .check(Check::Entropy(3.5), 0),
    rule("teams-webhook", &["webhook.office.com"], r"https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{60,}", 300).back(40),
    // Payments and commerce
    rule(
        "stripe-key",
        &["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"],
        r"\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}",
        260,
    )
    .check(Check::Entropy(3.2), 8),
    rule("stripe-webhook-secret", &["whsec_"], r"\bwhsec_[A-Za-z0-9+/=]{24,}", 120).check(Check::Entropy(3.2), 6),
    rule(
        "twilio-api-key",
        &["sk0", "sk1", "sk2", "sk3", "sk4", "sk5", "sk6", "sk7", "sk8", "sk9", "ska", "skb", "skc", "skd", "ske", "skf"],
        r"\bSK[0-9a-fA-F]{32}\b",
        40,
    )
    .check(Check::Entropy(3.2), 2),
    rule("square-token", &["sq0atp-", "sq0csp-", "eaaa"], r"\b(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}|EAAA[A-Za-z0-9_-]{60})\b", 80)
        .check(Check::Entropy(3.5), 4),
    rule("facebook-access-token", &["eaac", "eaam"], r"\bEAA[CM][A-Za-z0-9]{100,}", 1024).check(Check::Entropy(4.0), 4),
    rule("shopify-token", &["shpat_", "shpss_", "shpca_", "shppa_"], r"\bshp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}\b", 40),
    rule("sendgrid-key", &["sg."], r"\bSG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}", 80).keep(3),
    rule("mailgun-key", &["key-"], r"\bkey-[0-9a-f]{32}\b", 40).check(Check::Entropy(3.2), 4),
    rule("mailchimp-key", &["-us"], r"\b[0-9a-f]{32}-us\d{1,2}\b", 10).back(32).check(Check::Entropy(3.2), 0),
    rule("brevo-key", &["xkeysib-", "xsmtpsib-"], r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", 100),
    rule("postman-key", &["pmak-"], r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", 70),
    // AI providers
    rule(
        "anthropic-key",
        &["sk-ant-"],
        r"\bsk-ant-(?:api|admin|sid|oat|ort)\d\d-[A-Za-z0-9_-]{32,200}",
        220,
    ),
    rule("openai-style-key", &["sk-"], r"\bsk-(?:[a-z0-9]{2,10}-){0,2}[A-Za-z0-9_-]{20,200}", 220)
        .check(Check::Mixed(3.3), 3),
    rule("huggingface-token", &["hf_", "api_org_"], r"\b(?:hf|api_org)_[A-Za-z0-9]{30,40}\b", 50).keep(3).check(Check::Varied(3.5), 3),
    rule("groq-key", &["gsk_"], r"\bgsk_[A-Za-z0-9]{48,56}\b", 60).keep(4).check(Check::Mixed(3.5), 4),
    rule("replicate-token", &["r8_"], r"\br8_[A-Za-z0-9]{36,40}\b", 45).keep(3).check(Check::Mixed(3.5), 3),
    rule("perplexity-key", &["pplx-"], r"\bpplx-[A-Za-z0-9]{40,56}\b", 60).check(Check::Mixed(3.5), 5),
    rule("xai-key", &["xai-"], r"\bxai-[A-Za-z0-9]{70,90}\b", 100).check(Check::Mixed(3.5), 4),
    rule("langsmith-key", &["lsv2_"], r"\blsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}\b", 60),
    rule("pinecone-key", &["pcsk_"], r"\bpcsk_[A-Za-z0-9_]{40,}", 120),
    rule("nvidia-key", &["nvapi-"], r"\bnvapi-[A-Za-z0-9_-]{60,70}", 80),
    rule("tavily-key", &["tvly-"], r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}\b", 80).check(Check::Mixed(3.5), 5),
    rule("fireworks-key", &["fw_"], r"\bfw_[A-Za-z0-9]{20,40}\b", 50).check(Check::Mixed(3.8), 3),
    // Developer tools
    rule("atlassian-token", &["atatt3", "atctt3"], r"\bAT[AC]TT3[A-Za-z0-9_=-]{150,}", 400),
    rule("bitbucket-app-password", &["atbb"], r"\bATBB[A-Za-z0-9]{32}\b", 40).check(Check::Mixed(3.5), 4),
    rule("linear-key", &["lin_api_", "lin_oauth_"], r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", 60),
    rule("notion-token", &["ntn_", "secret_"], r"\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b", 60)
        .check(Check::Varied(3.5), 4),
    rule("airtable-pat", &["pat"], r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", 90),
    rule("figma-token", &["figd_"], r"\bfigd_[A-Za-z0-9_-]{40}", 50),
    rule("1password-token", &["ops_eyj"], r"\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}", 4096),
    rule("age-secret-key", &["age-secret-key-1"], r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 80),
    rule("mapbox-secret-token", &["sk.eyj"], r"\bsk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}", 400),
    // Passwords given to a command line: `sshpass -p …`, `docker login -u x -p …`,
    // `mysql -u root -p…` (mysql's value is glued to `-p`; a space there means "prompt").
    rule(
        "cli-password-option",
        &["sshpass", "login", "mysql"],
        r#"(?:\b(?:sshpass|login)\b[^\n]{0,80}?\s-p[ \t]*['"]?|\bmysql(?:dump|admin)?\b[^\n]{0,80}?\s-p['"]?)([^\s'"$-][^\s'"]{3,})"#,
        220,
    ),
    rule(
        "powershell-plaintext-password",
        &["convertto-securestring"],
        r#"ConvertTo-SecureString\s+(?:-String\s+)?["']([^"'\n]{4,200})["']"#,
        260,
    ),
    // Generic structured secrets
    rule(
        "jwt",
        &["eyj"],
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)?",
        8192,
    )
    .check(Check::Entropy(3.5), 0),
    rule("base64-private-key", &["ls0tls1crudjti"], r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,}", 65536)
        .check(Check::Base64PrivateKey, 0),
];
