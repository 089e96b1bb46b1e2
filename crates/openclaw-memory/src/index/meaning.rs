//! Lines close in meaning to a query, for the searches the words alone cannot answer: a
//! question worded unlike its note ("who looks after her teeth" for "Dentist: Dr. Okafor").
//! A line's meaning is the IDF-weighted sum of its words' vectors (see
//! [`related`](super::related)); its closeness to the query is their cosine, counting the
//! words' vectors as orthogonal to each other for the line's length, so that one pass over the
//! terms the index already holds scores every line without storing a vector per line.
#![expect(
    clippy::cast_possible_truncation,
    reason = "line and file indexes of a loaded index fit in u32"
)]

use crate::index::chunk::LineRange;
use crate::index::query::file_terms;
use crate::index::{LocalHit, MemoryIndex, snippet};

/// A line close in meaning to the query.
#[derive(Debug, Clone, Copy)]
pub struct Close {
    /// Cosine similarity to the query.
    pub similarity: f32,
    /// The file's slot.
    pub file: u32,
    /// The line (0-based).
    pub line: u32,
}

impl MemoryIndex {
    /// The `most` lines closest in meaning to the query `words` with a similarity of at least
    /// `least`, best first, leaving out lines the notes mark as replaced. Empty without an embedding model.
    pub(super) fn closest_lines(&self, words: &[String], least: f32, most: usize) -> Vec<Close> {
        let Some(related) = self.related.as_ref() else {
            return Vec::new();
        };
        let Some(query) = related.model().text_vector(words) else {
            return Vec::new();
        };
        let terms = self.bm25.term_count();
        let similarity = related.term_similarities(&query, terms);
        // Per term: its IDF times its similarity, and its IDF squared (the line's length).
        let (toward, length): (Vec<f32>, Vec<f32>) = (0..terms)
            .map(|t| {
                let idf = self.bm25.idf(t as u32);
                (idf * similarity[t], idf * idf)
            })
            .unzip();
        let mut best: Vec<Close> = Vec::with_capacity(most + 1);
        for (slot, file) in self.files.iter().enumerate() {
            let Some(file) = file else { continue };
            for line in 0..file.line_count() {
                // A guess never quotes a fact the notes mark as replaced.
                if file.superseded.binary_search(&line).is_ok() {
                    continue;
                }
                let (mut dot, mut norm) = (0.0_f32, 0.0_f32);
                for &t in file_terms(file, line, line) {
                    dot += toward.get(t as usize).copied().unwrap_or(0.0);
                    norm += length.get(t as usize).copied().unwrap_or(0.0);
                }
                if norm <= 0.0 {
                    continue;
                }
                let similarity = dot / norm.sqrt();
                if similarity < least
                    || best.len() == most && best.last().is_some_and(|b| b.similarity >= similarity)
                {
                    continue;
                }
                let at = best.partition_point(|b| b.similarity >= similarity);
                best.insert(
                    at,
                    Close {
                        similarity,
                        file: slot as u32,
                        line: line as u32,
                    },
                );
                best.truncate(most);
            }
        }
        best
    }

    /// The hit quoting a close line: the line, or a lone heading with the lines under it.
    pub(super) fn close_hit(&self, close: Close) -> Option<LocalHit> {
        let file = self.files.get(close.file as usize)?.as_ref()?;
        let line = close.line as usize;
        let chunk = file
            .chunks
            .iter()
            .map(|&c| self.chunk_info[c as usize].range)
            .find(|r| r.start <= line && line <= r.end)
            .unwrap_or(LineRange {
                start: line,
                end: line,
            });
        let window = snippet::quoted(
            LineRange {
                start: line,
                end: line,
            },
            chunk,
            |i| file.line(i),
        );
        Some(LocalHit {
            path: file.path.clone(),
            start_line: window.start + 1,
            end_line: window.end + 1,
            score: close.similarity,
            weak: true,
            snippet: snippet::text(window, |i| file.line(i)),
        })
    }
}
