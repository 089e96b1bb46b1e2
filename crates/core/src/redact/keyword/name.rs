//! Whether a name announces a secret: `password`, `DB_PASS`, `apiKey` do; `tokenizer`,
//! `password_hash`, `max_tokens` do not. Names are split into words and judged by word lists.

/// What kind of secret a name announces; passwords may be short and human-made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    Password,
    Token,
}

/// Words that by themselves name a secret.
pub(super) const SECRET_WORDS: &[(&str, NameKind)] = &[
    ("password", NameKind::Password),
    ("passwd", NameKind::Password),
    ("pwd", NameKind::Password),
    ("pass", NameKind::Password),
    ("passphrase", NameKind::Password),
    ("passcode", NameKind::Password),
    ("storepass", NameKind::Password),
    ("keypass", NameKind::Password),
    ("requirepass", NameKind::Password),
    ("masterauth", NameKind::Password),
    ("secret", NameKind::Token),
    ("token", NameKind::Token),
    ("apikey", NameKind::Token),
    ("apitoken", NameKind::Token),
    ("authtoken", NameKind::Token),
    ("accesstoken", NameKind::Token),
    ("accesskey", NameKind::Token),
    ("secretkey", NameKind::Token),
    ("privatekey", NameKind::Token),
    ("clientsecret", NameKind::Token),
    ("credential", NameKind::Token),
    ("credentials", NameKind::Token),
    ("creds", NameKind::Token),
    ("auth", NameKind::Token),
];

/// Words that turn a following `key` into a secret (`api_key`, `AccountKey`, `signing-key`).
const KEY_QUALIFIERS: &[&str] = &[
    "admin",
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "master",
    "client",
    "app",
    "application",
    "license",
    "licence",
    "account",
    "service",
    "webhook",
    "sas",
    "storage",
    "shared",
    "session",
    "subscription",
    "consumer",
    "hmac",
    "jwt",
    "crypto",
    "cipher",
    "aes",
    "deploy",
    "write",
    "root",
    "cookie",
    "ingest",
    "ingestion",
    "search",
    "server",
    "management",
    "primary",
    "secondary",
    "function",
    "mgmt",
    "rest",
    "sdk",
    "dev",
    "prod",
    "live",
    "test",
    "bot",
    "decryption",
    "secure",
    "security",
    "user",
    "personal",
    "team",
    "org",
    "project",
    "admin",
];

/// Words after the secret word that make the name describe something else
/// (`password_hash`, `token_count`, `secret_name`, `api_key_id`).
pub(super) const TAIL_REJECT: &[&str] = &[
    "profile",
    "profiles",
    "login",
    "logout",
    "connect",
    "link",
    "links",
    "flow",
    "flows",
    "providers",
    "methods",
    "modes",
    "scheme",
    "schemes",
    "state",
    "catalog",
    "answer",
    "start",
    "redirect",
    "screen",
    "hash",
    "hashes",
    "sha",
    "sha1",
    "sha256",
    "sha512",
    "md5",
    "checksum",
    "crc",
    "crc32",
    "bcrypt",
    "argon2",
    "scrypt",
    "pbkdf2",
    "hashed",
    "digest",
    "count",
    "counts",
    "type",
    "types",
    "length",
    "len",
    "size",
    "url",
    "uri",
    "urls",
    "endpoint",
    "host",
    "name",
    "names",
    "file",
    "filename",
    "files",
    "path",
    "paths",
    "dir",
    "field",
    "fields",
    "id",
    "ids",
    "arn",
    "expiry",
    "expires",
    "expiration",
    "expire",
    "exp",
    "expired",
    "ttl",
    "lifetime",
    "limit",
    "limits",
    "policy",
    "pattern",
    "regex",
    "prompt",
    "label",
    "placeholder",
    "hint",
    "env",
    "var",
    "format",
    "kind",
    "mode",
    "provider",
    "source",
    "store",
    "manager",
    "helper",
    "strategy",
    "validator",
    "validation",
    "required",
    "enabled",
    "enable",
    "disabled",
    "location",
    "version",
    "index",
    "usage",
    "budget",
    "max",
    "min",
    "rotation",
    "created",
    "updated",
    "at",
    "method",
    "status",
    "header",
    "param",
    "parameter",
    "ref",
    "prefix",
    "suffix",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "algorithm",
    "alg",
    "encoding",
    "timeout",
    "interval",
    "input",
    "column",
    "error",
    "errors",
    "message",
    "msg",
    "strength",
    "rules",
    "class",
    "icon",
    "visible",
    "toggle",
    "form",
    "button",
    "btn",
    "link",
    "page",
    "view",
    "dialog",
    "handler",
    "callback",
    "fn",
    "func",
    "options",
    "settings",
    "estimate",
    "counter",
    "cost",
    "quota",
    "window",
    "stream",
    "used",
    "remaining",
    "output",
    "generator",
    "reset",
    "mask",
    "masked",
    "vault",
    "ssm",
    "secretsmanager",
    "sm",
    "template",
    "config",
    "schema",
    "cache",
    "storage",
    "table",
    "list",
    "map",
    "dict",
    "spec",
    "len",
    "bytes",
    "bits",
    "salt",
    "iterations",
    "rounds",
    "cost",
    "last4",
    "fingerprint",
    "lookup",
    "set",
    "check",
    "verify",
    "valid",
    "match",
    "matches",
    "request",
    "response",
];

/// Words before the secret word that make the name a function or a counter
/// (`get_token`, `max_tokens`, `next_token`).
const HEAD_REJECT: &[&str] = &[
    "get",
    "hashed",
    "fetch",
    "read",
    "load",
    "validate",
    "verify",
    "check",
    "generate",
    "gen",
    "is",
    "has",
    "should",
    "require",
    "requires",
    "parse",
    "decode",
    "encode",
    "hash",
    "compare",
    "forgot",
    "forget",
    "show",
    "hide",
    "toggle",
    "max",
    "min",
    "num",
    "count",
    "total",
    "input",
    "output",
    "prompt",
    "completion",
    "next",
    "page",
    "continuation",
    "cursor",
    "sync",
    "csrf",
    "xsrf",
    "no",
    "use",
    "uses",
    "using",
    "with",
    "without",
    "missing",
    "invalid",
    "bad",
    "expired",
    "revoke",
    "rotate",
    "create",
    "delete",
    "remove",
    "list",
    "public",
    "pub",
    "cancellation",
    "cancel",
    "lexer",
    "parser",
    "eof",
    "end",
    "start",
];

/// A byte that can appear in a configuration or variable name.
pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Splits a name into lowercase words at `_ . -`, digits-to-letters and camelCase humps
/// (`X-Api-Key` → x, api, key; `slackBotToken` → slack, bot, token; `APIKey` → api, key).
pub(crate) fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let b = name.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = if i > 0 { b[i - 1] } else { b'_' };
        let next = b.get(i + 1).copied().unwrap_or(b'_');
        let hump = c.is_ascii_uppercase()
            && (prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next.is_ascii_lowercase()));
        if hump && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.push(char::from(c.to_ascii_lowercase()));
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Whether a name announces a secret, and which kind. `prev_word` is a word separated from
/// the name by a space (prose: "API key").
///
/// The last secret word decides what follows it (`password_reset_token` names a token,
/// `token_count` a number); words before the first one must not make it a verb or a counter.
pub(crate) fn classify_name(name: &str, prev_word: Option<&str>) -> Option<NameKind> {
    let words = split_words(name);
    let prev_word = prev_word.map(str::to_ascii_lowercase);
    // (index where the secret phrase starts, index of its last word, kind)
    let mut first: Option<usize> = None;
    let mut last: Option<(usize, NameKind)> = None;
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches(|c: char| c.is_ascii_digit());
        if let Some(&(_, kind)) = SECRET_WORDS.iter().find(|(s, _)| *s == w) {
            first.get_or_insert(i);
            last = Some((i, kind));
        } else if let Some((kind, head)) = compound(w) {
            // `webhooksecret`, `dbpassword`: the glued head must not be a verb or counter.
            if HEAD_REJECT.contains(&head) {
                return None;
            }
            first.get_or_insert(i);
            last = Some((i, kind));
        } else if w == "key" {
            let before = if i > 0 {
                Some(words[i - 1].as_str())
            } else {
                prev_word.as_deref()
            };
            if before.is_some_and(|q| KEY_QUALIFIERS.contains(&q)) {
                first.get_or_insert(i.saturating_sub(1));
                last = Some((i, NameKind::Token));
            }
        }
    }
    let (at, kind) = last?;
    let head = first.unwrap_or(at);
    if words[at + 1..]
        .iter()
        .any(|w| TAIL_REJECT.contains(&w.as_str()))
    {
        return None;
    }
    if words[..head]
        .iter()
        .any(|w| HEAD_REJECT.contains(&w.as_str()))
    {
        return None;
    }
    Some(kind)
}

/// Secret words that also name a secret when glued to another word in lowercase names
/// (`webhooksecret`, `dbpassword`, `slacktoken`). `pass`, `key` and `auth` are left out: they
/// end too many ordinary words (`bypass`, `monkey`, `oauth`).
const COMPOUND_SUFFIXES: &[(&str, NameKind)] = &[
    ("password", NameKind::Password),
    ("passwd", NameKind::Password),
    ("passphrase", NameKind::Password),
    ("secret", NameKind::Token),
    ("token", NameKind::Token),
    ("apikey", NameKind::Token),
];

/// A lowercase word made of another word plus a secret word, with that head word.
fn compound(word: &str) -> Option<(NameKind, &str)> {
    COMPOUND_SUFFIXES.iter().find_map(|&(suffix, kind)| {
        let head = word.strip_suffix(suffix)?;
        (head.len() >= 2).then_some((kind, head))
    })
}
