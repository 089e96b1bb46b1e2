//! From the words the [`Analyzer`](super::tokenize::Analyzer) finds to index terms: English
//! stemming (Porter2), so "renewing passports" finds "Passport renewed", cached per distinct
//! word so an index build stems each word once; and typo tolerance for query words the notes
//! never use, by edit distance against the words they do use.

use std::sync::Arc;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

use super::bm25::{Bm25Index, TermId};

/// Shortest query word corrected at edit distance 1: shorter words have too many neighbours
/// ("blood" → "bloom", "flood") for a correction to be a good guess.
const MIN_TYPO_CHARS: usize = 6;
/// Shortest query word corrected at edit distance 2.
const MIN_TWO_TYPO_CHARS: usize = 10;

/// Words to terms, with the stemmer and the cache of words seen in notes.
pub struct Lexicon {
    /// `None` when stemming is off (ablation).
    stemmer: Option<Stemmer>,
    /// Every word seen in a note, with its term (its stem's id) and how often the notes now in
    /// the index use it. FxHash for the same reason as the BM25 vocabulary: it is on the
    /// hottest loop of an index build.
    words: FxHashMap<Arc<str>, Word>,
    /// The same words in the order they were first seen, as they are persisted (and as the
    /// embedding model's table holds their vectors). Nothing depends on the map's own order:
    /// typo correction settles equally good candidates by the word (see [`Self::lookup`]).
    order: Vec<Arc<str>>,
    /// Each word's uses in the notes now indexed, in the same order.
    uses: Vec<u32>,
}

/// A word of the notes: its term, and where it stands in the order first seen (where its uses
/// are counted). A word whose notes were all edited or removed stays, with no uses: it is no
/// typo correction and stands for no term's meaning, as it would not be in a fresh build.
#[derive(Debug, Clone, Copy)]
struct Word {
    term: TermId,
    at: u32,
}

impl std::fmt::Debug for Lexicon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lexicon")
            .field("words", &self.words.len())
            .finish_non_exhaustive()
    }
}

impl Default for Lexicon {
    fn default() -> Self {
        Self::new(true)
    }
}

/// How a query word was matched to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryTerm {
    /// The word (or another form of it) is in the notes.
    Known(TermId),
    /// Not in the notes; the closest word that is, by edit distance.
    Corrected(TermId),
    /// Nothing in the notes comes close.
    Unknown,
}

impl Lexicon {
    /// An empty lexicon, stemming words or not.
    pub fn new(stemming: bool) -> Self {
        Self {
            stemmer: stemming.then(|| Stemmer::create(Algorithm::English)),
            words: FxHashMap::default(),
            order: Vec::new(),
            uses: Vec::new(),
        }
    }

    /// Every word with its term, in the order first seen.
    pub fn words_in_order(&self) -> impl Iterator<Item = (&str, TermId)> {
        self.saved_words().map(|(word, term, _)| (word, term))
    }

    /// Every word with its term and its uses, in the order first seen (what
    /// [`Self::restore`] takes).
    pub fn saved_words(&self) -> impl Iterator<Item = (&str, TermId, u32)> {
        self.order.iter().zip(&self.uses).map(|(w, &uses)| {
            let term = self.words.get(w).map_or(TermId::MAX, |word| word.term);
            (&**w, term, uses)
        })
    }

    /// Each word's uses in the notes now indexed, in the order first seen.
    pub fn uses(&self) -> &[u32] {
        &self.uses
    }

    /// The `i`-th word first seen (empty past the last).
    pub fn word_at(&self, i: usize) -> &str {
        self.order.get(i).map_or("", |w| w)
    }

    /// A lexicon holding `words` (in the order first seen), as [`Self::saved_words`] gave
    /// them; `None` when a word repeats or a term is not below `terms`.
    pub fn restore(
        stemming: bool,
        words: impl IntoIterator<Item = (Box<str>, TermId, u32)>,
        terms: usize,
    ) -> Option<Self> {
        let mut lexicon = Self::new(stemming);
        for (word, term, uses) in words {
            if term as usize >= terms {
                return None;
            }
            let word: Arc<str> = word.into();
            let at = u32::try_from(lexicon.order.len()).ok()?;
            if lexicon
                .words
                .insert(word.clone(), Word { term, at })
                .is_some()
            {
                return None;
            }
            lexicon.order.push(word);
            lexicon.uses.push(uses);
        }
        Some(lexicon)
    }

    /// The stem of `word` (already lowercase).
    pub fn stem<'a>(&self, word: &'a str) -> std::borrow::Cow<'a, str> {
        // Digits, versions and ids ("16", "x1") are kept as they are.
        match &self.stemmer {
            Some(stemmer) if !word.bytes().any(|b| b.is_ascii_digit()) => stemmer.stem(word),
            _ => std::borrow::Cow::Borrowed(word),
        }
    }

    /// The term of a word (already lowercase), if the notes hold it or another form of it: the
    /// word's own entry when a note used it (no stemming), else its stem's.
    pub fn term(&self, word: &str, bm25: &Bm25Index) -> Option<TermId> {
        self.words
            .get(word)
            .map(|word| word.term)
            .or_else(|| bm25.term_id(&self.stem(word)))
    }

    /// The term of a word in a note, interning its stem when new; one more use of the word.
    pub fn intern(&mut self, word: &str, bm25: &mut Bm25Index) -> TermId {
        if let Some(known) = self.words.get(word) {
            if let Some(uses) = self.uses.get_mut(known.at as usize) {
                *uses = uses.saturating_add(1);
            }
            return known.term;
        }
        let term = bm25.intern(&self.stem(word));
        let word: Arc<str> = word.into();
        let at = u32::try_from(self.order.len()).unwrap_or(u32::MAX);
        self.words.insert(word.clone(), Word { term, at });
        self.order.push(word);
        self.uses.push(1);
        term
    }

    /// One use of a word fewer: a note holding it was removed or is read again.
    pub fn release(&mut self, word: &str) {
        if let Some(uses) = self
            .words
            .get(word)
            .and_then(|known| self.uses.get_mut(known.at as usize))
        {
            *uses = uses.saturating_sub(1);
        }
    }

    /// The term of a query word: its own or its stem's, else the closest word the notes use
    /// (edit distance 1 for words of 6+ characters, 2 for 10+), the most common one on ties,
    /// then the first in alphabetical order.
    pub fn lookup(&self, word: &str, bm25: &Bm25Index, typos: bool) -> QueryTerm {
        if let Some(id) = self.term(word, bm25).filter(|id| bm25.doc_freq(*id) > 0) {
            return QueryTerm::Known(id);
        }
        if !typos {
            return QueryTerm::Unknown;
        }
        let chars = word.chars().count();
        let max_distance = match chars {
            n if n >= MIN_TWO_TYPO_CHARS => 2,
            n if n >= MIN_TYPO_CHARS => 1,
            _ => return QueryTerm::Unknown,
        };
        if word.bytes().any(|b| b.is_ascii_digit()) {
            return QueryTerm::Unknown;
        }
        let letters = Letters::of(word);
        let mut best: Option<(usize, u32, &str, TermId)> = None;
        for (candidate, &Word { term: id, at }) in &self.words {
            // A word no note in the index uses any more is no correction (a fresh build would
            // not know it), even while its term is another word's too.
            if self.uses.get(at as usize).is_none_or(|&uses| uses == 0)
                || candidate.len().abs_diff(word.len()) > max_distance
                || letters.differ_by_more_than(candidate, max_distance)
            {
                continue;
            }
            let distance = strsim::damerau_levenshtein(word, candidate);
            if distance == 0 || distance > max_distance {
                continue;
            }
            let df = bm25.doc_freq(id);
            if df == 0 {
                continue;
            }
            // Of equally good corrections, the first word in alphabetical order, not the map's
            // own order, which follows its history.
            let better = best.is_none_or(|(d, f, w, _)| {
                (distance, std::cmp::Reverse(df), &**candidate) < (d, std::cmp::Reverse(f), w)
            });
            if better {
                best = Some((distance, df, candidate, id));
            }
        }
        best.map_or(QueryTerm::Unknown, |(.., id)| QueryTerm::Corrected(id))
    }
}

/// The letters of an ASCII word, counted: a cheap lower bound of its edit distance to another
/// word. Each insertion, deletion or substitution changes the letters one word has beyond the
/// other by at most one, and a transposition changes neither, so when either word has more
/// than `max` letters the other lacks, their (Damerau-Levenshtein) distance is above `max`.
/// The typo scan uses it to skip most of a large vocabulary without computing a distance.
struct Letters(Option<[i16; 128]>);

impl Letters {
    fn of(word: &str) -> Self {
        if !word.is_ascii() {
            return Self(None);
        }
        let mut counts = [0_i16; 128];
        for byte in word.bytes() {
            counts[usize::from(byte)] += 1;
        }
        Self(Some(counts))
    }

    /// Whether `other` certainly lies more than `max` edits away (false when unsure).
    fn differ_by_more_than(&self, other: &str, max: usize) -> bool {
        let Some(mut counts) = self.0 else {
            return false;
        };
        if !other.is_ascii() {
            return false;
        }
        for byte in other.bytes() {
            counts[usize::from(byte)] -= 1;
        }
        let (mut extra, mut missing) = (0_usize, 0_usize);
        for n in counts {
            match n {
                n if n > 0 => extra += n.unsigned_abs() as usize,
                n if n < 0 => missing += n.unsigned_abs() as usize,
                _ => {}
            }
        }
        extra.max(missing) > max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon_of(words: &[&str]) -> (Lexicon, Bm25Index) {
        let mut lexicon = Lexicon::new(true);
        let mut bm25 = Bm25Index::new();
        let mut tokens: Vec<TermId> = words.iter().map(|w| lexicon.intern(w, &mut bm25)).collect();
        bm25.add_chunk(&mut tokens);
        (lexicon, bm25)
    }

    #[test]
    fn word_forms_share_a_term() {
        let (lexicon, bm25) = lexicon_of(&["passport", "renewed", "vaccines"]);
        let known = |w: &str| matches!(lexicon.lookup(w, &bm25, true), QueryTerm::Known(_));
        assert!(known("passports") && known("renewing") && known("vaccinations"));
        assert_eq!(
            lexicon.lookup("renewing", &bm25, true),
            lexicon.lookup("renewed", &bm25, true)
        );
    }

    #[test]
    fn equally_good_corrections_are_settled_by_the_word_not_the_order_words_came_in() {
        // "bittle" is one edit from both, and both are in the one chunk. Other words first, or
        // many of them, change the table's order but not the correction.
        let filler: Vec<String> = (0..500).map(|i| format!("filler{i}")).collect();
        let filler: Vec<&str> = filler.iter().map(String::as_str).collect();
        for words in [
            vec!["bottle", "battle"],
            vec!["battle", "bottle"],
            [filler.as_slice(), &["bottle", "battle"]].concat(),
            [&["bottle", "battle"], filler.as_slice()].concat(),
        ] {
            let (lexicon, bm25) = lexicon_of(&words);
            assert_eq!(
                lexicon.lookup("bittle", &bm25, true),
                lexicon.lookup("battle", &bm25, true).corrected(),
                "{:?}",
                &words[..2]
            );
        }
    }

    #[test]
    fn long_misspellings_are_corrected_and_short_unknown_words_are_not() {
        let (lexicon, bm25) = lexicon_of(&["passport", "anniversary", "bloom", "greenway"]);
        assert_eq!(
            lexicon.lookup("pasport", &bm25, true),
            lexicon.lookup("passport", &bm25, true).corrected()
        );
        assert!(matches!(
            lexicon.lookup("anniversery", &bm25, true),
            QueryTerm::Corrected(_)
        ));
        assert!(matches!(
            lexicon.lookup("greenwey", &bm25, true),
            QueryTerm::Corrected(_)
        ));
        assert_eq!(lexicon.lookup("blood", &bm25, true), QueryTerm::Unknown);
        assert_eq!(lexicon.lookup("saxophone", &bm25, true), QueryTerm::Unknown);
    }

    #[test]
    fn numbers_are_not_stemmed_or_corrected() {
        let (lexicon, bm25) = lexicon_of(&["2026", "x1"]);
        assert!(matches!(
            lexicon.lookup("2026", &bm25, true),
            QueryTerm::Known(_)
        ));
        assert_eq!(lexicon.lookup("2027", &bm25, true), QueryTerm::Unknown);
    }

    #[test]
    fn the_letter_count_bound_never_skips_a_word_within_reach() {
        // Random words over a small alphabet, so near misses are common: whenever the bound
        // says "more than max edits", the real distance agrees.
        let mut rng = fastrand::Rng::with_seed(7);
        let word = |rng: &mut fastrand::Rng| -> String {
            (0..rng.usize(3..12))
                .map(|_| char::from(b'a' + rng.u8(0..5)))
                .collect()
        };
        let mut skipped = 0;
        for _ in 0..20_000 {
            let (a, b) = (word(&mut rng), word(&mut rng));
            for max in [1, 2] {
                if Letters::of(&a).differ_by_more_than(&b, max) {
                    skipped += 1;
                    assert!(strsim::damerau_levenshtein(&a, &b) > max, "{a} {b} {max}");
                }
            }
        }
        assert!(
            skipped > 10_000,
            "the bound should skip most pairs: {skipped}"
        );
        assert!(!Letters::of("café").differ_by_more_than("zzzz", 1));
    }

    impl QueryTerm {
        fn corrected(self) -> Self {
            match self {
                Self::Known(id) => Self::Corrected(id),
                other => other,
            }
        }
    }
}
