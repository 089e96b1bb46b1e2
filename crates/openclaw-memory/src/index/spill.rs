//! A cold build's notes, out of the heap: as each note is indexed, its text and its per-line
//! term lists go to an unnamed temporary file, and once every note is in, that file is mapped
//! and the notes are read in place from it, as a loaded index reads its saved file. A build
//! then holds only the postings and the tables, not the whole corpus twice over (its text, and
//! a term id per word), which at 50,000 notes was most of its memory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use crate::index::IndexedFile;
use crate::index::mapped::{Backing, Ids, Region, Text};

/// Where one note's blocks went: they follow each other from byte `at` of the spill file (its
/// line offsets, its terms, its per-line term offsets, its chunks' counted terms for the
/// postings, its text), each padded to 4 bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spilled {
    at: u64,
    lines: u32,
    terms: u32,
    counted: u32,
    text: u32,
}

/// The spill file while a build writes it.
#[derive(Debug)]
pub(crate) struct Spill {
    out: BufWriter<File>,
    written: usize,
}

impl Spill {
    /// An unnamed file in `dir` (the index's private state directory), or in the system's
    /// temporary directory when there is none; it is gone with the last handle to it.
    pub(crate) fn create(dir: Option<&Path>) -> std::io::Result<Self> {
        let file = match dir {
            Some(dir) => tempfile::tempfile_in(dir)?,
            None => tempfile::tempfile()?,
        };
        Ok(Self {
            out: BufWriter::with_capacity(1 << 20, file),
            written: 0,
        })
    }

    /// Writes `file`'s text and term lists out and empties them in memory; [`Self::map`] and
    /// [`Spilled::restore`] bring them back, read in place. `counted` (its chunks' counted
    /// terms, from [`Bm25Index::take_deferred`](crate::index::bm25::Bm25Index)) goes out with
    /// them, for [`Spilled::counted`] to hand back.
    pub(crate) fn take(
        &mut self,
        file: &mut IndexedFile,
        counted: &[u32],
    ) -> std::io::Result<Spilled> {
        let count = |n: usize| {
            u32::try_from(n).map_err(|_| std::io::Error::other("a note too large to spill"))
        };
        let spilled = Spilled {
            at: self.written as u64,
            lines: count(file.line_starts.len())?,
            terms: count(file.terms.len())?,
            counted: count(counted.len())?,
            text: count(file.text.bytes().len())?,
        };
        if file.term_starts.len() != file.line_starts.len() + 1 {
            return Err(std::io::Error::other(
                "a note's term offsets do not match its lines",
            ));
        }
        self.put(bytemuck::cast_slice(&file.line_starts))?;
        self.put(bytemuck::cast_slice(&file.terms))?;
        self.put(bytemuck::cast_slice(&file.term_starts))?;
        self.put(bytemuck::cast_slice(counted))?;
        self.put(file.text.bytes())?;
        file.line_starts = Ids::default();
        file.terms = Ids::default();
        file.term_starts = Ids::default();
        file.text = Text::Owned("".into());
        Ok(spilled)
    }

    /// Appends `bytes`, padded to 4 bytes so that `u32`s can be read in place.
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        let pad = bytes.len().next_multiple_of(4) - bytes.len();
        self.out.write_all(&[0; 3][..pad])?;
        self.written += bytes.len() + pad;
        Ok(())
    }

    /// The written file, mapped.
    pub(crate) fn map(self) -> std::io::Result<Arc<Backing>> {
        let file = self
            .out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        let backing = Backing::map(&file)?;
        if backing.len() != self.written {
            return Err(std::io::Error::other(
                "the spill file is shorter than written",
            ));
        }
        backing.expect_random_reads();
        Ok(Arc::new(backing))
    }
}

impl Spilled {
    /// Points `file` at its blocks in `backing`; `false` when they are not there.
    pub(crate) fn restore(self, backing: &Arc<Backing>, file: &mut IndexedFile) -> bool {
        let Ok(mut at) = usize::try_from(self.at) else {
            return false;
        };
        let (lines, terms, text) = (self.lines as usize, self.terms as usize, self.text as usize);
        let mut ids = |len: usize| {
            let ids = Ids::mapped(backing, at, len)?;
            at += len * 4;
            Some(ids)
        };
        let (Some(line_starts), Some(terms), Some(term_starts), Some(_counted)) = (
            ids(lines),
            ids(terms),
            ids(lines + 1),
            ids(self.counted as usize),
        ) else {
            return false;
        };
        let Some(text) = Region::new(backing, at, text) else {
            return false;
        };
        file.line_starts = line_starts;
        file.terms = terms;
        file.term_starts = term_starts;
        file.text = Text::Mapped(text);
        true
    }

    /// The counted terms [`Spill::take`] wrote out with the note, read in place.
    pub(crate) fn counted(self, backing: &Arc<Backing>) -> Option<Ids> {
        let at = usize::try_from(self.at).ok()?;
        let before = (self.lines as usize * 2 + 1 + self.terms as usize) * 4;
        Ids::mapped(backing, at + before, self.counted as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::MemoryPath;
    use crate::store::FileStamp;

    #[test]
    fn a_spilled_note_reads_back_the_same_in_place() {
        let text = "- first line\n- second, longer line\n";
        let mut file = IndexedFile {
            path: MemoryPath::parse("memory/a.md").unwrap(),
            stamp: FileStamp {
                len: 0,
                modified: None,
                inode: 0,
            },
            text: Text::Owned(text.into()),
            line_starts: vec![0, 13].into(),
            chunks: vec![0],
            day: None,
            time: None,
            terms: vec![1, 2, 3, 4, 5].into(),
            term_starts: vec![0, 2, 5].into(),
            superseded: Vec::new(),
            message_starts: Vec::new(),
        };
        let mut other = IndexedFile {
            text: Text::Owned("odd length".into()),
            line_starts: vec![0].into(),
            terms: vec![9].into(),
            term_starts: vec![0, 1].into(),
            ..file.clone()
        };
        let dir = tempfile::TempDir::new().unwrap();
        let mut spill = Spill::create(Some(dir.path())).unwrap();
        let first = spill.take(&mut file, &[2, 7, 1, 8, 2]).unwrap();
        let second = spill.take(&mut other, &[]).unwrap();
        assert!(file.text.bytes().is_empty() && file.terms.is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "unnamed");
        let backing = spill.map().unwrap();
        assert!(first.restore(&backing, &mut file));
        assert!(second.restore(&backing, &mut other));
        assert_eq!(file.line(1), "- second, longer line");
        assert_eq!(&*file.terms, &[1, 2, 3, 4, 5]);
        assert_eq!(&*file.term_starts, &[0, 2, 5]);
        assert_eq!(&*other.terms, &[9]);
        assert_eq!(other.text.bytes(), b"odd length");
        assert_eq!(&*first.counted(&backing).unwrap(), &[2, 7, 1, 8, 2]);
        assert!(second.counted(&backing).unwrap().is_empty());
    }
}
