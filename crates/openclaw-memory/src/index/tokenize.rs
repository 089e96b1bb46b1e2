//! Turning text into index terms. One [`Analyzer`] serves both notes and queries, so whatever
//! normalisation it learns later (stemming, folding accents) applies to both sides at once.

use crate::index::transcript;

/// English function words that carry no meaning for search. Dropping them keeps "what did we
/// decide about the database" from ranking notes by how often they say "the".
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "get",
    "go",
    "goes",
    "going",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "kind",
    "let",
    "made",
    "make",
    "many",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "take",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "through",
    "to",
    "too",
    "took",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "went",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Splits text into lowercase alphanumeric words, dropping stop words and single letters.
#[derive(Debug, Clone, Default)]
pub struct Analyzer {
    _private: (),
}

impl Analyzer {
    /// The analyzer used for notes and queries.
    pub fn new() -> Self {
        Self { _private: () }
    }

    /// Calls `emit` with each term of `text`, in order. `emit` gets a borrowed buffer, so
    /// indexing a large corpus allocates only for new vocabulary. A message line of OpenClaw's
    /// session-memory notes is read as the message it quotes ([`transcript`]).
    pub fn for_each_term(&self, text: &str, mut emit: impl FnMut(&str)) {
        self.for_each_term_at(text, |word, _| emit(word));
    }

    /// [`Self::for_each_term`], with the byte offset in `text` where each term's word starts.
    #[expect(
        clippy::unused_self,
        reason = "callers hold an analyzer; the rules it applies are fixed today"
    )]
    pub fn for_each_term_at(&self, text: &str, mut emit: impl FnMut(&str, usize)) {
        let mut word = String::with_capacity(32);
        let Some(message) = transcript::message(text) else {
            split_words(text, &mut word, emit);
            return;
        };
        for piece in std::iter::once(message.role.clone()).chain(message.pieces(text)) {
            let at = piece.start;
            split_words(&text[piece], &mut word, |w, offset| emit(w, at + offset));
        }
    }

    /// The terms of `text` as owned strings (queries and tests; indexing uses
    /// [`Self::for_each_term`]).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_term(text, |t| out.push(t.to_owned()));
        out
    }
}

/// Calls `emit` with each term of plain `text` and the byte offset where it starts: its
/// lowercase alphanumeric words, but stop words and single letters. `word` is the buffer.
fn split_words(text: &str, word: &mut String, mut emit: impl FnMut(&str, usize)) {
    let offset = |piece: *const u8| piece.addr() - text.as_ptr().addr();
    if text.is_ascii() {
        // Most lines: split on bytes (an ASCII character is alphanumeric exactly when
        // `is_ascii_alphanumeric` says so), without decoding characters.
        for piece in text.as_bytes().split(|b| !b.is_ascii_alphanumeric()) {
            if piece.is_empty() {
                continue;
            }
            word.clear();
            word.extend(piece.iter().map(|b| char::from(b.to_ascii_lowercase())));
            if keeps(word) {
                emit(word, offset(piece.as_ptr()));
            }
        }
        return;
    }
    for piece in text.split(|c: char| !c.is_alphanumeric()) {
        if piece.is_empty() {
            continue;
        }
        word.clear();
        if piece.is_ascii() {
            word.push_str(piece);
            word.make_ascii_lowercase();
        } else {
            word.extend(piece.chars().flat_map(char::to_lowercase));
        }
        if keeps(word) {
            emit(word, offset(piece.as_ptr()));
        }
    }
}

/// The stop words as a hash set: every word of every note is looked up here, and hashing a
/// short word is cheaper than a binary search over the list.
static STOP_SET: std::sync::LazyLock<rustc_hash::FxHashSet<&'static str>> =
    std::sync::LazyLock::new(|| STOP_WORDS.iter().copied().collect());

/// Whether `word` (lower case) is a term: not a stop word, not a single letter.
pub(crate) fn keeps(word: &str) -> bool {
    let single_letter = word.chars().nth(1).is_none() && !word.as_bytes()[0].is_ascii_digit();
    // Words longer than every stop word skip the lookup.
    !single_letter && (word.len() > MAX_STOP_WORD_BYTES || !STOP_SET.contains(word))
}

/// Length of the longest stop word, in bytes.
const MAX_STOP_WORD_BYTES: usize = 10;

/// A rough token count for chunk sizing: whitespace-separated words. Cheaper than analysing
/// and close to what embedding tokenizers count for English prose.
pub fn approx_tokens(line: &str) -> usize {
    // Every line of every note is counted during a build: ASCII lines are counted byte by
    // byte (the same count, `char::is_whitespace` on ASCII being these six bytes).
    if !line.is_ascii() {
        return line.split_whitespace().count();
    }
    let mut count = 0;
    let mut in_word = false;
    for &b in line.as_bytes() {
        let space = matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
        count += usize::from(!space && !in_word);
        in_word = !space;
    }
    count
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn no_stop_word_is_longer_than_the_shortcut_assumes() {
        assert!(STOP_WORDS.iter().all(|w| w.len() <= MAX_STOP_WORD_BYTES));
        assert!(STOP_WORDS.iter().any(|w| w.len() == MAX_STOP_WORD_BYTES));
    }

    #[test]
    fn ascii_text_splits_as_by_characters() {
        let text = "- Decision 2026-11-20: use PostgreSQL_16 (tokio-tungstenite); it's A x.y \t42";
        let by_chars: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
            .map(str::to_lowercase)
            .filter(|w| keeps(w))
            .collect();
        assert_eq!(Analyzer::new().terms(text), by_chars);
    }

    #[test]
    fn the_token_count_is_the_whitespace_split_count() {
        for line in [
            "",
            "   ",
            "- one two\tthree\x0bfour\x0cfive\r",
            "  lead and trail  ",
            "Zürich\u{a0}café  x",
        ] {
            assert_eq!(
                approx_tokens(line),
                line.split_whitespace().count(),
                "{line:?}"
            );
        }
    }

    #[test]
    fn stop_words_are_sorted_and_unique() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn a_session_memory_message_is_read_as_the_message() {
        let line = r#"user: "ok\nMoved to Bristol.\n- Landlord: \"Mrs Achebe\"\tdone\u2028Thanks""#;
        let mut found = Vec::new();
        Analyzer::new().for_each_term_at(line, |word, at| found.push((word.to_owned(), at)));
        let words: Vec<&str> = found.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            words,
            [
                "user", "ok", "moved", "bristol", "landlord", "mrs", "achebe", "done", "thanks"
            ]
        );
        for (word, at) in &found {
            assert!(
                line[*at..].to_lowercase().starts_with(word.as_str()),
                "{word} at {at}"
            );
        }
        // The same words written without the escapes, as a note would.
        assert_eq!(
            Analyzer::new().terms("user: ok Moved to Bristol. - Landlord: Mrs Achebe done Thanks"),
            words
        );
        // Not a message line: the backslash is read as any other character.
        assert_eq!(Analyzer::new().terms(r"- C:\new\notes"), ["new", "notes"]);
    }

    #[test]
    fn offsets_point_at_each_word_in_plain_text() {
        for line in ["- Decision: use PostgreSQL_16", "Zürich's café, 2 days"] {
            Analyzer::new().for_each_term_at(line, |word, at| {
                assert!(
                    line[at..].to_lowercase().starts_with(word),
                    "{word} at {at}"
                );
            });
        }
    }

    #[test]
    fn splits_lowercases_and_drops_noise() {
        let terms = Analyzer::new().terms(
            "Decision 2026-11-20: use PostgreSQL 16 for the tokio-tungstenite loop; it's Zürich's 2 x",
        );
        assert_eq!(
            terms,
            [
                "decision",
                "2026",
                "11",
                "20",
                "use",
                "postgresql",
                "16",
                "tokio",
                "tungstenite",
                "loop",
                "zürich",
                "2"
            ]
        );
    }
}
