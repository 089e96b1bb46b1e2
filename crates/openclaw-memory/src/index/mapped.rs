//! Index data that lives either on the heap (built in this process) or in place in a saved
//! index file mapped into memory, so a process that loads the index reads only the pages a
//! search touches instead of decoding the whole file.
//!
//! The mapping is the one `unsafe` in the crate: a mapped file changed by someone else while
//! mapped would change (or, truncated, fault) what we read. Our index files are never changed
//! in place (a save writes a new file and renames it over the old one, which leaves the old
//! mapping intact); they sit in a 0700 directory, are 0600, and are opened without following
//! symlinks, so only their owner could do that, and the owner can also replace the program.

use std::fs::File;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// The bytes of a saved index: the mapped file, or (tests, and files too small to map) a copy
/// on the heap, 8-byte aligned like a mapping so its `u32` blocks can be read in place.
#[derive(Debug)]
pub enum Backing {
    /// The file, mapped read-only.
    Mapped(memmap2::Mmap),
    /// A copy; the `usize` is the length in bytes.
    Heap(Vec<u64>, usize),
}

impl Backing {
    /// Maps `file` read-only.
    pub fn map(file: &File) -> std::io::Result<Self> {
        #[expect(
            unsafe_code,
            reason = "mapping a file is unsafe only if another process changes it while \
                      mapped; see the module comment for why ours are never changed in place"
        )]
        // SAFETY: see the module comment: saved index files are written once, then renamed
        // into place, never modified; the directory and file are private to their owner.
        let map = unsafe { memmap2::Mmap::map(file)? };
        Ok(Self::Mapped(map))
    }

    /// A heap copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> Self {
        let mut words = vec![0_u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Self::Heap(words, bytes.len())
    }

    /// Tells the kernel the pages of `range` are not needed for now (they stay in the page
    /// cache, and come back on the next read): the checksum reads the whole file once, and a
    /// search reads a little here and there, and without this every page read would go on
    /// counting towards the process's memory (this kernel maps a few hundred kilobytes around
    /// each page a read touches).
    pub fn release(&self, range: Range<usize>) {
        if let Self::Mapped(map) = self {
            #[expect(
                unsafe_code,
                reason = "MADV_DONTNEED on a read-only shared file mapping only drops pages \
                          that are read back from the file on the next access"
            )]
            // SAFETY: the mapping is read-only and shared (`Mmap::map`), so dropping its
            // pages loses nothing: the next read faults them in from the file again.
            let _advisory = unsafe {
                map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    range.start,
                    range.len(),
                )
            };
        }
    }

    /// Tells the kernel the whole file is about to be read front to back (the checksum).
    pub fn expect_sequential_reads(&self) {
        if let Self::Mapped(map) = self {
            let _advisory = map.advise(memmap2::Advice::Sequential);
        }
    }

    /// Gives back every page of the file read so far (see [`Self::release`]).
    pub fn release_all(&self) {
        self.release(0..self.len());
    }

    /// Tells the kernel that reads from here on are random (a search reads a few postings
    /// and lines here and there): a page that has to come from disk again brings no
    /// read-ahead with it. (It does not shrink what the kernel maps around a page already
    /// cached; giving pages back, [`Self::release`], is what bounds that.)
    pub fn expect_random_reads(&self) {
        if let Self::Mapped(map) = self {
            let _advisory = map.advise(memmap2::Advice::Random);
        }
    }
}

impl Deref for Backing {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Mapped(map) => map,
            Self::Heap(words, len) => &bytemuck::cast_slice::<u64, u8>(words)[..*len],
        }
    }
}

/// The process's resident shared memory in bytes: its own code and the pages of the files it
/// maps (`/proc/self/statm`); `None` where there is no such file.
pub fn resident_shared_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(2)?.parse().ok()?;
    Some(pages * rustix::param::page_size() as u64)
}

/// A byte range of a saved index.
#[derive(Debug, Clone)]
pub struct Region {
    backing: Arc<Backing>,
    start: usize,
    len: usize,
}

impl Region {
    /// `start..start + len` of `backing`; `None` when out of range.
    pub fn new(backing: &Arc<Backing>, start: usize, len: usize) -> Option<Self> {
        let end = start.checked_add(len)?;
        (end <= backing.len()).then(|| Self {
            backing: Arc::clone(backing),
            start,
            len,
        })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.backing
            .get(self.start..self.start + self.len)
            .unwrap_or_default()
    }
}

/// A list of `u32`s (term ids, offsets, (id, count) pairs): owned, or read in place from a
/// saved index (little-endian, 4-byte aligned, checked when loaded).
#[derive(Debug, Clone)]
pub enum Ids {
    /// Built in this process, or changed since it was loaded.
    Owned(Vec<u32>),
    /// In a saved index.
    Mapped(Region),
}

impl Default for Ids {
    fn default() -> Self {
        Self::Owned(Vec::new())
    }
}

impl Ids {
    /// `len` values at byte `start` of `backing`; `None` when out of range or misaligned.
    pub fn mapped(backing: &Arc<Backing>, start: usize, len: usize) -> Option<Self> {
        let region = Region::new(backing, start, len.checked_mul(4)?)?;
        bytemuck::try_cast_slice::<u8, u32>(region.bytes()).ok()?;
        Some(Self::Mapped(region))
    }

    /// The values, owned from now on (copied once out of the saved index).
    pub fn make_mut(&mut self) -> &mut Vec<u32> {
        if let Self::Mapped(_) = self {
            *self = Self::Owned(self.to_vec());
        }
        match self {
            Self::Owned(values) => values,
            Self::Mapped(_) => unreachable!("replaced just above"),
        }
    }
}

impl Deref for Ids {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        match self {
            Self::Owned(values) => values,
            // Checked in `Ids::mapped`; little-endian only (the loader refuses big-endian).
            Self::Mapped(region) => bytemuck::try_cast_slice(region.bytes()).unwrap_or_default(),
        }
    }
}

impl From<Vec<u32>> for Ids {
    fn from(values: Vec<u32>) -> Self {
        Self::Owned(values)
    }
}

/// A note's text: owned, or in place in a saved index (checked as UTF-8 line by line as it is
/// read).
#[derive(Debug, Clone)]
pub enum Text {
    /// Read from the note in this process.
    Owned(Arc<str>),
    /// In a saved index.
    Mapped(Region),
}

impl Text {
    /// The text of a byte range (a line), empty when the range is out of bounds or, in a
    /// saved index, not UTF-8.
    pub fn slice(&self, range: Range<usize>) -> &str {
        match self {
            Self::Owned(text) => text.get(range).unwrap_or_default(),
            Self::Mapped(region) => region
                .bytes()
                .get(range)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
        }
    }

    /// The text's bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Self::Owned(text) => text.as_bytes(),
            Self::Mapped(region) => region.bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_ids_read_in_place_and_copy_on_change() {
        let values = [7_u32, 0, u32::MAX];
        let mut bytes = vec![0_u8; 4];
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let backing = Arc::new(Backing::copy_of(&bytes));
        let mut ids = Ids::mapped(&backing, 4, 3).unwrap();
        assert_eq!(&*ids, &values);
        assert!(Ids::mapped(&backing, 2, 3).is_none(), "misaligned");
        assert!(Ids::mapped(&backing, 4, 4).is_none(), "past the end");
        ids.make_mut().push(1);
        assert_eq!(&*ids, &[7, 0, u32::MAX, 1]);
    }
}
