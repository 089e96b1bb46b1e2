//! Keyword-anchored assignments: a name that says "secret" (`password`, `DB_PASS`, `apiKey`,
//! `client_secret`, `X-Auth-Token`, …) bound to a literal value in env files, YAML, JSON, TOML,
//! code, command lines or prose. The name is split into words so that `tokenizer`,
//! `password_hash` or `max_tokens` are not mistaken for secrets, and the value must survive
//! the placeholder, code-expression and entropy filters.

use std::ops::Range;

pub(crate) use self::name::{NameKind, classify_name};
use self::name::{SECRET_WORDS, TAIL_REJECT, is_name_byte};
pub(crate) use self::value::{Binding, value_is_secret};
use self::value::{MAX_VALUE_BYTES, looks_like_code};

/// Which words make a name a secret's name.
mod name;
/// Which values bound to such a name are secrets.
mod value;

/// Literals that trigger this detector (matched ASCII case-insensitively).
pub(crate) const LITERALS: &[&str] = &["pass", "pwd", "secret", "token", "key", "auth", "cred"];

/// One detected assignment: the byte range of the secret value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub value: Range<usize>,
    pub kind: NameKind,
}

/// Looks for an assignment whose name contains the keyword hit at `hit`. Returns it (if any)
/// and the offset up to which later hits belong to the same name and need no second look.
pub(crate) fn scan(text: &str, hit: usize) -> (Option<Assignment>, usize) {
    let (found, consumed) = scan_forward(text, hit);
    if found.is_some() {
        return (found, consumed);
    }
    (reverse_value(text, hit), consumed)
}

/// Prose and comments that name the secret after giving it: `// Xk9… is the password`,
/// `# 8f3e… was my token`.
fn reverse_value(text: &str, hit: usize) -> Option<Assignment> {
    let b = text.as_bytes();
    let word_len = b[hit..]
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    let kind = SECRET_WORDS
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(&text[hit..hit + word_len]))
        .map(|&(_, kind)| kind)?;
    if hit > 0 && is_name_byte(b[hit - 1]) {
        return None;
    }
    let mut before = text[..hit].trim_end();
    for article in [" the", " my", " our", " your", " a", " an"] {
        if let Some(rest) = before.strip_suffix(article) {
            before = rest;
            break;
        }
    }
    let before = [" is", " was"]
        .iter()
        .find_map(|verb| before.strip_suffix(verb))?
        .trim_end();
    let token_start = before.rfind(char::is_whitespace).map_or(0, |p| p + 1);
    let mut start = token_start;
    let token = before[token_start..].trim_start_matches(['/', '#', ';', '*', '-', '"', '\'', '`']);
    start += before[token_start..].len() - token.len();
    let token = token.trim_end_matches(['"', '\'', '`', ',']);
    let value = start..start + token.len();
    value_is_secret(token, kind, Binding::Weak, false).then_some(Assignment { value, kind })
}

fn scan_forward(text: &str, hit: usize) -> (Option<Assignment>, usize) {
    let b = text.as_bytes();
    let mut start = hit;
    while start > 0 && hit - start < MAX_NAME_BYTES && is_name_byte(b[start - 1]) {
        start -= 1;
    }
    let mut end = hit;
    while end < b.len() && end - start < MAX_NAME_BYTES && is_name_byte(b[end]) {
        end += 1;
    }
    let consumed = end;
    let raw = &text[start..end];
    let flag = raw.starts_with('-');
    let trimmed = raw.trim_end_matches(['.', '-']);
    let name_end = start + trimmed.len();
    let name = trimmed.trim_start_matches('-');
    let before = start.checked_sub(1).map(|i| b[i]);
    let in_query = matches!(before, Some(b'?' | b'&'));
    let ctx = if before == Some(b'<') {
        Framing::XmlTag
    } else if flag {
        Framing::Flag
    } else if b[..start]
        .iter()
        .rev()
        .take(4)
        .find(|c| !matches!(c, b'`' | b' '))
        == Some(&b'|')
    {
        Framing::TableCell
    } else if matches!(before, Some(b'"' | b'\'' | b'`')) {
        Framing::Quoted
    } else {
        Framing::Bare
    };
    let Some((value_at, binding)) = find_binding(b, name_end, ctx, name) else {
        return (None, consumed);
    };
    let Some((value, quoted)) = read_value(text, value_at, in_query) else {
        return (None, consumed);
    };
    // Naming is checked after the cheaper syntax: most keyword hits bind no value.
    let Some(kind) = classify_name(name, previous_word(text, start)) else {
        return (None, consumed);
    };
    // `<password>…</password>`: without the closing tag this is prose in angle brackets.
    if ctx == Framing::XmlTag
        && b[..value_at].trim_ascii_end().ends_with(b">")
        && !text[value.end..].trim_start().starts_with("</")
    {
        return (None, consumed);
    }
    let v = &text[value.clone()];
    // `NAME=value` in env files and shells: the bare value is literal text, not code.
    let env_style = b.get(name_end) == Some(&b'=')
        && name.bytes().any(|c| c.is_ascii_uppercase())
        && !name.bytes().any(|c| c.is_ascii_lowercase());
    if value_is_secret(
        v,
        kind,
        binding,
        quoted || (env_style && !looks_like_code(v)),
    ) {
        let consumed = consumed.max(value.end);
        return (Some(Assignment { value, kind }), consumed);
    }
    // A type annotation (`api_key: str = "…"`, `const TOKEN: &str = "…"`) sits between the
    // name and the value: look once more after the `=` that follows it.
    if !quoted
        && let Some(at) = annotated_value_start(b, name_end, value.end)
        && let Some((value, quoted)) = read_value(text, at, in_query)
        && value_is_secret(&text[value.clone()], kind, Binding::Strong, quoted)
    {
        let consumed = consumed.max(value.end);
        return (Some(Assignment { value, kind }), consumed);
    }
    (None, consumed)
}

/// Longest type annotation we skip between `name:` and `= value`, in bytes.
const MAX_ANNOTATION_BYTES: usize = 60;

/// Where the value starts in `name: Type = value` or `var name Type = value`: the single `=`
/// that follows the type on the same line.
fn annotated_value_start(b: &[u8], name_end: usize, after: usize) -> Option<usize> {
    let limit = (name_end + MAX_ANNOTATION_BYTES).min(b.len());
    let mut i = after.max(name_end);
    while i < limit {
        match b[i] {
            b'\n' | b'"' | b'\'' | b';' | b',' | b'(' => return None,
            b'=' if !matches!(b.get(i + 1), Some(b'=' | b'>' | b'~'))
                && !matches!(b[i - 1], b'!' | b'=' | b'<' | b'>' | b':') =>
            {
                return Some(skip_blanks(b, i + 1));
            }
            _ => i += 1,
        }
    }
    None
}

/// Longest name we look at, in bytes: longer runs are data, not names.
const MAX_NAME_BYTES: usize = 80;

/// The word just before `start` when only a single space separates them ("API key").
fn previous_word(text: &str, start: usize) -> Option<&str> {
    let b = text.as_bytes();
    if start < 2 || b[start - 1] != b' ' {
        return None;
    }
    let end = start - 1;
    let mut s = end;
    while s > 0 && end - s < MAX_NAME_BYTES && b[s - 1].is_ascii_alphabetic() {
        s -= 1;
    }
    (s < end).then(|| &text[s..end])
}

/// How a name is framed; it decides which operators bind it to a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// A command-line flag (`--password`).
    Flag,
    /// Inside quotes (`"password": …`, `setenv("TOKEN", …)`).
    Quoted,
    /// An XML element (`<password>…</password>`).
    XmlTag,
    /// A markdown table cell (`| TOKEN | value |`).
    TableCell,
    /// Anything else (`PASSWORD=…`, `token: …`).
    Bare,
}

/// Finds the operator after a name and returns where the value starts.
fn find_binding(b: &[u8], name_end: usize, ctx: Framing, name: &str) -> Option<(usize, Binding)> {
    let mut i = name_end;
    // Closing quotes and brackets of `"password":`, `['token'] =`, `\"key\":`.
    let mut closers = 0;
    while i < b.len() && closers < 3 {
        match b[i] {
            b'"' | b'\'' | b'`' | b']' | b'*' => i += 1,
            b'\\' if matches!(b.get(i + 1), Some(b'"' | b'\'')) => i += 2,
            _ => break,
        }
        closers += 1;
    }
    let after_closers = i;
    let spaces_from = i;
    while i < b.len() && matches!(b[i], b' ' | b'\t') && i - spaces_from < 8 {
        i += 1;
    }
    let had_space = i > spaces_from;
    let rest = &b[i..];
    let strong = |n: usize| Some((skip_blanks(b, i + n), Binding::Strong));
    // Make's `:::=` and `::=`, PHP's `.=`, `??=`, Ruby's `||=`, append `+=`.
    for op in [&b":::="[..], b"::=", b"??=", b"||=", b".=", b"+="] {
        if rest.starts_with(op) {
            return strong(op.len());
        }
    }
    if rest.starts_with(b"::") {
        return None;
    }
    if rest.starts_with(b":=") || rest.starts_with(b"=>") || rest.starts_with(b"?=") {
        return strong(2);
    }
    if rest.starts_with(b"===") {
        return strong(3);
    }
    if rest.starts_with(b"==") || rest.starts_with(b"!=") {
        return strong(2);
    }
    // `io.jsonwebtoken:jjwt` is a Maven coordinate, not `name: value`.
    if rest.starts_with(b":")
        && ctx == Framing::Bare
        && name.contains('.')
        && !had_space
        && !matches!(rest.get(1), Some(b' ' | b'\t' | b'"' | b'\''))
    {
        return None;
    }
    if rest.starts_with(b"=") || rest.starts_with(b":") {
        return strong(1);
    }
    if ctx == Framing::XmlTag && rest.starts_with(b">") {
        // The value may sit on its own line: `<apiToken>\n    value\n</apiToken>`.
        let mut at = i + 1;
        while at < b.len() && b[at].is_ascii_whitespace() && at - i < 16 {
            at += 1;
        }
        return Some((at, Binding::Strong));
    }
    // `setenv("TOKEN", "…")`: a plain name, not one string of a list (`["auth.login", …]`).
    if ctx == Framing::Quoted && closers > 0 && rest.starts_with(b",") && !name.contains('.') {
        let mut at = i + 1;
        while at < b.len() && b[at].is_ascii_whitespace() && at - i < 16 {
            at += 1;
        }
        // `{"name": "API_TOKEN", "value": "…"}`: the value sits under a `value` key.
        for key in [&b"\"value\":"[..], b"\"value\": ", b"'value': "] {
            if b[at..].starts_with(key) {
                return Some((skip_blanks(b, at + key.len()), Binding::Strong));
            }
        }
        return Some((skip_blanks(b, i + 1), Binding::Strong));
    }
    // A CSV row: `apiToken,value,…` (weak: a header row holds words).
    if ctx == Framing::Bare && closers == 0 && !had_space && rest.starts_with(b",") {
        return Some((i + 1, Binding::Weak));
    }
    if ctx == Framing::TableCell && rest.starts_with(b"|") {
        return strong(1);
    }
    if !had_space && after_closers == name_end && rest.starts_with(b"(") {
        let at = skip_blanks(b, i + 1);
        return matches!(b.get(at), Some(b'"' | b'\'' | b'`')).then_some((at, Binding::Strong));
    }
    if closers > 0 && (rest.starts_with(b"value=") || rest.starts_with(b"value =")) {
        let eq = i + rest.iter().position(|&c| c == b'=')?;
        return Some((skip_blanks(b, eq + 1), Binding::Strong));
    }
    if !had_space || closers > 0 {
        return None;
    }
    loose_binding(b, i, ctx, name)
}

/// Space-separated forms: `--password s3cr3t`, `ENV API_TOKEN abc`, `.netrc`'s
/// `password abc`, and prose ("the password is …", "token was …"). `i` is where the text
/// after the name and its spaces starts.
fn loose_binding(b: &[u8], i: usize, ctx: Framing, name: &str) -> Option<(usize, Binding)> {
    let rest = &b[i..];
    let upper_name = name.bytes().any(|c| c.is_ascii_uppercase())
        && !name.bytes().any(|c| c.is_ascii_lowercase());
    if let Some(n) = connector(rest) {
        return Some((skip_blanks(b, i + n), Binding::Weak));
    }
    if ctx == Framing::Flag || upper_name {
        return Some((i, Binding::Weak));
    }
    // A few words of prose between the name and `is`/`:` ("password for the db is …").
    let mut j = i;
    let limit = (i + 40).min(b.len());
    while j < limit && (b[j].is_ascii_alphanumeric() || b[j] == b' ' || b[j] == b'-') {
        if b[j] == b' ' && ends_with_tail_word(&b[i..j]) {
            return None;
        }
        if b[j] == b' '
            && let Some(n) = connector(&b[j + 1..])
        {
            return Some((skip_blanks(b, j + 1 + n), Binding::Weak));
        }
        j += 1;
    }
    if j < limit && b[j] == b':' && b.get(j + 1) == Some(&b' ') && !ends_with_tail_word(&b[i..j]) {
        return Some((skip_blanks(b, j + 1), Binding::Weak));
    }
    Some((i, Binding::Weak))
}

/// Whether the last word of `phrase` makes the name describe something else ("key ID",
/// "token count").
fn ends_with_tail_word(phrase: &[u8]) -> bool {
    let word_start = phrase
        .iter()
        .rposition(|c| *c == b' ' || *c == b'-')
        .map_or(0, |p| p + 1);
    let word = String::from_utf8_lossy(&phrase[word_start..]).to_ascii_lowercase();
    TAIL_REJECT.contains(&word.as_str())
}

/// Prose connectors between a name and its value.
fn connector(rest: &[u8]) -> Option<usize> {
    for word in [&b"is "[..], b"was ", b"are ", b"is: ", b"to "] {
        if rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word) {
            return Some(word.len());
        }
    }
    None
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// Reads the value at `at`: a quoted string (also `\"…\"` inside JSON text) or a bare run.
/// Returns its byte range and whether it was quoted.
fn read_value(text: &str, at: usize, in_query: bool) -> Option<(Range<usize>, bool)> {
    let b = text.as_bytes();
    let mut i = at;
    // Markdown emphasis around a label: `**Password:** value`.
    if b[i.min(b.len())..].starts_with(b"**") || b[i.min(b.len())..].starts_with(b"__") {
        i = skip_blanks(b, i + 2);
    }
    // A YAML block scalar (`token: |` or `token: >-`): the value is on the next line.
    if matches!(b.get(i), Some(b'|' | b'>')) {
        let header = b[i + 1..]
            .iter()
            .take_while(|c| matches!(c, b'-' | b'+' | b' ' | b'\t' | b'\r'))
            .count();
        if b.get(i + 1 + header) == Some(&b'\n') {
            i = skip_blanks(b, i + 2 + header);
        }
    }
    let (quote, escaped_quote) = match (b.get(i), b.get(i + 1)) {
        (Some(&q @ (b'"' | b'\'' | b'`')), _) => {
            i += 1;
            (Some(q), false)
        }
        (Some(b'\\'), Some(&q @ (b'"' | b'\''))) => {
            i += 2;
            (Some(q), true)
        }
        _ => (None, false),
    };
    // A value in parentheses in prose: "a new token (8f3e…) for CI".
    if quote.is_none()
        && b.get(i) == Some(&b'(')
        && !matches!(b.get(i + 1), Some(b'"' | b'\'' | b')'))
    {
        i += 1;
    }
    let start = i;
    let limit = (start + MAX_VALUE_BYTES).min(b.len());
    if let Some(q) = quote {
        while i < limit {
            match b[i] {
                b'\n' => break,
                b'\\' if escaped_quote && b.get(i + 1) == Some(&q) => {
                    return Some((start..i, true));
                }
                b'\\' => i += 2,
                c if c == q && !escaped_quote => return Some((start..i, true)),
                _ => i += 1,
            }
        }
        // No closing quote on this line: take the bare run instead.
        i = start;
    }
    while i < limit {
        let c = b[i];
        let stop = c.is_ascii_whitespace()
            || matches!(
                c,
                b'"' | b'\'' | b'`' | b',' | b';' | b')' | b']' | b'}' | b'<' | b'>' | b'\\' | b'|'
            )
            || (in_query && matches!(c, b'&' | b'#'));
        if stop {
            break;
        }
        i += 1;
    }
    let mut end = i.min(b.len());
    // A command applied to a quoted argument (`ConvertTo-SecureString "…"`, `decrypt '…'`):
    // the argument is the value.
    if end > start
        && b.get(end) == Some(&b' ')
        && matches!(b.get(end + 1), Some(b'"' | b'\''))
        && b[start..end]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        return read_value(text, end + 1, in_query);
    }
    // Prose ends sentences with a period; a bare value does not end in one.
    while end > start && matches!(b[end - 1], b'.' | b',' | b':') {
        end -= 1;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (end > start).then_some((start..end, false))
}

#[cfg(test)]
mod tests {
    use super::name::split_words;
    use super::*;

    fn found(text: &str) -> Option<String> {
        let lower = text.to_ascii_lowercase();
        for lit in LITERALS {
            let mut from = 0;
            while let Some(pos) = lower[from..].find(lit) {
                let hit = from + pos;
                if let (Some(a), _) = scan(text, hit) {
                    return Some(text[a.value].to_owned());
                }
                from = hit + 1;
            }
        }
        None
    }

    #[test]
    fn splits_names_into_words() {
        assert_eq!(split_words("X-Api-Key"), ["x", "api", "key"]);
        assert_eq!(split_words("slackBotToken"), ["slack", "bot", "token"]);
        assert_eq!(split_words("APIKey"), ["api", "key"]);
        assert_eq!(
            split_words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(
            split_words("spring.datasource.password"),
            ["spring", "datasource", "password"]
        );
    }

    #[test]
    fn names_that_describe_secrets_are_recognised() {
        for name in [
            "password",
            "DB_PASSWORD",
            "apiKey",
            "X-Api-Key",
            "client_secret",
            "GITHUB_TOKEN",
            "AccountKey",
            "SECRET_KEY_BASE",
            "_authToken",
            "aws_secret_access_key",
            "pwd",
            "NGROK_AUTHTOKEN",
            "new_password",
            "jwtSecret",
            "signing-key",
        ] {
            assert!(classify_name(name, None).is_some(), "{name}");
        }
    }

    #[test]
    fn names_that_only_mention_secrets_are_not() {
        for name in [
            "tokenizer",
            "password_hash",
            "passwordHash",
            "max_tokens",
            "token_count",
            "tokens",
            "secret_name",
            "token_type",
            "author",
            "passport",
            "keyboard",
            "key",
            "primary_key_id",
            "get_token",
            "public_key",
            "bypass",
            "token_url",
            "api_key_id",
            "next_token",
        ] {
            assert!(classify_name(name, None).is_none(), "{name}");
        }
    }

    #[test]
    fn finds_values_in_common_syntaxes() {
        let cases = [
            ("DB_PASSWORD=Xk9mP2vL8q", "Xk9mP2vL8q"),
            ("export API_TOKEN=\"a8f3c9e1b7d24f6a\"", "a8f3c9e1b7d24f6a"),
            ("password: S3cure!Pass#42", "S3cure!Pass#42"),
            (
                "{\"client_secret\": \"q7Lm2vRz9XkP4sTb\"}",
                "q7Lm2vRz9XkP4sTb",
            ),
            ("api_key = 'Zx81LkPq02MnBv7T'", "Zx81LkPq02MnBv7T"),
            ("token := \"Hq4Zt9Lp2Wx7Rm3K\"", "Hq4Zt9Lp2Wx7Rm3K"),
            ("mysql --password Tq8wLz3Kp9 db", "Tq8wLz3Kp9"),
            (
                "the password for the staging db is Vn3kQ8zLw2",
                "Vn3kQ8zLw2",
            ),
            (
                "https://x.test/cb?access_token=Mz81Kq0Lp3Xv9T&state=1",
                "Mz81Kq0Lp3Xv9T",
            ),
            ("<password>Pq7Rz2Lm9Xk</password>", "Pq7Rz2Lm9Xk"),
            (
                "{\"text\": \"{\\\"api_key\\\": \\\"Kx82LmQp03NbVz7Y\\\"}\"}",
                "Kx82LmQp03NbVz7Y",
            ),
            (
                "headers.set('X-Api-Key', 'Hf83KdLq02MzPv6W')",
                "Hf83KdLq02MzPv6W",
            ),
            ("api_key: str = \"Qw83LmZp02XnVb7K\"", "Qw83LmZp02XnVb7K"),
            (
                "const API_TOKEN: &str = \"Tz82KqLp03MxNb6V\";",
                "Tz82KqLp03MxNb6V",
            ),
            (
                "private apiKey: string = 'Rx73JpLq92MzKb5W';",
                "Rx73JpLq92MzKb5W",
            ),
            ("<apiToken>\n    Pq7Rz2Lm9Xk4\n</apiToken>", "Pq7Rz2Lm9Xk4"),
            ("deploy_token: |\n  Wm4Kp9Zs2Lq7", "Wm4Kp9Zs2Lq7"),
            ("API_TOKEN ::= \"Nb8Rt5Hc1Yd6\"", "Nb8Rt5Hc1Yd6"),
            ("$apiToken .= \"Fg0Wm4Kp9Zs2\";", "Fg0Wm4Kp9Zs2"),
            ("var githubToken string = \"Lq7Xv3Nb8Rt5\"", "Lq7Xv3Nb8Rt5"),
            (
                "{\"name\": \"DB_PASSWORD\", \"value\": \"Hc1Yd6Fg0Wm4\"}",
                "Hc1Yd6Fg0Wm4",
            ),
            ("apiToken,Kp9Zs2Lq7Xv3,prod", "Kp9Zs2Lq7Xv3"),
            ("// Zs2Lq7Xv3Nb8 is the password", "Zs2Lq7Xv3Nb8"),
        ];
        for (text, want) in cases {
            assert_eq!(found(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn leaves_references_and_code_alone() {
        for text in [
            "password: ${DB_PASSWORD}",
            "token = os.environ[\"GITHUB_TOKEN\"]",
            "const token = await getToken();",
            "apiKey: process.env.API_KEY",
            "password = config.password",
            "password: changeme",
            "api_key: \"<your-api-key>\"",
            "token: ${{ secrets.NPM_TOKEN }}",
            "password_hash = bcrypt.hashpw(pw, salt)",
            "tokenizer = AutoTokenizer.from_pretrained(\"bert-base-uncased\")",
            "max_tokens: 4096",
            "token: Option<String>,",
            "token: Optional[str] = None",
            "api_key: str = Field(..., description=\"OpenAI API key\")",
            "def login(username: str, password: str) -> Token:",
            "let password = String::new();",
            "password: string;",
            "the password is required",
            "secret_file: /run/secrets/db_password",
            "GOOGLE_APPLICATION_CREDENTIALS=/home/me/sa.json",
            "password: \"\"",
            "api_key = None",
            "token_expires_in: 3600",
            "notes = \"Maven - io.jsonwebtoken:jjwt-jackson-0.11.2\"",
            "[\"users.linkAuthProfile\", \"users.unlinkAuthProfile\"]",
            "password,hash,salt",
            "if token == expected_token:",
            "Store the token in a secure place.",
        ] {
            assert_eq!(found(text), None, "{text}");
        }
    }
}
