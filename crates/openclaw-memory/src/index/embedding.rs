//! Word vectors: what a word means, as a small static embedding model in the model2vec format
//! says (a WordPiece `tokenizer.json` and one vector per word piece in `model.safetensors`,
//! such as potion-base-8M), read from a local directory; nothing is ever downloaded. A word's
//! vector is the mean of its pieces' vectors, as model2vec computes it; the index keeps one
//! quantized vector per word of its vocabulary, from which a query's closeness to every term
//! comes in one pass (see [`meaning`](super::meaning)).
//!
//! Optional: without a model, search matches words only.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::bm25::TermId;

/// The tensor holding one row per word piece, in model2vec's files.
const EMBEDDINGS_TENSOR: &str = "embeddings";
/// Longest word split into pieces; longer ones are `[UNK]` (the tokenizer's own limit).
const MAX_WORD_CHARS: usize = 100;

/// Why a model directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WordModelError {
    /// A file is missing or unreadable.
    #[error(
        "cannot read {path}: {source}. Point OPENCLAW_MEMORY_EMBEDDINGS at a model2vec model \
         directory (tokenizer.json and model.safetensors; scripts/fetch-embeddings.sh installs \
         one), or set it to `off`"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// `tokenizer.json` is not a lowercasing WordPiece tokenizer.
    #[error(
        "{path} is not a lowercasing WordPiece tokenizer.json ({reason}): use a model2vec model distilled from an uncased BERT-style model, such as potion-base-8M"
    )]
    Tokenizer {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// `model.safetensors` has no usable `embeddings` matrix.
    #[error(
        "{path} holds no f32 `embeddings` matrix with one row per word piece ({reason}): the directory must hold a model2vec model"
    )]
    Weights {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// The parts of a Hugging Face `tokenizer.json` a single lowercase word needs.
#[derive(Deserialize)]
struct TokenizerFile {
    normalizer: Option<Normalizer>,
    model: WordPieceModel,
}

#[derive(Deserialize)]
struct Normalizer {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    lowercase: bool,
}

#[derive(Deserialize)]
struct WordPieceModel {
    #[serde(rename = "type")]
    kind: String,
    vocab: FxHashMap<String, u32>,
    continuing_subword_prefix: Option<String>,
}

/// A static embedding model: word pieces and their vectors.
pub struct WordModel {
    /// Every word piece, as the tokenizer spells it: a piece continuing a word starts with
    /// `prefix`.
    pieces: FxHashMap<String, u32>,
    prefix: String,
    dim: usize,
    /// `dim` floats per piece id.
    rows: Vec<i8>,
    /// Per piece, what its row's bytes are multiplied by (rows are kept as bytes: a quarter of
    /// the memory, and the same neighbours).
    row_scales: Vec<f32>,
    /// Where it was loaded from, for logs and `check`.
    source: PathBuf,
}

impl std::fmt::Debug for WordModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordModel")
            .field("source", &self.source)
            .field("pieces", &self.pieces.len())
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl WordModel {
    /// Loads the model in `dir` (`tokenizer.json`, `model.safetensors`).
    pub fn load(dir: &Path) -> Result<Self, WordModelError> {
        let tokenizer_path = dir.join("tokenizer.json");
        let text = std::fs::read(&tokenizer_path).map_err(|source| WordModelError::Read {
            path: tokenizer_path.clone(),
            source,
        })?;
        let bad_tokenizer = |reason: String| WordModelError::Tokenizer {
            path: tokenizer_path.clone(),
            reason,
        };
        let tokenizer: TokenizerFile =
            serde_json::from_slice(&text).map_err(|e| bad_tokenizer(e.to_string()))?;
        if tokenizer.model.kind != "WordPiece" {
            return Err(bad_tokenizer(format!(
                "model type {}",
                tokenizer.model.kind
            )));
        }
        if !tokenizer
            .normalizer
            .as_ref()
            .is_some_and(|n| n.kind == "BertNormalizer" && n.lowercase)
        {
            return Err(bad_tokenizer("it does not lowercase".into()));
        }
        let prefix = tokenizer
            .model
            .continuing_subword_prefix
            .unwrap_or_else(|| "##".into());

        let (pieces, dim, rows, row_scales) = read_weights(&dir.join("model.safetensors"))?;
        if let Some((piece, id)) = tokenizer
            .model
            .vocab
            .iter()
            .find(|(_, id)| **id as usize >= pieces)
        {
            return Err(bad_tokenizer(format!(
                "piece {piece:?} has id {id}, beyond the {pieces} rows of the weights"
            )));
        }
        Ok(Self {
            pieces: tokenizer.model.vocab,
            prefix,
            dim,
            rows,
            row_scales,
            source: dir.to_path_buf(),
        })
    }

    /// Where the model was loaded from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Floats per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The word pieces of one lowercase word, longest match first (WordPiece); `None` when
    /// some part of it is no piece at all (the tokenizer's `[UNK]`, which model2vec skips).
    fn pieces(&self, word: &str) -> Option<Vec<u32>> {
        if word.is_empty() || word.chars().count() > MAX_WORD_CHARS {
            return None;
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut tail = String::with_capacity(self.prefix.len() + word.len());
        while start < word.len() {
            let mut end = word.len();
            let id = loop {
                if end <= start {
                    return None;
                }
                let piece = if start == 0 {
                    &word[..end]
                } else {
                    tail.clear();
                    tail.push_str(&self.prefix);
                    tail.push_str(&word[start..end]);
                    tail.as_str()
                };
                if let Some(&id) = self.pieces.get(piece) {
                    break id;
                }
                end -= 1;
                while !word.is_char_boundary(end) {
                    end -= 1;
                }
            };
            out.push(id);
            start = end;
        }
        Some(out)
    }

    /// The unit vector of several words together (a query's), each as the analyzer gives it
    /// (lowercase, letters and digits): the mean of all their pieces' rows, as model2vec embeds
    /// a text. Words the model cannot spell are left out; `None` when none is left. Accented
    /// words are looked up as written; the tokenizer would strip the accents, so a few of them
    /// find no pieces.
    pub fn text_vector(&self, words: &[impl AsRef<str>]) -> Option<Vec<f32>> {
        let mut sum = vec![0.0_f32; self.dim];
        for word in words {
            self.add_pieces(word.as_ref(), &mut sum);
        }
        normalized(sum)
    }

    /// Adds the rows of `word`'s pieces to `sum`; nothing when the model cannot spell it. The
    /// rows keep their lengths: a potion model weights a piece by how telling it is through its
    /// row's length, so a sum of rows is a weighted mean.
    fn add_pieces(&self, word: &str, sum: &mut [f32]) {
        let Some(pieces) = self.pieces(word) else {
            return;
        };
        for id in pieces {
            let (row, scale) = (
                &self.rows[id as usize * self.dim..][..self.dim],
                self.row_scales[id as usize],
            );
            for (s, &r) in sum.iter_mut().zip(row) {
                *s += f32::from(r) * scale;
            }
        }
    }
}

/// `vector` scaled to length 1; `None` for a zero vector.
fn normalized(vector: Vec<f32>) -> Option<Vec<f32>> {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    (norm > f32::EPSILON).then(|| vector.into_iter().map(|v| v / norm).collect())
}

/// The `embeddings` matrix of a safetensors file, read a block of rows at a time (never the
/// whole file at once: it is 30 MB for potion-base-8M, four times what the rows keep), each
/// row quantized: (rows, dimensions, the bytes, a scale per row).
fn read_weights(path: &Path) -> Result<(usize, usize, Vec<i8>, Vec<f32>), WordModelError> {
    use std::io::{Read, Seek, SeekFrom};

    /// Longest header accepted (the format's own limit).
    const MAX_HEADER: u64 = 100_000_000;
    let bad = |reason: String| WordModelError::Weights {
        path: path.to_path_buf(),
        reason,
    };
    let io = |source: std::io::Error| WordModelError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut length = [0_u8; 8];
    file.read_exact(&mut length).map_err(io)?;
    let header_len = u64::from_le_bytes(length);
    if header_len > MAX_HEADER || header_len + 8 > size {
        return Err(bad(format!(
            "a header of {header_len} bytes in a file of {size}"
        )));
    }
    let mut header = vec![0_u8; usize::try_from(header_len).map_err(|e| bad(e.to_string()))?];
    file.read_exact(&mut header).map_err(io)?;
    let metadata: safetensors::tensor::Metadata =
        serde_json::from_slice(&header).map_err(|e| bad(e.to_string()))?;
    let info = metadata
        .info(EMBEDDINGS_TENSOR)
        .ok_or_else(|| bad(format!("no tensor named {EMBEDDINGS_TENSOR}")))?;
    let (pieces, dim) = match (info.dtype, info.shape.as_slice()) {
        (safetensors::Dtype::F32, &[pieces, dim]) if dim > 0 && pieces > 0 => (pieces, dim),
        (dtype, shape) => return Err(bad(format!("{dtype:?} of shape {shape:?}"))),
    };
    let (start, end) = info.data_offsets;
    let data_start = 8 + header_len + start as u64;
    if end.checked_sub(start) != Some(pieces * dim * 4) || data_start + (end - start) as u64 > size
    {
        return Err(bad(format!(
            "bytes {start}..{end} for {pieces} rows of {dim}, in a file of {size}"
        )));
    }
    file.seek(SeekFrom::Start(data_start)).map_err(io)?;
    let (mut rows, mut row_scales) = (Vec::with_capacity(pieces * dim), Vec::with_capacity(pieces));
    let mut block = vec![0_u8; dim * 4 * 1024];
    let mut row = vec![0.0_f32; dim];
    let mut left = pieces;
    while left > 0 {
        let count = left.min(1024);
        let bytes = &mut block[..count * dim * 4];
        file.read_exact(bytes).map_err(io)?;
        for raw in bytes.chunks_exact(dim * 4) {
            for (value, b) in row.iter_mut().zip(raw.chunks_exact(4)) {
                *value = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            row_scales.push(quantize(&row, &mut rows));
        }
        left -= count;
    }
    Ok((pieces, dim, rows, row_scales))
}

/// Appends `values` to `out` as bytes in -127..=127 and returns what a byte is worth (0 for all
/// zeros).
fn quantize(values: &[f32], out: &mut Vec<i8>) -> f32 {
    let largest = values.iter().fold(0.0_f32, |m, v| m.max(v.abs()));
    if largest <= f32::EPSILON || !largest.is_finite() {
        out.extend(std::iter::repeat_n(0, values.len()));
        return 0.0;
    }
    let scale = largest / f32::from(i8::MAX);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "each value is rounded into -127..=127 first"
    )]
    out.extend(
        values
            .iter()
            .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8),
    );
    scale
}

/// One vector per word of the index's vocabulary, in the lexicon's order, so a
/// growing vocabulary is extended rather than recomputed. A word's vector is the sum of its
/// pieces' rows, lengths kept, as a text's embedding adds them up.
#[derive(Debug)]
pub struct VocabularyVectors {
    model: Arc<WordModel>,
    /// The term of each word.
    terms: Vec<TermId>,
    /// `dim` bytes per word: its vector scaled by `scales[i]`; all zero for a word the model
    /// cannot spell.
    vectors: Vec<i8>,
    scales: Vec<f32>,
    /// Each word's vector length (0 for a word the model cannot spell).
    lengths: Vec<f32>,
}

impl VocabularyVectors {
    /// An empty table over `model`; [`Self::extend`] adds the vocabulary.
    pub fn new(model: Arc<WordModel>) -> Self {
        Self {
            model,
            terms: Vec::new(),
            vectors: Vec::new(),
            scales: Vec::new(),
            lengths: Vec::new(),
        }
    }

    /// The model behind the table.
    pub fn model(&self) -> &Arc<WordModel> {
        &self.model
    }

    /// Words in the table.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// Adds the words of `words` past the ones already in the table (the lexicon only grows).
    pub fn extend<'a>(&mut self, words: impl Iterator<Item = (&'a str, TermId)>) {
        let dim = self.model.dim();
        for (word, term) in words.skip(self.terms.len()) {
            self.terms.push(term);
            let mut vector = vec![0.0; dim];
            self.model.add_pieces(word, &mut vector);
            self.lengths
                .push(vector.iter().map(|v| v * v).sum::<f32>().sqrt());
            self.scales.push(quantize(&vector, &mut self.vectors));
        }
    }

    /// How close each term is to `query` (a unit vector), indexed by term id (`terms` long), in
    /// one pass over the vocabulary. Only the words the notes still use count (`uses`, in the
    /// table's order; `word(i)` is the `i`-th word): a word of deleted text stands for nothing,
    /// as in a fresh build. A term's vector, what a line holding it adds up, is its most used
    /// word's, the first in alphabetical order on a tie, so the same notes give every term the
    /// same vector whatever the index saw before.
    pub fn term_closeness<'a>(
        &self,
        query: &[f32],
        terms: usize,
        uses: &[u32],
        word: impl Fn(usize) -> &'a str,
    ) -> TermCloseness {
        let mut out = TermCloseness {
            similarity: vec![0.0; terms],
            dot: vec![0.0; terms],
            length_sq: vec![0.0; terms],
            representative: vec![u32::MAX; terms],
        };
        for (i, row) in self.vectors.chunks_exact(query.len()).enumerate() {
            let term = self.terms[i] as usize;
            let count = uses.get(i).copied().unwrap_or(0);
            if term >= terms || count == 0 {
                continue;
            }
            // A word the model cannot spell adds nothing, but may still stand for its term.
            let dot = if self.lengths[i] > f32::EPSILON {
                let dot = self.scales[i]
                    * row
                        .iter()
                        .zip(query)
                        .map(|(&r, q)| f32::from(r) * q)
                        .sum::<f32>();
                out.similarity[term] = out.similarity[term].max(dot / self.lengths[i]);
                dot
            } else {
                0.0
            };
            let stands = match out.representative[term] {
                u32::MAX => true,
                current => {
                    let current = current as usize;
                    let theirs = uses.get(current).copied().unwrap_or(0);
                    count > theirs || count == theirs && word(i) < word(current)
                }
            };
            if stands {
                // `i` is below u32::MAX (`extend`).
                out.representative[term] = u32::try_from(i).unwrap_or(u32::MAX);
                out.dot[term] = dot;
                out.length_sq[term] = self.lengths[i] * self.lengths[i];
            }
        }
        out
    }

    /// Cosine similarity of `query` (a unit vector) to a line holding `terms`: the line's
    /// vector is the sum of its terms' (each occurrence counted; a term's vector is the one
    /// `closeness` chose for it), as model2vec embeds a text. 0 when the model can spell none
    /// of them. `sum` is scratch space, as long as `query`, so scoring many lines allocates
    /// nothing.
    pub fn line_similarity(
        &self,
        query: &[f32],
        closeness: &TermCloseness,
        terms: &[TermId],
        sum: &mut [f32],
    ) -> f32 {
        let sum = &mut sum[..query.len()];
        self.line_sum(&closeness.representative, terms, sum);
        let (mut dot, mut norm) = (0.0_f32, 0.0_f32);
        for (s, q) in sum.iter().zip(query) {
            dot += s * q;
            norm += s * s;
        }
        if norm <= f32::EPSILON {
            0.0
        } else {
            dot / norm.sqrt()
        }
    }

    /// The sum of the vectors of `terms` (each occurrence counted; each term's word in
    /// `representative`) into `sum`.
    fn line_sum(&self, representative: &[u32], terms: &[TermId], sum: &mut [f32]) {
        let dim = sum.len();
        sum.fill(0.0);
        for &term in terms {
            let Some(&word) = representative.get(term as usize) else {
                continue;
            };
            let (Some(row), Some(&scale)) = (
                self.vectors
                    .get(word as usize * dim..(word as usize + 1) * dim),
                self.scales.get(word as usize),
            ) else {
                continue;
            };
            for (s, &r) in sum.iter_mut().zip(row) {
                *s += f32::from(r) * scale;
            }
        }
    }
}

/// How close each term of the vocabulary is to a query (see
/// [`VocabularyVectors::term_closeness`]), indexed by term id.
#[derive(Debug)]
pub struct TermCloseness {
    /// Cosine similarity of the term's closest word; 0 for a term with no word the model can
    /// spell.
    pub similarity: Vec<f32>,
    /// Dot product of the query with the vector a line holding the term adds up (its most used
    /// word's).
    pub dot: Vec<f32>,
    /// That vector's squared length.
    pub length_sq: Vec<f32>,
    /// Per term, the word (its place in the table) whose vector a line holding the term adds
    /// up; `u32::MAX` for a term no note uses.
    pub representative: Vec<u32>,
}

/// A tiny model for tests.
#[cfg(test)]
pub(crate) mod test_model {
    use std::path::Path;

    use super::{EMBEDDINGS_TENSOR, WordModel};

    /// A model with pieces `doc`, `##tor`, `medic`, `##al`, `car` in 2 dimensions.
    pub(crate) fn tiny(dir: &Path) -> WordModel {
        let vocab = [
            ("[UNK]", 0),
            ("doc", 1),
            ("##tor", 2),
            ("medic", 3),
            ("##al", 4),
            ("car", 5),
        ];
        let vocab: serde_json::Map<String, serde_json::Value> = vocab
            .iter()
            .map(|(p, id)| ((*p).to_owned(), serde_json::json!(id)))
            .collect();
        let tokenizer = serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "lowercase": true},
            "model": {"type": "WordPiece", "vocab": vocab, "continuing_subword_prefix": "##"}
        });
        std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
        let rows: [[f32; 2]; 6] = [
            [0.0, 0.0],
            [1.0, 0.2],
            [1.0, 0.0],
            [0.9, 0.3],
            [1.0, 0.1],
            [0.0, 1.0],
        ];
        let data: Vec<u8> = rows
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![6, 2], &data)
            .unwrap();
        let bytes = safetensors::serialize([(EMBEDDINGS_TENSOR, view)], &None).unwrap();
        std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
        WordModel::load(dir).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_model::tiny;
    use super::*;

    #[test]
    fn words_split_longest_piece_first_and_unknown_parts_give_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let model = tiny(dir.path());
        assert_eq!(model.pieces("doctor"), Some(vec![1, 2]));
        assert_eq!(model.pieces("medical"), Some(vec![3, 4]));
        assert_eq!(model.pieces("doctors"), None);
        assert_eq!(model.pieces(""), None);
        let v = model.text_vector(&["doctor"]).unwrap();
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn each_term_gets_the_similarity_of_its_closest_word() {
        let dir = tempfile::tempdir().unwrap();
        let model = Arc::new(tiny(dir.path()));
        let mut table = VocabularyVectors::new(Arc::clone(&model));
        table.extend([("medical", 0), ("car", 1), ("medic", 0), ("xyz", 2)].into_iter());
        assert_eq!(table.len(), 4);
        let query = model.text_vector(&["doctor"]).unwrap();
        let words = ["medical", "car", "medic", "xyz", "doctor"];
        let word = |i: usize| words[i];
        let similarity = table.term_closeness(&query, 4, &[1; 4], word).similarity;
        assert!(similarity[0] > 0.95, "{similarity:?}");
        assert!(similarity[1] < 0.3, "{similarity:?}");
        // A word the model cannot spell, and a term with no word, are at 0.
        assert!(similarity[2].abs() < f32::EPSILON && similarity[3].abs() < f32::EPSILON);
        // Extending again adds only the new words.
        table.extend(
            [
                ("medical", 0),
                ("car", 1),
                ("medic", 0),
                ("xyz", 2),
                ("doctor", 3),
            ]
            .into_iter(),
        );
        assert_eq!(table.len(), 5);
        assert!(table.term_closeness(&query, 4, &[1; 5], word).similarity[3] > 0.99);
        // A word no note uses any more counts for nothing.
        let unused = table.term_closeness(&query, 4, &[0, 1, 0, 1, 1], word);
        assert!(
            unused.similarity[0].abs() < f32::EPSILON,
            "{:?}",
            unused.similarity
        );
        assert_eq!(unused.representative[0], u32::MAX);
    }

    #[test]
    fn a_term_stands_for_its_most_used_word_then_the_first_in_alphabetical_order() {
        let dir = tempfile::tempdir().unwrap();
        let model = Arc::new(tiny(dir.path()));
        let mut table = VocabularyVectors::new(Arc::clone(&model));
        // Three forms of one term, in the order an index happened to meet them.
        let words = ["medical", "medic", "doctor"];
        table.extend(words.iter().map(|w| (*w, 0)));
        let query = model.text_vector(&["car"]).unwrap();
        let word = |i: usize| words[i];
        let stands = |uses: &[u32]| table.term_closeness(&query, 1, uses, word).representative[0];
        assert_eq!(stands(&[1, 3, 2]), 1);
        assert_eq!(stands(&[2, 1, 2]), 2);
        assert_eq!(stands(&[2, 2, 2]), 2);
        assert_eq!(stands(&[2, 2, 0]), 1);
    }

    #[test]
    fn a_line_is_as_close_as_the_model_embeds_its_words_together() {
        let dir = tempfile::tempdir().unwrap();
        let model = Arc::new(tiny(dir.path()));
        let mut table = VocabularyVectors::new(Arc::clone(&model));
        table.extend([("doctor", 0), ("car", 1), ("medical", 2), ("xyz", 3)].into_iter());
        let query = model.text_vector(&["doctor"]).unwrap();
        let names = ["doctor", "car", "medical", "xyz"];
        let closeness = table.term_closeness(&query, 4, &[1; 4], |i| names[i]);
        let cosine = |words: &[&str]| -> f32 {
            let line = model.text_vector(words).unwrap();
            line.iter().zip(&query).map(|(l, q)| l * q).sum()
        };
        // The sum of the words' rows, lengths kept, each occurrence counted: the model's own
        // embedding of the line's text (up to the bytes the rows are kept in).
        for (terms, words) in [
            (vec![0, 1], vec!["doctor", "car"]),
            (vec![1, 2, 2], vec!["car", "medical", "medical"]),
            (vec![1, 3], vec!["car"]),
        ] {
            let got = table.line_similarity(&query, &closeness, &terms, &mut [0.0; 2]);
            let want = cosine(&words);
            assert!((got - want).abs() < 0.01, "{words:?}: {got} against {want}");
        }
        let mut sum = [0.0; 2];
        let both = table.line_similarity(&query, &closeness, &[0, 1], &mut sum);
        assert!(both > table.line_similarity(&query, &closeness, &[1], &mut sum));
        // Nothing the model can spell, or terms it never saw: no closeness at all.
        let nothing = table.line_similarity(&query, &closeness, &[3, 9], &mut sum);
        assert!(nothing.abs() < f32::EPSILON);
    }

    #[test]
    fn cut_short_or_foreign_weights_are_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        tiny(dir.path());
        let weights = dir.path().join("model.safetensors");
        let good = std::fs::read(&weights).unwrap();
        for cut in [0, 7, 20, good.len() - 1] {
            std::fs::write(&weights, &good[..cut]).unwrap();
            let err = WordModel::load(dir.path()).unwrap_err();
            assert!(
                err.to_string().contains("model.safetensors"),
                "cut {cut}: {err}"
            );
        }
        let other =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1, 1], &[0; 4])
                .unwrap();
        std::fs::write(
            &weights,
            safetensors::serialize([("other", other)], &None).unwrap(),
        )
        .unwrap();
        let err = WordModel::load(dir.path()).unwrap_err();
        assert!(matches!(err, WordModelError::Weights { .. }), "{err}");
    }

    #[test]
    fn a_directory_without_a_model_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = WordModel::load(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("OPENCLAW_MEMORY_EMBEDDINGS"),
            "{err}"
        );
        std::fs::write(
            dir.path().join("tokenizer.json"),
            r#"{"model": {"type": "BPE", "vocab": {}}}"#,
        )
        .unwrap();
        let err = WordModel::load(dir.path()).unwrap_err();
        assert!(matches!(err, WordModelError::Tokenizer { .. }), "{err}");
    }
}
