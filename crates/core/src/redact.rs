//! Secret redaction: one compiled rule set that finds provider tokens, private keys, JWTs,
//! authorization values, URL credentials and keyword-anchored secrets in text or JSON and
//! replaces them with [`REDACTED`], plus UTF-8-safe truncation.
//!
//! Clean text is nearly free: a single Aho-Corasick pass over the text looks for the literals
//! that can start a secret (token prefixes such as `ghp_`, keywords such as `password`), and
//! only the detectors tied to a literal that occurs run, each on a bounded window around it.
//!
//! Entry points: [`Redactor::redact`] for text (multi-line PEM blocks included),
//! [`Redactor::redact_json`] / [`Redactor::redact_json_line`] for JSON (decoded strings are
//! redacted and re-encoded, so the output always parses), [`Redactor::lines`] for input read
//! one line at a time, [`Redactor::find`] for a report of rule ids and byte ranges, and
//! [`truncate`]. A secret is replaced by [`REDACTED`]; a vendor prefix of at most four
//! characters (`ghp_`, `AKIA`, `AIza`) may stay visible.

mod checksum;
mod entropy;
mod json;
mod keyword;
mod rules;
mod structured;
mod truncate;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::Regex;
use serde_json::Value;

use crate::redact::entropy::{Classes, is_placeholder, shannon_entropy};
use crate::redact::rules::{Check, RULES, RuleSpec};

pub use crate::redact::truncate::{DEFAULT_TRUNCATE_BYTES, truncate};

/// What replaces each secret.
pub const REDACTED: &str = "[REDACTED]";

/// Rule id of keyword-anchored assignments (`password = …`).
const KEYWORD_RULE: &str = "keyword-assignment";
/// Rule id of private-key blocks.
const PRIVATE_KEY_RULE: &str = "private-key";
/// Rule id of authorization header values.
const AUTHORIZATION_RULE: &str = "authorization-header";
/// Rule id of credentials inside URLs.
const URL_RULE: &str = "url-credentials";
/// Rule id of `-u user:pass` options.
const USER_OPTION_RULE: &str = "user-password-option";
/// Rule id of an AWS secret access key found beside its key id.
const AWS_SECRET_RULE: &str = "aws-secret-access-key";

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Id of the rule that found it (`github-token`, `private-key`, `keyword-assignment`, …).
    pub rule: &'static str,
    /// Byte range of the secret in the text.
    pub range: Range<usize>,
    /// Leading bytes of the range left visible as a vendor hint (`ghp_`); at most 4.
    pub kept: usize,
}

/// Which detector a prefilter literal wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detector {
    Token(usize),
    Keyword,
    PrivateKey,
    Authorization,
    UrlCredentials,
    UserOption,
}

impl Detector {
    /// Detectors whose findings yield to a provider rule's finding over the same bytes.
    fn is_generic(self) -> bool {
        !matches!(self, Self::Token(_) | Self::PrivateKey)
    }
}

/// A provider rule whose regex is compiled the first time its literal turns up: compiling all
/// of them takes milliseconds, and most texts wake none or one of them.
#[derive(Debug)]
struct CompiledRule {
    spec: &'static RuleSpec,
    regex: OnceLock<Regex>,
}

impl CompiledRule {
    #[expect(
        clippy::expect_used,
        reason = "the built-in patterns are fixed and covered by tests"
    )]
    fn regex(&self) -> &Regex {
        self.regex.get_or_init(|| {
            Regex::new(self.spec.pattern).expect("built-in redaction pattern compiles")
        })
    }
}

/// A compiled secret-redaction rule set. Compile once ([`Redactor::shared`]) and reuse.
#[derive(Debug)]
pub struct Redactor {
    prefilter: AhoCorasick,
    /// For each prefilter pattern, the detectors to run where it occurs.
    detectors: Vec<Vec<Detector>>,
    rules: Vec<CompiledRule>,
    aws_secret: Regex,
    /// Index of the Discord bot token rule, run by the dotted-token pass.
    discord: Option<usize>,
}

static SHARED: LazyLock<Redactor> = LazyLock::new(Redactor::new);

impl Default for Redactor {
    fn default() -> Self {
        Self::new()
    }
}

/// A finding plus whether a provider rule outranks it.
struct Candidate {
    finding: Finding,
    generic: bool,
}

/// Per-call bookkeeping: for each detector, the offset before which its work is done, so a
/// name like `SECRET_TOKEN` (two keyword hits) or a block is examined once.
struct Progress {
    rules: [usize; RULES.len()],
    keyword: usize,
    private_key: usize,
    authorization: usize,
    url: usize,
    user_option: usize,
}

impl Progress {
    fn new() -> Box<Self> {
        Box::new(Self {
            rules: [0; RULES.len()],
            keyword: 0,
            private_key: 0,
            authorization: 0,
            url: 0,
            user_option: 0,
        })
    }
}

impl Redactor {
    /// Compiles the built-in rule set.
    #[expect(
        clippy::expect_used,
        reason = "the built-in patterns are fixed and covered by tests"
    )]
    pub fn new() -> Self {
        let mut wanted: Vec<(String, Detector)> = Vec::new();
        let mut rules = Vec::with_capacity(RULES.len());
        for (idx, spec) in RULES.iter().enumerate() {
            rules.push(CompiledRule {
                spec,
                regex: OnceLock::new(),
            });
            for lit in spec.literals {
                wanted.push((lit.to_ascii_lowercase(), Detector::Token(idx)));
            }
        }
        let groups: [(&[&str], Detector); 5] = [
            (keyword::LITERALS, Detector::Keyword),
            (structured::PEM_LITERALS, Detector::PrivateKey),
            (structured::AUTH_LITERALS, Detector::Authorization),
            (structured::URL_LITERALS, Detector::UrlCredentials),
            (structured::USER_OPTION_LITERALS, Detector::UserOption),
        ];
        for (lits, det) in groups {
            wanted.extend(lits.iter().map(|l| (l.to_ascii_lowercase(), det)));
        }
        let mut literals: Vec<String> = wanted.iter().map(|(l, _)| l.clone()).collect();
        literals.sort();
        literals.dedup();
        // The prefilter reports leftmost-longest, non-overlapping matches, so a literal also
        // wakes every detector of a shorter literal inside it (`api_key` → `key`).
        let detectors = literals
            .iter()
            .map(|lit| {
                let mut dets: Vec<Detector> = wanted
                    .iter()
                    .filter(|(l, _)| lit.contains(l.as_str()))
                    .map(|&(_, d)| d)
                    .collect();
                dets.dedup();
                dets
            })
            .collect();
        let prefilter = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&literals)
            .expect("redaction prefilter builds");
        let aws_secret =
            Regex::new(r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)")
                .expect("aws secret pattern compiles");
        let discord = RULES.iter().position(|r| r.id == "discord-bot-token");
        Self {
            prefilter,
            detectors,
            rules,
            aws_secret,
            discord,
        }
    }

    /// The process-wide rule set, compiled on first use.
    pub fn shared() -> &'static Redactor {
        &SHARED
    }

    /// Returns `text` with every secret replaced; borrows when nothing was found.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let findings = self.find(text);
        if findings.is_empty() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(apply(text, &findings))
    }

    /// Every secret in `text`, in order of position. A generic finding (keyword assignment,
    /// authorization value, URL credentials) inside a provider rule's finding is dropped in
    /// its favour; other overlaps are all reported, and [`Redactor::redact`] merges them.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let mut found: Vec<Candidate> = Vec::new();
        let mut progress: Option<Box<Progress>> = None;
        for m in self.prefilter.find_iter(text) {
            let p = progress.get_or_insert_with(Progress::new);
            for &det in &self.detectors[m.pattern().as_usize()] {
                self.run(det, text, m.start(), p, &mut found);
            }
        }
        self.find_dotted_tokens(text, &mut progress, &mut found);
        settle(found)
    }

    /// Discord bot tokens have no literal prefix (they start with the base64 of a numeric
    /// id) but a fixed shape: `id.XXXXXX.hmac` with a six-character middle part. Each `.` is
    /// found with `memchr`, and only a `.` followed by six token bytes and another `.` runs
    /// the rule, so this costs little even on text full of periods.
    fn find_dotted_tokens(
        &self,
        text: &str,
        progress: &mut Option<Box<Progress>>,
        found: &mut Vec<Candidate>,
    ) {
        let Some(idx) = self.discord else { return };
        for dot in dotted_candidates(text) {
            let p = progress.get_or_insert_with(Progress::new);
            self.run_rule(idx, text, dot, p, found);
        }
    }

    fn run(
        &self,
        det: Detector,
        text: &str,
        hit: usize,
        p: &mut Progress,
        out: &mut Vec<Candidate>,
    ) {
        if let Detector::Token(idx) = det {
            self.run_rule(idx, text, hit, p, out);
            return;
        }
        let generic = det.is_generic();
        let mut push = |rule: &'static str, range: Range<usize>, kept: usize| {
            out.push(Candidate {
                finding: Finding { rule, range, kept },
                generic,
            });
        };
        match det {
            Detector::Token(_) => {}
            Detector::Keyword => {
                if hit < p.keyword {
                    return;
                }
                let (assignment, consumed) = keyword::scan(text, hit);
                p.keyword = consumed;
                if let Some(a) = assignment {
                    push(KEYWORD_RULE, a.value, 0);
                }
            }
            Detector::PrivateKey => {
                if hit < p.private_key {
                    return;
                }
                if let Some(r) = structured::private_key_block(text, hit) {
                    p.private_key = r.end;
                    push(PRIVATE_KEY_RULE, r, 0);
                }
            }
            Detector::Authorization => {
                if hit < p.authorization {
                    return;
                }
                if let Some(r) = structured::authorization_value(text, hit) {
                    p.authorization = r.end;
                    push(AUTHORIZATION_RULE, r, 0);
                }
            }
            Detector::UrlCredentials => {
                if hit < p.url {
                    return;
                }
                if let Some(r) = structured::url_credentials(text, hit) {
                    p.url = r.end;
                    push(URL_RULE, r, 0);
                }
            }
            Detector::UserOption => {
                if hit < p.user_option {
                    return;
                }
                if let Some(r) = structured::user_option_value(text, hit) {
                    p.user_option = r.end;
                    push(USER_OPTION_RULE, r, 0);
                }
            }
        }
    }

    /// Runs one provider rule on the window around a literal hit.
    fn run_rule(
        &self,
        idx: usize,
        text: &str,
        hit: usize,
        p: &mut Progress,
        out: &mut Vec<Candidate>,
    ) {
        if hit < p.rules[idx] {
            return;
        }
        let rule = &self.rules[idx];
        let spec = rule.spec;
        let start = floor_boundary(text, hit.saturating_sub(spec.back));
        let end = ceil_boundary(text, (hit + spec.max_len).min(text.len()));
        let hay = &text[..end];
        let regex = rule.regex();
        let has_group = regex.captures_len() > 1;
        let mut from = start;
        while from <= hit {
            let (whole, secret) = if has_group {
                let Some(caps) = regex.captures_at(hay, from) else {
                    return;
                };
                let (Some(whole), Some(secret)) = (caps.get(0), caps.get(1)) else {
                    return;
                };
                (whole.range(), secret.range())
            } else {
                let Some(m) = regex.find_at(hay, from) else {
                    return;
                };
                (m.range(), m.range())
            };
            if whole.start > hit {
                return;
            }
            if whole.end > hit && secret.end > secret.start {
                p.rules[idx] = whole.end;
                if passes(spec, &text[secret.clone()]) {
                    out.push(Candidate {
                        finding: Finding {
                            rule: spec.id,
                            range: secret.clone(),
                            kept: spec.keep,
                        },
                        generic: false,
                    });
                    if spec.id == "aws-access-key-id" {
                        self.aws_companion(text, secret.end, out);
                    }
                }
                return;
            }
            from = whole.end.max(from + 1);
            while !text.is_char_boundary(from) {
                from += 1;
            }
        }
    }

    /// An AWS secret access key on the same line as its key id (`AKIA…,wJalr…` in a
    /// credentials CSV, `aws configure set` pairs).
    fn aws_companion(&self, text: &str, after: usize, out: &mut Vec<Candidate>) {
        let line_end = text[after..].find('\n').map_or(text.len(), |p| after + p);
        let end = ceil_boundary(text, line_end.min(after + AWS_COMPANION_WINDOW));
        let Some(caps) = self.aws_secret.captures(&text[after..end]) else {
            return;
        };
        let Some(m) = caps.get(1) else { return };
        let v = m.as_str();
        let c = Classes::of(v);
        if c.lower > 0
            && c.upper > 0
            && c.digit > 0
            && shannon_entropy(v) >= 4.0
            && !is_placeholder(v)
        {
            out.push(Candidate {
                finding: Finding {
                    rule: AWS_SECRET_RULE,
                    range: after + m.start()..after + m.end(),
                    kept: 0,
                },
                generic: false,
            });
        }
    }

    /// Redacts every string (keys and values) inside a JSON value in place, so the result is
    /// always valid JSON. A string under a secret-naming key (`"password": "…"`) is judged
    /// as that key's value even when it holds no keyword itself.
    pub fn redact_json(&self, value: &mut Value) {
        json::redact_value(self, value);
    }

    /// Redacts one line: as JSON when it parses as JSON (each string token is decoded,
    /// redacted and re-encoded in place, so layout and key order are kept and the result is
    /// valid JSON), else as text.
    pub fn redact_json_line(&self, line: &str) -> String {
        json::redact_line(self, line)
    }

    /// A line-by-line redactor that remembers an open private-key block across lines, for
    /// input processed one line at a time.
    pub fn lines(&self) -> LineRedactor<'_> {
        LineRedactor {
            redactor: self,
            in_private_key: false,
        }
    }

    /// Whether any prefilter literal occurs in `text` (if not, nothing can be redacted).
    fn may_contain_secret(&self, text: &str) -> bool {
        self.prefilter.is_match(text) || dotted_candidates(text).next().is_some()
    }
}

/// Positions of `.` that open a Discord-shaped `.XXXXXX.` middle part (see
/// [`Redactor::find_dotted_tokens`]).
fn dotted_candidates(text: &str) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    text.match_indices('.')
        .map(|(dot, _)| dot)
        .filter(move |&dot| {
            let close = dot + 1 + DISCORD_MIDDLE_BYTES;
            dot >= DISCORD_ID_MIN_BYTES
                && b.get(close) == Some(&b'.')
                && b[dot - 1].is_ascii_alphanumeric()
                && b[dot + 1..close]
                    .iter()
                    .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        })
}

/// Shortest base64 id before the first dot of a Discord bot token (17-digit ids).
const DISCORD_ID_MIN_BYTES: usize = 23;
/// Length of the middle (timestamp) part of a Discord bot token.
const DISCORD_MIDDLE_BYTES: usize = 6;

/// How far past an AWS key id we look for its secret on the same line, in bytes.
const AWS_COMPANION_WINDOW: usize = 300;

/// Validation shared by every provider rule: placeholder filter plus the rule's own check.
fn passes(spec: &RuleSpec, secret: &str) -> bool {
    let body = secret
        .get(spec.body_from.min(secret.len())..)
        .unwrap_or(secret);
    if is_placeholder(body) || is_placeholder(secret) {
        return false;
    }
    match spec.check {
        Check::Shape => true,
        Check::Entropy(min) => shannon_entropy(body) >= min,
        Check::CrcTail => {
            checksum::has_valid_crc_tail(secret) || shannon_entropy(body) >= CRC_FALLBACK_ENTROPY
        }
        Check::Varied(min) => {
            let c = Classes::of(body);
            let varied = (c.digit > 0 && c.letters() > 0) || (c.lower > 0 && c.upper > 0);
            varied && shannon_entropy(body) >= min
        }
        Check::Mixed(min) => {
            let c = Classes::of(body);
            // The random part after any `or-v1-` style segments.
            let tail = body.rsplit('-').next().unwrap_or(body);
            let hex = tail.len() >= 32 && tail.bytes().all(|b| b.is_ascii_hexdigit());
            let mixed = c.upper > 0 && c.lower > 0 && c.digit > 0;
            (mixed || hex) && shannon_entropy(body) >= min
        }
        Check::Base64PrivateKey => {
            structured::decode_base64(&secret[..secret.len().min(80) / 4 * 4])
                .is_some_and(|head| String::from_utf8_lossy(&head).contains("PRIVATE KEY"))
        }
    }
}

/// Entropy a GitHub/npm-style body needs when its checksum does not verify: random base62
/// bodies of 36 characters score about 4.7, hand-typed examples far less.
const CRC_FALLBACK_ENTROPY: f64 = 4.0;

/// Drops generic findings that a provider rule already covers (so `TOKEN=ghp_…` keeps its
/// `ghp_` hint), then sorts by position.
fn settle(mut found: Vec<Candidate>) -> Vec<Finding> {
    if found.len() > 1 {
        let specific: Vec<Range<usize>> = found
            .iter()
            .filter(|c| !c.generic)
            .map(|c| c.finding.range.clone())
            .collect();
        found.retain(|c| {
            !c.generic
                || !specific
                    .iter()
                    .any(|s| s.start <= c.finding.range.start && c.finding.range.end <= s.end)
        });
    }
    let mut out: Vec<Finding> = found.into_iter().map(|c| c.finding).collect();
    out.sort_by_key(|f| (f.range.start, f.range.end));
    out.dedup_by(|a, b| a.range == b.range);
    out
}

/// Replaces the findings' ranges (minus kept prefixes) with [`REDACTED`], merging overlaps.
fn apply(text: &str, findings: &[Finding]) -> String {
    let mut cuts: Vec<Range<usize>> = findings
        .iter()
        .map(|f| {
            let kept = f.kept.min(MAX_KEPT_BYTES).min(f.range.len());
            floor_boundary(text, f.range.start + kept)..f.range.end
        })
        .filter(|r| !r.is_empty())
        .collect();
    cuts.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < cuts.len() {
        let start = cuts[i].start.max(copied);
        let mut end = cuts[i].end;
        i += 1;
        while i < cuts.len() && cuts[i].start <= end {
            end = end.max(cuts[i].end);
            i += 1;
        }
        if end <= copied {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// The most bytes of a secret a vendor hint may keep visible.
const MAX_KEPT_BYTES: usize = 4;

fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Redacts input one line at a time (for `copilot-bridge redact` and log streams) while
/// remembering a private-key block opened on an earlier line, whose body lines carry no
/// marker of their own.
#[derive(Debug)]
pub struct LineRedactor<'r> {
    redactor: &'r Redactor,
    in_private_key: bool,
}

impl LineRedactor<'_> {
    /// Redacts one line (without its line ending).
    pub fn redact_line<'a>(&mut self, line: &'a str) -> Cow<'a, str> {
        if self.in_private_key {
            let Some(end) = line.find("-----END") else {
                return Cow::Owned(REDACTED.to_owned());
            };
            self.in_private_key = false;
            let close = line[end + 8..]
                .find("-----")
                .map_or(line.len(), |p| end + 8 + p + 5);
            let rest = self.redactor.redact(&line[close..]);
            return Cow::Owned(format!("{REDACTED}{rest}"));
        }
        let out = self.redactor.redact(line);
        if let Some(begin) = line.rfind("-----BEGIN") {
            let opens_key = line[begin..].to_ascii_uppercase().contains("PRIVATE KEY");
            if opens_key && !line[begin..].contains("-----END") {
                self.in_private_key = true;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
