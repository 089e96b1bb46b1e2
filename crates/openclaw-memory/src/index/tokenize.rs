//! Turning text into index terms. One [`Analyzer`] serves both notes and queries, so whatever
//! normalisation it learns later (stemming, folding accents) applies to both sides at once.

/// English function words that carry no meaning for search. Dropping them keeps "what did we
/// decide about the database" from ranking notes by how often they say "the".
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your",
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
    /// indexing a large corpus allocates only for new vocabulary.
    pub fn for_each_term(&self, text: &str, mut emit: impl FnMut(&str)) {
        let mut word = String::with_capacity(32);
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
            if keeps(&word) {
                emit(&word);
            }
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

fn keeps(word: &str) -> bool {
    let single_letter = word.chars().nth(1).is_none() && !word.as_bytes()[0].is_ascii_digit();
    // Most words are longer than every stop word: skip the search for them (it was a fifth of
    // an index build).
    !single_letter && (word.len() > MAX_STOP_WORD_BYTES || STOP_WORDS.binary_search(&word).is_err())
}

/// Length of the longest stop word, in bytes.
const MAX_STOP_WORD_BYTES: usize = 5;

/// A rough token count for chunk sizing: whitespace-separated words. Cheaper than analysing
/// and close to what embedding tokenizers count for English prose.
pub fn approx_tokens(line: &str) -> usize {
    line.split_whitespace().count()
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
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
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
