//! Cutting a note into line-ranged chunks, the unit of ranking: about [`ChunkOptions::max_tokens`]
//! each, cut where the writer put a boundary (a heading, a blank line, a new bullet) rather than
//! mid-thought, with a little overlap so a fact near a cut is whole in one of the two chunks.

use crate::index::tokenize::approx_tokens;

/// Chunk sizing. The defaults are OpenClaw's own (400 tokens, 80 overlap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Largest chunk, in approximate tokens (a single longer block is split by lines).
    pub max_tokens: usize,
    /// How much of the previous chunk's tail the next one repeats, in approximate tokens.
    pub overlap_tokens: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        Self {
            max_tokens: 400,
            overlap_tokens: 80,
        }
    }
}

/// A chunk: an inclusive range of 0-based line indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineRange {
    /// First line (0-based).
    pub start: usize,
    /// Last line (0-based, inclusive).
    pub end: usize,
}

/// A run of lines that belongs together: a heading line, one bullet with its continuation
/// lines, or a paragraph.
#[derive(Debug, Clone, Copy)]
struct Block {
    start: usize,
    end: usize,
    tokens: usize,
    heading: bool,
}

/// A heading line: one that starts with `#` (a Markdown heading; also a `#tag` line, which
/// starts a block as well).
pub(super) fn is_heading(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

fn is_bullet(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("+ ")
        || t.find(". ")
            .is_some_and(|i| i > 0 && i <= 3 && t[..i].bytes().all(|b| b.is_ascii_digit()))
}

fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            out.extend(open.take());
            continue;
        }
        let tokens = approx_tokens(line);
        let heading = is_heading(line);
        let starts_new = heading || is_bullet(line) || open.is_some_and(|b| b.heading);
        match open.as_mut() {
            Some(block) if !starts_new => {
                block.end = i;
                block.tokens += tokens;
            }
            _ => {
                out.extend(open.take());
                open = Some(Block {
                    start: i,
                    end: i,
                    tokens,
                    heading,
                });
            }
        }
    }
    out.extend(open);
    out
}

/// Splits a block longer than `max` tokens into line runs of at most `max` tokens.
fn split_long(block: Block, lines: &[&str], max: usize) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for (i, line) in lines
        .iter()
        .enumerate()
        .take(block.end + 1)
        .skip(block.start)
    {
        let tokens = approx_tokens(line);
        match current.as_mut() {
            Some(c) if c.tokens + tokens <= max => {
                c.end = i;
                c.tokens += tokens;
            }
            _ => {
                out.extend(current.take());
                current = Some(Block {
                    start: i,
                    end: i,
                    tokens,
                    heading: false,
                });
            }
        }
    }
    out.extend(current);
    out
}

/// Cuts `lines` into chunks. Blank-only notes have no chunks.
pub fn chunk_lines(lines: &[&str], options: ChunkOptions) -> Vec<LineRange> {
    let max = options.max_tokens.max(1);
    let units: Vec<Block> = blocks(lines)
        .into_iter()
        .flat_map(|b| {
            if b.tokens > max {
                split_long(b, lines, max)
            } else {
                vec![b]
            }
        })
        .collect();

    let mut chunks = Vec::new();
    let mut first = 0; // index into `units` of the current chunk's first unit
    while first < units.len() {
        let mut last = first;
        let mut tokens = units[first].tokens;
        while last + 1 < units.len() {
            let next = units[last + 1];
            // A heading starts a new chunk once this one holds a fair amount already, so a
            // section stays with its heading instead of trailing the previous section.
            let section_break = next.heading && tokens >= max / 4;
            if tokens + next.tokens > max || section_break {
                break;
            }
            last += 1;
            tokens += next.tokens;
        }
        chunks.push(LineRange {
            start: units[first].start,
            end: units[last].end,
        });
        if last + 1 >= units.len() {
            break;
        }
        // Overlap: step back over trailing units of this chunk (never past its first unit,
        // never into a new section) while they fit in the overlap budget.
        let mut next_first = last + 1;
        if !units[next_first].heading {
            let mut carried = 0;
            while next_first - 1 > first
                && !units[next_first - 1].heading
                && carried + units[next_first - 1].tokens <= options.overlap_tokens
            {
                next_first -= 1;
                carried += units[next_first].tokens;
            }
        }
        first = next_first;
    }
    chunks
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn ranges(text: &str, max_tokens: usize, overlap_tokens: usize) -> Vec<(usize, usize)> {
        let lines: Vec<&str> = text.lines().collect();
        chunk_lines(
            &lines,
            ChunkOptions {
                max_tokens,
                overlap_tokens,
            },
        )
        .into_iter()
        .map(|r| (r.start, r.end))
        .collect()
    }

    #[test]
    fn a_short_note_is_one_chunk() {
        assert_eq!(
            ranges("# Day\n\n- one thing\n- another\n", 400, 80),
            [(0, 3)]
        );
    }

    #[test]
    fn blank_notes_have_no_chunks() {
        assert_eq!(ranges("\n  \n", 400, 80), []);
    }

    #[test]
    fn cuts_between_bullets_not_inside_them_and_overlaps() {
        let text = "- a1 a2 a3\n  a4 a5\n- b1 b2 b3\n- c1 c2 c3\n- d1 d2 d3\n";
        // Bullet a spans lines 0-1 (6 tokens with its marker); b, c, d are 4 tokens each.
        assert_eq!(ranges(text, 10, 4), [(0, 2), (2, 3), (3, 4)]);
    }

    #[test]
    fn headings_start_new_chunks_and_stay_with_their_section() {
        let text = "# One\nalpha beta gamma delta\n# Two\nepsilon zeta eta theta\n";
        assert_eq!(ranges(text, 10, 3), [(0, 1), (2, 3)]);
    }

    #[test]
    fn a_block_longer_than_a_chunk_is_split_by_lines() {
        let text = "w1 w2 w3\nw4 w5 w6\nw7 w8 w9\n";
        assert_eq!(ranges(text, 4, 0), [(0, 0), (1, 1), (2, 2)]);
    }

    #[test]
    fn every_line_with_text_is_in_some_chunk() {
        let text: String = (0..200)
            .map(|i| {
                if i % 17 == 0 {
                    format!("## Section {i}\n")
                } else if i % 5 == 0 {
                    "\n".to_owned()
                } else {
                    format!("- item {i} with several words in it\n")
                }
            })
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        let chunks = chunk_lines(
            &lines,
            ChunkOptions {
                max_tokens: 40,
                overlap_tokens: 10,
            },
        );
        for (i, line) in lines.iter().enumerate() {
            if !line.trim().is_empty() {
                assert!(
                    chunks.iter().any(|c| c.start <= i && i <= c.end),
                    "line {i} lost"
                );
            }
        }
        assert!(chunks.windows(2).all(|w| w[0].start < w[1].start));
    }
}
