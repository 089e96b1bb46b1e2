//! The part of indexing a file that needs nothing from the index: reading it, cutting it into
//! lines and chunks, finding its marked lines and splitting its lines into words. A large
//! refresh (a cold build) runs it on a second thread, a few files ahead of the thread that
//! assigns term ids and fills the index in file order, so ids never depend on threads.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};

use crate::index::chunk::{ChunkOptions, LineRange, chunk_lines};
use crate::index::tokenize::Analyzer;
use crate::index::transcript;
use crate::paths::MemoryPath;
use crate::store::{MAX_FILE_BYTES, OpenWorkspace, StoreError};

/// Files from which a refresh prepares them on a second thread: fewer cost less than the
/// thread.
pub const PARALLEL_MIN_FILES: usize = 64;
/// Files prepared ahead of the indexing thread: enough to smooth out uneven files, few enough
/// that their words stay a small share of memory.
const AHEAD_FILES: usize = 64;

/// A file read and analysed, waiting for its term ids.
#[derive(Debug)]
pub struct Prepared {
    /// The file's text.
    pub text: Arc<str>,
    /// Byte offset of each line's start in `text`.
    pub line_starts: Vec<u32>,
    /// Lines holding a replaced fact (sorted, 0-based).
    pub superseded: Vec<usize>,
    /// The chunks' line ranges.
    pub chunks: Vec<LineRange>,
    /// Every line's words back to back.
    pub words: String,
    /// Where each word ends in `words`.
    pub word_ends: Vec<u32>,
    /// Line `i`'s words are `word_ends[line_words[i]..line_words[i + 1]]`.
    pub line_words: Vec<u32>,
    /// Where each of a session-memory message's own lines starts, as indexes into the words
    /// (sorted): see [`message_starts`].
    pub message_starts: Vec<u32>,
}

impl Prepared {
    /// Reads and analyses the file at `path`.
    pub fn read(
        open: &mut OpenWorkspace,
        path: &MemoryPath,
        analyzer: &Analyzer,
        chunking: ChunkOptions,
    ) -> Result<Self, StoreError> {
        let text: Arc<str> = open.read(path, MAX_FILE_BYTES)?.into();
        Ok(Self::of(path, text, analyzer, chunking))
    }

    fn of(path: &MemoryPath, text: Arc<str>, analyzer: &Analyzer, chunking: ChunkOptions) -> Self {
        // Notes are at most `MAX_FILE_BYTES` (4 MiB): offsets fit in a u32.
        let offset = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| offset(i + 1)));
        if line_starts.last() == Some(&offset(text.len())) && !text.is_empty() {
            line_starts.pop();
        }
        let superseded = super::marked::marked_lines(path, &text);
        let at = |i: usize| line_starts.get(i).map_or(text.len(), |&at| at as usize);
        let lines: Vec<&str> = (0..line_starts.len())
            .map(|i| {
                text.get(at(i)..at(i + 1))
                    .unwrap_or_default()
                    .trim_end_matches(['\n', '\r'])
            })
            .collect();
        let mut words = String::with_capacity(text.len());
        let mut word_ends: Vec<u32> = Vec::with_capacity(text.len() / 6);
        let mut line_words: Vec<u32> = Vec::with_capacity(lines.len() + 1);
        let mut message_starts: Vec<u32> = Vec::new();
        for line in &lines {
            line_words.push(offset(word_ends.len()));
            // A message's own lines, in order as its words are: the first word of each starts it.
            let mut own_lines = transcript::message(line).map(|m| m.own_lines(line).peekable());
            let mut started = None;
            analyzer.for_each_term_at(line, |word, at| {
                if let Some(own_lines) = own_lines.as_mut() {
                    while own_lines.next_if(|l| l.end <= at).is_some() {}
                    let own = own_lines.peek().filter(|l| l.contains(&at));
                    if let Some(own) = own.filter(|l| started != Some(l.start)) {
                        started = Some(own.start);
                        message_starts.push(offset(word_ends.len()));
                    }
                }
                words.push_str(word);
                word_ends.push(offset(words.len()));
            });
        }
        line_words.push(offset(word_ends.len()));
        let chunks = chunk_lines(&lines, chunking);
        drop(lines);
        Self {
            text,
            line_starts,
            superseded,
            chunks,
            words,
            word_ends,
            line_words,
            message_starts,
        }
    }

    /// The words, in order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.word_ends.iter().map(move |&end| {
            let word = self.words.get(start..end as usize).unwrap_or_default();
            start = end as usize;
            word
        })
    }
}

/// Prepares `paths` in order on a thread of `scope`, at most [`AHEAD_FILES`] ahead of the
/// receiver; stops early when the receiver is dropped.
pub fn ahead<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    mut open: OpenWorkspace,
    paths: Vec<MemoryPath>,
    analyzer: Analyzer,
    chunking: ChunkOptions,
) -> Receiver<Result<Prepared, StoreError>> {
    let (tx, rx) = sync_channel(AHEAD_FILES);
    scope.spawn(move || {
        for path in &paths {
            let prepared = Prepared::read(&mut open, path, &analyzer, chunking);
            if tx.send(prepared).is_err() {
                break;
            }
        }
    });
    rx
}
