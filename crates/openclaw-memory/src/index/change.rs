//! Curated statements the dated notes record as changed. `MEMORY.md` says what was true when it
//! was last curated, and a line nobody updated still reads as current: "Gym: PureGym" after a
//! daily note "Cancelled PureGym and joined Bodyworks". Such a note names a value of the curated
//! line as something left behind (cancelled, sold, replaced, switched from, gave up, rather
//! than, no longer): it records the change. The search quotes that note right above the curated
//! line, so the page reads the change before the stale statement; the curated line stays, as
//! the history it is. Nothing is inferred from a note that merely mentions the value ("PureGym
//! at six, legs day"), and a note that moves *to* a value of the curated line ("moved her
//! account from Chase to BECU" beside "Bank: BECU") confirms it rather than replacing it.

use std::collections::VecDeque;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use crate::index::bm25::TermId;
use crate::index::query::file_terms;
use crate::index::tokenize::keeps;
use crate::index::transcript;
use crate::index::{LocalHit, MemoryIndex};

/// Share of the index's chunks a value word may appear in at most: a value names one thing (a
/// gym, a medicine, a car), not a word of everyday use that any note may place after "from".
/// It also bounds the lines read per value. One note in ten: on the changes set every value
/// word of a stale `MEMORY.md` line is in under 5 % of the chunks (most notes are one chunk),
/// and without any bound the tuned and changes sets rank the same. A small workspace allows
/// [`VALUE_CHUNKS`] whatever its size: in twenty notes, a gym named in three is no less a name.
const VALUE_SHARE: f32 = 0.1;
/// Chunks a value word may appear in whatever the share (see [`VALUE_SHARE`]).
const VALUE_CHUNKS: f32 = 10.0;
/// Value words of one line looked up, the rarest first: a value is a few words ("PureGym,
/// Kirkstall Road, early mornings" has five), and a pasted paragraph in `MEMORY.md` must not
/// cost a lookup per word. Eight: the tuning sets rank the same with three or with no cap, and
/// all but a few of their curated lines hold fewer rare words than that.
const MAX_VALUES: usize = 8;

/// Words that say the value right after them was left behind: "Cancelled PureGym", "sold the
/// old Corolla", "Dropped Disney+". Not "left", "stopped", "ended", "closed": mostly they say
/// something else ("left Ada at nursery", "stopped at Tesco").
const LEAVING: &[&str] = &[
    "cancel",
    "cancelled",
    "canceled",
    "cancelling",
    "ditched",
    "dropped",
    "quit",
    "replaced",
    "replacing",
    "sold",
    "swapped",
    "traded",
];

/// Two-word forms of the same: "gave up the Woodhouse Ridge plot", "switched her preventer
/// from Clenil", "rather than a private landlord". ("No longer" takes a word between: see
/// [`leaves`].)
const LEAVING_PAIRS: &[(&str, &str)] = &[
    ("gave", "up"),
    ("given", "up"),
    ("giving", "up"),
    ("instead", "of"),
    ("rather", "than"),
    ("moved", "from"),
    ("moving", "from"),
    ("switched", "from"),
    ("switching", "from"),
    ("changed", "from"),
];

/// Words that may stand between a leaving word and the value: "cancelled *the old* PureGym".
const FILLERS: &[&str] = &[
    "a", "an", "the", "her", "his", "their", "my", "our", "its", "old", "former", "previous",
];

/// Words after "dropped" that make it a drop-off, not a leaving: "dropped Ada at nursery".
const DROP_OFF: &[&str] = &["off", "at", "by", "round", "in", "into", "to", "with"];

/// Words that name the new value after them: "from Chase *to* BECU", "replaced it *with* a
/// Pixel", "*joined* Bodyworks", "*now* Fostair".
const ARRIVING: &[&str] = &["to", "with", "for", "joined", "now"];

/// The word [`words`] puts where a sentence or clause ends; no cue or value matches it.
const STOP: &str = ".";
/// The word [`words`] puts at a comma or a dash; no value matches it.
const COMMA: &str = ",";

/// A line's words, lower case, split on every character that is not a letter or a digit, with
/// [`STOP`] where a sentence or clause ends ("the ones need replacing. Answer …" does not
/// replace the answer) and [`COMMA`] at a comma or dash (", not Brightside"). Unlike the
/// index's terms, function words stay: they are what says which value was left.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in line.split_inclusive(|c: char| !c.is_alphanumeric()) {
        let word = piece.trim_end_matches(|c: char| !c.is_alphanumeric());
        if !word.is_empty() {
            out.push(word.to_lowercase());
        }
        if piece.ends_with(['.', ';', '!', '?', ':']) {
            out.push(STOP.to_owned());
        } else if piece.ends_with([',', '—', '–']) {
            out.push(COMMA.to_owned());
        }
    }
    out
}

/// Whether a line holds any word [`leaves`] looks for (as a substring, in any case: "quit" in
/// "quite" too), checked before the line is split into words, which most lines naming a value
/// never need. One pass over the line for every cue at once.
fn may_leave(line: &str) -> bool {
    static CUES: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
        let first_of_pairs = LEAVING_PAIRS.iter().map(|(first, _)| *first);
        let others = [
            "from", "longer", "anymore", "any more", "gone", "closed", ", not", "— not", "– not",
        ];
        let cues: Vec<&str> = LEAVING
            .iter()
            .copied()
            .chain(first_of_pairs)
            .chain(others)
            .collect();
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(cues)
            .ok()
    });
    // Literal cues always build; were they not to, every line is read word by word.
    CUES.as_ref().is_none_or(|cues| cues.is_match(line))
}

/// Whether `words[at]` is named as left behind: a leaving word before it (fillers between), "no
/// longer" and one word or ", not" before it, "from it to" something (with more of the
/// statement's `values` between: "from Woodhouse Ridge to"), or "anymore", "is gone", "was
/// replaced" after it, in the same sentence.
fn leaves(words: &[String], at: usize, values: &[String]) -> bool {
    let word = |i: usize| words.get(i).map_or("", String::as_str);
    // "Swapped Maya's laptop" leaves the laptop, not Maya; "sold the old Corolla", the Corolla.
    if word(at + 1) == "s" || word(at) == STOP || FILLERS.contains(&word(at)) {
        return false;
    }
    let mut before = at;
    while before > 0 && FILLERS.contains(&word(before - 1)) {
        before -= 1;
    }
    if before > 0 {
        let cue = word(before - 1);
        if LEAVING.contains(&cue) {
            return !(cue == "dropped" && DROP_OFF.contains(&word(at + 1)));
        }
        if before > 1 && LEAVING_PAIRS.contains(&(word(before - 2), cue)) {
            return true;
        }
        // "No longer" and one word: "no longer drives the Subaru", "no longer at the council".
        if before > 2
            && (word(before - 3), word(before - 2)) == ("no", "longer")
            && cue != STOP
            && cue != COMMA
        {
            return true;
        }
        // A correction: "the dentist is Meanwood, not Brightside". (Not a bare "not": "not
        // PureGym today, too tired".)
        if cue == "not" && before > 1 && word(before - 2) == COMMA {
            return true;
        }
        // Not "from Monday Dana reports to Marcus": only the value's own words stand between.
        if cue == "from"
            && word(
                (at + 1..words.len())
                    .find(|&i| !values.iter().any(|v| v == word(i)))
                    .unwrap_or(words.len()),
            ) == "to"
        {
            return true;
        }
    }
    let sentence = (at + 1..(at + 4).min(words.len())).take_while(|&i| word(i) != STOP);
    let after = |a: &str, b: &str| sentence.clone().any(|i| word(i) == a && word(i + 1) == b);
    // "Doesn't go to PureGym anymore", "not with Vodafone any more".
    let no_more = word(at + 1) == "anymore" || (word(at + 1), word(at + 2)) == ("any", "more");
    no_more || after("is", "gone") || after("was", "replaced") || after("has", "closed")
}

/// Whether the line names one of `values` as the new value ("to BECU", "joined Bodyworks"):
/// it confirms the curated line rather than replacing it.
fn arrives_at(words: &[String], values: &[String]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        ARRIVING.contains(&w.as_str())
            && words[i + 1..]
                .iter()
                .find(|next| !FILLERS.contains(&next.as_str()))
                .is_some_and(|next| values.contains(next))
    })
}

/// The words of a curated line that state its value: not its label ("Gym:" of "- Gym: PureGym,
/// Kirkstall Road"), not struck-through text, not what the line itself says was left ("Netflix
/// cancelled January 2026"), not function words, numbers or single letters.
fn value_words(line: &str) -> Vec<String> {
    let line = line.trim_start();
    if line.starts_with('#') || line.starts_with("<!--") {
        return Vec::new();
    }
    let line = line.trim_start_matches(['-', '*', '+', ' ', '\t']);
    let (label, value) = match line.split_once(':') {
        Some((label, value)) if label.len() <= 40 && !label.contains("~~") => (label, value),
        _ => ("", line),
    };
    // Every other piece between `~~`s is struck through.
    let unstruck: String = value.split("~~").step_by(2).collect::<Vec<_>>().join(" ");
    let label = words(label);
    let said = words(&unstruck);

    let left = |i: usize| {
        leaves(&said, i, &[])
            || said
                .get(i + 1)
                .is_some_and(|next| LEAVING.contains(&next.as_str()))
    };
    let mut values: Vec<String> = Vec::new();
    for (i, word) in said.iter().enumerate() {
        if word.chars().count() > 2
            && !word.chars().all(|c| c.is_ascii_digit())
            && keeps(word)
            && !label.contains(word)
            && !LEAVING.contains(&word.as_str())
            && !left(i)
            && !values.contains(word)
        {
            values.push(word.clone());
        }
    }
    values
}

/// Whether two hits quote a line in common.
fn overlaps(a: &LocalHit, b: &LocalHit) -> bool {
    a.path == b.path && a.start_line <= b.end_line && b.start_line <= a.end_line
}

/// A dated line that records a change away from a curated line's value.
#[derive(Debug, Clone, Copy)]
struct Change {
    day: i64,
    file: u32,
    line: usize,
}

impl MemoryIndex {
    /// The page with every hit from an undated file the dated notes record as changed preceded
    /// by the newest line that records it (moved up if it is further down the page), still at
    /// most `limit` hits.
    pub(super) fn changes_first(&self, hits: Vec<LocalHit>, limit: usize) -> Vec<LocalHit> {
        let mut page: Vec<LocalHit> = Vec::with_capacity(hits.len() + 1);
        let mut waiting: VecDeque<LocalHit> = hits.into();
        while let Some(hit) = waiting.pop_front() {
            let above = self
                .change_above(&hit)
                .filter(|line| !page.iter().any(|h| overlaps(h, line)));
            if let Some(line) = above {
                waiting.retain(|h| !overlaps(h, &line));
                page.push(line);
            }
            page.push(hit);
        }
        page.truncate(limit);
        page
    }

    /// The line that records a change of `hit`'s curated statement, quoted as a hit with its
    /// score and weakness; `None` for a hit from a dated note or with no change recorded.
    fn change_above(&self, hit: &LocalHit) -> Option<LocalHit> {
        let file = self.hit_file(hit)?;
        if file.day.is_some() {
            return None;
        }
        let change =
            self.recorded_change(file, hit.start_line.saturating_sub(1), hit.end_line - 1)?;
        self.line_hit(change.file, change.line, hit.score, hit.weak, None)
    }

    /// Whether a dated note records a change of lines `start..=end` (0-based) of the undated
    /// `file` ([`Self::recorded_change`]).
    pub(super) fn records_change(
        &self,
        file: &super::IndexedFile,
        start: usize,
        end: usize,
    ) -> bool {
        file.day.is_none() && self.recorded_change(file, start, end).is_some()
    }

    /// The newest dated line naming a value of lines `start..=end` (0-based) of `file` as left
    /// behind, without naming another of its values as the new one.
    fn recorded_change(
        &self,
        file: &super::IndexedFile,
        start: usize,
        end: usize,
    ) -> Option<Change> {
        #[expect(
            clippy::cast_precision_loss,
            reason = "a chunk count far below 2^23; the share is approximate"
        )]
        let most = (self.bm25.len() as f32 * VALUE_SHARE).max(VALUE_CHUNKS);
        let mut best: Option<Change> = None;
        for i in start..=end.min(file.line_count().saturating_sub(1)) {
            let values = value_words(&transcript::plain(file.line(i)));
            // The rarest few, each with its term: they name the thing.
            let mut named: Vec<(u32, &String, TermId)> = values
                .iter()
                .filter_map(|value| {
                    let term = self.lexicon.term(value, &self.bm25)?;
                    let notes = self.bm25.doc_freq(term);
                    #[expect(clippy::cast_precision_loss, reason = "as above")]
                    let rare = notes as f32 <= most;
                    rare.then_some((notes, value, term))
                })
                .collect();
            named.sort_by_key(|&(notes, ..)| notes);
            named.truncate(MAX_VALUES);
            for (_, value, term) in named {
                // A word of the line is the value when it is, or has its term (another form of
                // it); a word with another first letter cannot, and is not looked up.
                let same_word = |w: &str| {
                    w == value
                        || (w.as_bytes().first() == value.as_bytes().first()
                            && self.lexicon.term(w, &self.bm25) == Some(term))
                };
                for chunk in self.bm25.chunks_with(term) {
                    let info = self.chunk_info[chunk as usize];
                    let Some(note) = self.files[info.file as usize].as_ref() else {
                        continue;
                    };
                    let Some(day) = note.day else { continue };
                    // The newest note; on the same day the first in workspace order, as a fresh
                    // build would meet it (chunk ids follow the index's history).
                    let before = |b: &Change, line: usize| {
                        b.day > day
                            || b.day == day
                                && self.file_in(b.file).map(|f| (&f.path, b.line))
                                    <= Some((&note.path, line))
                    };
                    if best.as_ref().is_some_and(|b| before(b, info.range.start)) {
                        continue;
                    }
                    for line in info.range.start..=info.range.end {
                        if !file_terms(note, line, line).contains(&term) {
                            continue;
                        }
                        // Decoded only for the lines holding the value's word.
                        let text = transcript::plain(note.line(line));
                        if !may_leave(&text) {
                            continue;
                        }
                        let said = words(&text);
                        let left = said
                            .iter()
                            .enumerate()
                            .any(|(at, w)| same_word(w) && leaves(&said, at, &values));
                        if left
                            && !arrives_at(&said, &values)
                            && !best.as_ref().is_some_and(|b| before(b, line))
                        {
                            best = Some(Change {
                                day,
                                file: info.file,
                                line,
                            });
                            break;
                        }
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn left_in(line: &str) -> Vec<String> {
        left_of(line, &[])
    }

    fn left_of(line: &str, values: &[&str]) -> Vec<String> {
        let values: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
        let said = words(line);
        (0..said.len())
            .filter(|&i| leaves(&said, i, &values))
            .map(|i| said[i].clone())
            .collect()
    }

    #[test]
    fn a_value_is_left_after_a_leaving_word_or_between_from_and_to() {
        assert_eq!(
            left_in("Cancelled PureGym and joined Bodyworks"),
            ["puregym"]
        );
        assert_eq!(
            left_in("- Sold the old Corolla to a lad from Bramley"),
            ["corolla"]
        );
        assert_eq!(
            left_in("Gave up the Woodhouse Ridge plot as too far"),
            ["woodhouse"]
        );
        assert_eq!(
            left_in("Dr Whitfield switched her preventer from Clenil to Fostair"),
            ["clenil"]
        );
        assert_eq!(
            left_in("managed by Hadley Lets rather than a private landlord"),
            ["private"]
        );
        assert_eq!(left_in("The Subaru is gone; she drives a Kia"), ["subaru"]);
        assert_eq!(
            left_in("Maya no longer drives the Subaru; she has a Kia"),
            ["subaru"]
        );
        assert_eq!(left_in("She's no longer at the council"), ["council"]);
        assert_eq!(left_in("Doesn't go to PureGym anymore"), ["puregym"]);
        assert!(left_in("No longer. PureGym at six").is_empty());
        assert_eq!(
            left_in("Correction: the dentist is Meanwood, not Brightside"),
            ["brightside"]
        );
        assert_eq!(left_in("Meanwood Dental — not Brightside"), ["brightside"]);
        assert!(left_in("Not PureGym today, too tired").is_empty());
    }

    #[test]
    fn a_drop_off_or_a_plain_mention_leaves_nothing() {
        assert!(left_in("Dropped Ada at nursery, then PureGym").is_empty());
        assert!(left_in("PureGym at six, legs day").is_empty());
        assert!(left_in("Left the Corolla at the garage").is_empty());
        // Not across a sentence: the ones are replaced, not the answer.
        assert!(left_in("The ones need replacing. Answers by email").is_empty());
        assert!(left_in("Came back from Leeds. Went to bed").is_empty());
        // "From X to" only with the statement's own words between.
        assert_eq!(
            left_of(
                "Moved the plot from Woodhouse Ridge to Potternewton",
                &["woodhouse", "ridge"]
            ),
            ["woodhouse"]
        );
        assert!(left_of("From Monday Dana reports to Marcus", &["monday"]).is_empty());
        assert_eq!(
            left_in("Dropped Disney+ now Ada's gone off Bluey"),
            ["disney"]
        );
    }

    #[test]
    fn every_line_with_a_leaving_cue_may_leave() {
        for line in [
            "Cancelled PureGym",
            "- Sold the old Corolla",
            "Gave up the plot",
            "from Clenil to Fostair",
            "rather than a private landlord",
            "She's no longer at the council",
            "Doesn't go to PureGym anymore",
            "Not there any more",
            "The Subaru is gone",
            "The old gym was replaced",
            "PureGym has closed",
            "Meanwood, not Brightside",
        ] {
            let said = words(line);
            assert!(may_leave(line), "{line}");
            assert!((0..said.len()).any(|i| leaves(&said, i, &[])), "{line}");
        }
        assert!(!may_leave("PureGym at six, legs day"));
    }

    #[test]
    fn a_curated_value_is_what_the_label_introduces_and_the_line_does_not_strike_or_leave() {
        assert_eq!(
            value_words("- Gym: PureGym, Kirkstall Road, early mornings."),
            ["puregym", "kirkstall", "road", "early", "mornings"]
        );
        assert_eq!(
            value_words("- Streaming: Disney+ (Netflix cancelled January 2026)."),
            ["disney"]
        );
        assert_eq!(
            value_words("- Mobile: Pixel 8 on ~~Vodafone~~ giffgaff (since 2026-02)."),
            ["pixel", "giffgaff", "since"]
        );
        assert_eq!(
            value_words("- Bank: BECU checking (moved from Chase in February 2026)."),
            ["becu", "checking", "moved", "february"]
        );
        assert!(value_words("## Habits and kit").is_empty());
        // A line correcting itself: "miles" is what it left.
        assert!(
            !value_words("- Give distances in kilometres, not miles.")
                .contains(&"miles".to_owned())
        );
    }

    #[test]
    fn a_line_moving_to_the_curated_value_confirms_it() {
        let values = value_words("- Bank: BECU checking (moved from Chase in February 2026).");
        let said = words("Helped her move her checking account from Chase to BECU");
        assert!(arrives_at(&said, &values));
        let said = words("Cancelled PureGym and joined Bodyworks");
        assert!(!arrives_at(
            &said,
            &value_words("- Gym: PureGym, Kirkstall Road")
        ));
    }
}
