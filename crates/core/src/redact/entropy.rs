//! Cheap statistics over a candidate secret: Shannon entropy, character classes, and the
//! placeholder filter that keeps `${GITHUB_TOKEN}`, `<your-token>`, `xxxxxxxx` or `changeme`
//! (and documentation examples such as AWS's `…EXAMPLE` keys) from being redacted.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

/// Shannon entropy of `s` in bits per byte (0 for the empty string).
pub(crate) fn shannon_entropy(s: &str) -> f64 {
    let bytes = s.as_bytes();
    let Ok(len) = u32::try_from(bytes.len()) else {
        return 8.0;
    };
    if len == 0 {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let len = f64::from(len);
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

/// How many of each character class a candidate holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Classes {
    pub lower: usize,
    pub upper: usize,
    pub digit: usize,
    pub other: usize,
}

impl Classes {
    pub(crate) fn of(s: &str) -> Self {
        let mut c = Self::default();
        for b in s.bytes() {
            match b {
                b'a'..=b'z' => c.lower += 1,
                b'A'..=b'Z' => c.upper += 1,
                b'0'..=b'9' => c.digit += 1,
                _ => c.other += 1,
            }
        }
        c
    }

    /// Number of distinct classes present (0–4).
    pub(crate) fn kinds(self) -> usize {
        [self.lower, self.upper, self.digit, self.other]
            .iter()
            .filter(|&&n| n > 0)
            .count()
    }

    pub(crate) fn letters(self) -> usize {
        self.lower + self.upper
    }
}

/// Words that mark a value as a stand-in, an example or documentation rather than a secret.
/// Matched case-insensitively anywhere in the candidate; each is long or odd enough that a
/// random token contains it with negligible probability.
const PLACEHOLDER_FRAGMENTS: &[&str] = &[
    "example",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "your_",
    "your-",
    "yourtoken",
    "yourkey",
    "yourpass",
    "yoursecret",
    "dummy",
    "redacted",
    "xxxx",
    "****",
    "\u{2022}\u{2022}",
    "...",
    "\u{2026}",
    "replace_me",
    "replaceme",
    "insert_",
    "insert-",
    "fixme",
    "notreal",
    "not_real",
    "not-a-real",
    "not_a_real",
    "fake",
    "sample",
    "secret_here",
    "token_here",
    "key_here",
    "_here>",
];

/// Whole values (compared case-insensitively) that are never secrets.
const PLACEHOLDER_WORDS: &[&str] = &[
    "null",
    "nil",
    "none",
    "true",
    "false",
    "undefined",
    "empty",
    "string",
    "str",
    "required",
    "optional",
    "secret",
    "secrets",
    "password",
    "passwd",
    "token",
    "hidden",
    "default",
    "unset",
    "n/a",
    "tbd",
    "todo",
    "test",
    "testing",
    "admin",
    "root",
    "user",
    "guest",
    "pass",
    "mypassword",
    "mysecret",
    "supersecret",
    "password123",
    "secret123",
    // Example passwords that documentation and tutorials use.
    "p@ssw0rd",
    "passw0rd",
    "p@ssword",
    "pa55word",
    "pa$$word",
    "letmein",
    "qwerty",
    "qwerty123",
    "abc123",
    "admin123",
    "welcome1",
    "hunter2",
    "s3cr3t",
    "s3cret",
    "secr3t",
    "foobar",
    "changeit",
    "password1",
    "test123",
    "testtest",
    "demo123",
    "topsecret",
    "secretkey",
    "secret_key",
    "mysecretpassword",
    "mysecretkey",
    "<secret>",
    "<token>",
    "<password>",
];

/// Secrets published in vendors' documentation as examples; exact matches only.
const KNOWN_EXAMPLES: &[&str] = &[
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "pk_test_TYooMQauvdEDq54NiTphI7jx",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    "whsec_test_secret",
    "xoxb-not-a-real-token-this-will-not-work",
    // RFC 7617's and MDN's Basic authentication examples.
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    "YWxhZGRpbjpvcGVuc2VzYW1l",
    // Public values that scanners' stop-word lists carry because they appear everywhere.
    "6fe4476ee5a1832882e326b506d14126",
    "014df517-39d1-4453-b7b3-9930c563627c",
    // jwt.io's default token.
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
];

/// True when `value` is a stand-in (variable reference, template, mask, example) rather than
/// a literal secret.
pub(crate) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || KNOWN_EXAMPLES.contains(&v) {
        return true;
    }
    if v.len() <= LONGEST_PLACEHOLDER_WORD
        && PLACEHOLDER_WORDS.iter().any(|w| w.eq_ignore_ascii_case(v))
    {
        return true;
    }
    FRAGMENTS.is_match(v) || is_template(v) || is_degenerate(v) || is_word_with_counter(v)
}

/// Longest entry of `PLACEHOLDER_WORDS` and `STAND_IN_WORDS`, in bytes.
const LONGEST_PLACEHOLDER_WORD: usize = 16;

/// `PLACEHOLDER_FRAGMENTS` as one case-insensitive automaton: one pass per candidate.
static FRAGMENTS: LazyLock<AhoCorasick> = LazyLock::new(build_fragments);

#[expect(
    clippy::expect_used,
    reason = "a fixed list of short literals always builds"
)]
fn build_fragments() -> AhoCorasick {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(PLACEHOLDER_FRAGMENTS)
        .expect("placeholder fragments build")
}

/// Words that test fixtures and tutorials number to make stand-in values (`token123`,
/// `secret1`, `mypassword2024`).
const STAND_IN_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "pass",
    "test",
    "key",
    "apikey",
    "api",
    "admin",
    "user",
    "demo",
    "example",
    "sample",
    "dummy",
    "abc",
    "foo",
    "bar",
    "qwerty",
    "letmein",
    "welcome",
    "default",
    "mytoken",
    "mysecret",
    "mypassword",
    "mypass",
    "mykey",
    "changeme",
    "hello",
    "root",
    "guest",
    "pw",
    "pwd",
];

/// A stand-in word followed only by digits and punctuation (`token123`, `password1!`).
fn is_word_with_counter(v: &str) -> bool {
    let word = v.trim_end_matches(|c: char| {
        c.is_ascii_digit() || matches!(c, '!' | '_' | '-' | '.' | '#' | '@')
    });
    word.len() < v.len() && STAND_IN_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// Variable references and template expressions: `${X}`, `$X`, `$(cmd)`, `{{ x }}`, `%X%`,
/// `%(x)s`, `<x>`, `#{x}`, `{x}`, `@X@`.
fn is_template(v: &str) -> bool {
    let b = v.as_bytes();
    let first = b[0];
    let last = b[b.len() - 1];
    match first {
        b'$' => b
            .get(1)
            .is_some_and(|&c| c == b'{' || c == b'(' || c == b'_' || c.is_ascii_alphabetic()),
        b'<' => last == b'>',
        // `%VAR%` and `%(name)s`, not percent-encoding (`%3Fab…`).
        b'%' => {
            b.get(1) == Some(&b'(')
                || (last == b'%'
                    && b.len() > 2
                    && b[1..b.len() - 1]
                        .iter()
                        .all(|c| c.is_ascii_alphanumeric() || *c == b'_'))
        }
        b'@' => last == b'@',
        b'{' => last == b'}',
        b'#' => b.get(1) == Some(&b'{'),
        _ => v.contains("{{") || v.contains("${") || v.contains("#{") || has_printf_slot(v),
    }
}

/// A `%s`/`%d` slot that starts a word (`Bearer %s`, `key-%s`), not `…S%s+…` inside random text.
fn has_printf_slot(v: &str) -> bool {
    v.match_indices('%').any(|(i, _)| {
        let b = v.as_bytes();
        matches!(b.get(i + 1), Some(b's' | b'd'))
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + 2).is_none_or(|c| !c.is_ascii_alphanumeric())
    })
}

/// Values with almost no variety: `aaaaaaaa`, `abababab`, `12345678`, `ABCDEFGHIJKLMNOP…`.
/// A long run of consecutive characters (`abcdefgh`, `0123456789`) marks a format example.
fn is_degenerate(v: &str) -> bool {
    let b = v.as_bytes();
    let mut seen = [false; 256];
    let mut distinct = 0usize;
    for &c in b {
        if !seen[usize::from(c)] {
            seen[usize::from(c)] = true;
            distinct += 1;
        }
    }
    if b.len() >= 6 && distinct <= 3 {
        return true;
    }
    longest_sequential_run(b) >= (b.len() / 3).max(7) || mostly_sequential(b)
}

/// Documentation examples walk the alphabet (`AbCdEfGh…`, `1234567890`): at least 40% of
/// neighbouring characters step by one, ignoring case, against about 3% in random text.
fn mostly_sequential(b: &[u8]) -> bool {
    if b.len() < 12 {
        return false;
    }
    let steps = b
        .windows(2)
        .filter(|w| {
            let (x, y) = (w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase());
            x.is_ascii_alphanumeric() && y.is_ascii_alphanumeric() && y == x.wrapping_add(1)
        })
        .count();
    steps * 5 >= (b.len() - 1) * 2
}

/// Identifiers and words joined by `_ - .` (`API_KEY_HERE`, `my-secret-token`,
/// `client_secret`): each part is a word in lower, upper or title case, and there are no
/// digits. Random tokens mix case inside their parts.
pub(crate) fn looks_like_words(v: &str) -> bool {
    let b = v.as_bytes();
    if !b
        .iter()
        .all(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'-' | b'.' | b' '))
    {
        return false;
    }
    v.split(['_', '-', '.', ' '])
        .filter(|p| !p.is_empty())
        .all(|part| {
            let rest = &part.as_bytes()[1..];
            rest.iter().all(u8::is_ascii_lowercase) || rest.iter().all(u8::is_ascii_uppercase)
        })
}

/// Longest run of bytes that each step by +1 or -1 from the previous one (`abcd`, `4321`).
fn longest_sequential_run(b: &[u8]) -> usize {
    let (mut best, mut up, mut down) = (usize::from(!b.is_empty()), 1usize, 1usize);
    for w in b.windows(2) {
        let (x, y) = (i16::from(w[0]), i16::from(w[1]));
        up = if y == x + 1 && w[1].is_ascii_alphanumeric() {
            up + 1
        } else {
            1
        };
        down = if y == x - 1 && w[1].is_ascii_alphanumeric() {
            down + 1
        } else {
            1
        };
        best = best.max(up).max(down);
    }
    best
}

/// A random-looking token: long enough, varied enough and not a placeholder.
pub(crate) fn is_random_token(s: &str, min_len: usize, min_entropy: f64) -> bool {
    s.len() >= min_len && shannon_entropy(s) >= min_entropy && !is_placeholder(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_uniform_and_random_strings() {
        assert!(shannon_entropy("").abs() < f64::EPSILON);
        assert!(shannon_entropy("aaaaaaa").abs() < f64::EPSILON);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-9);
        assert!(shannon_entropy("q7Lm2vRz9XkP4sTb8NwYc3Hd") > 4.0);
    }

    #[test]
    fn placeholders_are_recognised() {
        for p in [
            "${GITHUB_TOKEN}",
            "$DB_PASSWORD",
            "$(cat /run/secret)",
            "{{ vault_password }}",
            "<your-token>",
            "<redacted>",
            "xxxxxxxx",
            "XXXXXXXXXXXXXXXXXXXX",
            "********",
            "changeme",
            "CHANGEME",
            "your_api_key_here",
            "%DB_PASS%",
            "%(password)s",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "12345678",
            "null",
            "None",
            "token123",
            "Password1!",
            "secret_2024",
        ] {
            assert!(is_placeholder(p), "{p} should be a placeholder");
        }
    }

    #[test]
    fn random_values_are_not_placeholders() {
        for s in [
            "q7Lm2vRz9XkP4sTb8NwYc3Hd",
            "hunter2!",
            "Tr0ub4dor&3",
            "ghp_R4nd0mB0dyW1thN0Sequ3nc3sAtAllXyZ9",
            "wq8E-9fZ_kL2mN4pQ7rS",
        ] {
            assert!(!is_placeholder(s), "{s} should not be a placeholder");
        }
    }

    #[test]
    fn placeholder_word_lists_fit_the_length_bound() {
        for w in PLACEHOLDER_WORDS.iter().chain(STAND_IN_WORDS) {
            assert!(w.len() <= LONGEST_PLACEHOLDER_WORD, "{w}");
        }
    }

    #[test]
    fn classes_count_each_kind() {
        let c = Classes::of("aB3$");
        assert_eq!(c.kinds(), 4);
        assert_eq!(Classes::of("abc").kinds(), 1);
    }
}
