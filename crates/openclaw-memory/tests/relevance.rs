//! Measured relevance of the local search on the labelled sets under `tests/fixtures/`: the
//! tuned set `relevance/` (generated workspace and queries with graded line spans; see its
//! `generate.py`), the held-out sets `relevance-holdout/` to `relevance-holdout-13/` (but the
//! eighth), each written separately and never tuned on, the eighth set `relevance-holdout-8/`
//! (OpenClaw's session-memory notes: held out when it was measured, tuned on since issue 14's
//! twentieth round), and the lookups set
//! `relevance-lookups/` (queries made of a few words of one line of the tuned workspace, see its
//! `generate.py`), tuned on like the tuned set, and the changes set `relevance-changes/` (facts
//! that change over time, with a partly stale `MEMORY.md`; written by a helper who read neither
//! the ranking code nor the other sets, and looked at per query since), and the mixed set
//! `relevance-mixed/` (daily, session-memory and undated topic notes; written for tuning in
//! issue 14's twenty-first round, read per query). Each set is scored for
//! our ranking and, in the same run, for plain BM25 over 20-line chunks (the baseline any
//! ranking must beat). Prints nDCG@5, recall@5 and MRR overall and per kind of query, how often
//! a superseded fact outranks the current one, and how many hits no-answer queries get.
//! Per-query misses are printed for the tuned sets only: the held-out sets' per-query results
//! are not looked at, only their totals. One more test holds the ranking to the files alone: an
//! index that has seen notes edited, removed and put back answers every query of the tuning
//! sets exactly as a fresh build of the same files does.
//!
//! `RELEVANCE_SET=DIR` scores another set in the same format (`DIR/workspace`,
//! `DIR/queries.json`) as a held-out set. `RELEVANCE_ABLATION=1` prints the ablation table (each
//! set, then each component pooled over the held-out and over the tuning sets with paired
//! intervals) and `RELEVANCE_CEILING=1` the best a perfect re-ranker could do with the
//! candidates the search finds. `RELEVANCE_PAGES=DIR` writes every set's pages for re-rankers
//! measured outside the server. `cargo test -p openclaw-memory --test relevance --
//! --nocapture` shows the tables.
#![expect(
    clippy::cast_precision_loss,
    reason = "metrics over a few hundred queries"
)]

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use openclaw_memory::{LocalHit, MemoryIndex, MemoryStore, RankOptions, WordModel};
use serde_json::Value;

mod common;

/// Hits looked at per query, as the tool's default `limit`.
const K: usize = 5;
/// Grade from which a span counts as an answer (recall, MRR).
const ANSWER_GRADE: u64 = 2;
/// Lines per chunk of the BM25 baseline.
const BASELINE_CHUNK_LINES: usize = 20;

/// A ranked window of a file, whoever ranked it.
#[derive(Debug, Clone)]
struct Hit {
    file: String,
    start: usize,
    end: usize,
    /// Marked as a guess (the search found nothing that holds most of the query).
    weak: bool,
}

impl From<&LocalHit> for Hit {
    fn from(hit: &LocalHit) -> Self {
        Self {
            file: hit.path.to_string(),
            start: hit.start_line,
            end: hit.end_line,
            weak: hit.weak,
        }
    }
}

#[derive(Debug, Clone)]
struct Span {
    file: String,
    start: usize,
    end: usize,
    grade: u64,
}

impl Span {
    /// A labelled span: `file`, `start` and `end` (1-based, inclusive) and, for an answer, its
    /// `grade`. A superseded statement needs none (its grade is never read), and a set may
    /// leave it out.
    fn parse(value: &Value, graded: bool) -> anyhow::Result<Self> {
        let line = |key: &str| -> anyhow::Result<usize> {
            let n = value[key]
                .as_u64()
                .with_context(|| format!("span {value} has no line number `{key}`"))?;
            Ok(usize::try_from(n)?)
        };
        let grade = match value["grade"].as_u64() {
            Some(grade) => grade,
            None if !graded => 0,
            None => anyhow::bail!("answer span {value} has no `grade`"),
        };
        Ok(Self {
            file: value["file"]
                .as_str()
                .with_context(|| format!("span {value} has no `file`"))?
                .to_owned(),
            start: line("start")?,
            end: line("end")?,
            grade,
        })
    }

    fn overlaps(&self, hit: &Hit) -> bool {
        hit.file == self.file && hit.start <= self.end && self.start <= hit.end
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    queries: usize,
    ndcg: f64,
    recall: f64,
    mrr: f64,
}

impl Sums {
    fn add(&mut self, ndcg: f64, recall: f64, mrr: f64) {
        self.queries += 1;
        self.ndcg += ndcg;
        self.recall += recall;
        self.mrr += mrr;
    }

    fn mean(&self) -> (f64, f64, f64) {
        let n = self.queries.max(1) as f64;
        (self.ndcg / n, self.recall / n, self.mrr / n)
    }
}

fn gain(grade: u64) -> f64 {
    f64::from(1_u32 << grade.min(8)) - 1.0
}

fn discount(rank: usize) -> f64 {
    ((rank + 2) as f64).log2()
}

/// nDCG@K, recall@K and reciprocal rank of one query's hits. Each labelled span earns its gain
/// once, at the first hit overlapping it.
fn score(hits: &[Hit], relevant: &[Span]) -> (f64, f64, f64) {
    let mut credited = vec![false; relevant.len()];
    let mut dcg = 0.0;
    let mut first_answer = None;
    for (rank, hit) in hits.iter().take(K).enumerate() {
        let mut best = 0;
        for (i, span) in relevant.iter().enumerate() {
            if span.overlaps(hit) {
                if !credited[i] {
                    best = best.max(span.grade);
                    credited[i] = true;
                }
                if span.grade >= ANSWER_GRADE && first_answer.is_none() {
                    first_answer = Some(rank);
                }
            }
        }
        dcg += gain(best) / discount(rank);
    }
    let mut ideal: Vec<u64> = relevant.iter().map(|s| s.grade).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(K)
        .enumerate()
        .map(|(rank, g)| gain(*g) / discount(rank))
        .sum();
    let answers: Vec<usize> = (0..relevant.len())
        .filter(|&i| relevant[i].grade >= ANSWER_GRADE)
        .collect();
    let found = answers.iter().filter(|&&i| credited[i]).count();
    let recall = if answers.is_empty() {
        1.0
    } else {
        found as f64 / answers.len() as f64
    };
    let rr = first_answer.map_or(0.0, |rank| 1.0 / (rank + 1) as f64);
    (if idcg > 0.0 { dcg / idcg } else { 0.0 }, recall, rr)
}

fn first_rank(hits: &[Hit], spans: &[Span]) -> Option<usize> {
    hits.iter()
        .take(K)
        .position(|hit| spans.iter().any(|s| s.overlaps(hit)))
}

/// Plain BM25 (k1 = 1.2, b = 0.75) over fixed 20-line chunks of every memory file, with
/// lower-cased alphanumeric words and nothing else: no stemming, no typo tolerance, no boosts.
struct PlainBm25 {
    chunks: Vec<(Hit, HashMap<String, u32>, usize)>,
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl PlainBm25 {
    fn new(workspace: &Path) -> anyhow::Result<Self> {
        let mut files = Vec::new();
        for name in ["MEMORY.md", "USER.md"] {
            if workspace.join(name).is_file() {
                files.push(name.to_owned());
            }
        }
        let mut stack = vec![workspace.join("memory")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let path = entry?.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "md") {
                    let relative = path.strip_prefix(workspace)?.to_string_lossy().into_owned();
                    files.push(relative);
                }
            }
        }
        files.sort();
        let mut chunks = Vec::new();
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for file in files {
            let text = std::fs::read_to_string(workspace.join(&file))?;
            let lines: Vec<&str> = text.lines().collect();
            for (n, chunk) in lines.chunks(BASELINE_CHUNK_LINES).enumerate() {
                let mut terms: HashMap<String, u32> = HashMap::new();
                let mut length = 0;
                for word in chunk.iter().flat_map(|line| words(line)) {
                    *terms.entry(word).or_default() += 1;
                    length += 1;
                }
                for term in terms.keys() {
                    *document_frequency.entry(term.clone()).or_default() += 1;
                }
                let start = n * BASELINE_CHUNK_LINES + 1;
                let hit = Hit {
                    file: file.clone(),
                    start,
                    end: start + chunk.len() - 1,
                    weak: false,
                };
                chunks.push((hit, terms, length));
            }
        }
        let total: usize = chunks.iter().map(|(_, _, length)| length).sum();
        let average_length = total as f64 / chunks.len().max(1) as f64;
        Ok(Self {
            chunks,
            document_frequency,
            average_length,
        })
    }

    fn search(&self, query: &str) -> Vec<Hit> {
        let (k1, b) = (1.2, 0.75);
        let n = self.chunks.len() as f64;
        let terms: Vec<String> = words(query).collect();
        let mut scored: Vec<(f64, usize)> = self
            .chunks
            .iter()
            .enumerate()
            .filter_map(|(i, (_, frequencies, length))| {
                let mut score = 0.0;
                for term in &terms {
                    let Some(&tf) = frequencies.get(term) else {
                        continue;
                    };
                    let df = self.document_frequency.get(term).copied().unwrap_or(0) as f64;
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    let tf = f64::from(tf);
                    let norm = 1.0 - b + b * (*length as f64) / self.average_length;
                    score += idf * tf * (k1 + 1.0) / (tf + k1 * norm);
                }
                (score > 0.0).then_some((score, i))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(K)
            .map(|(_, i)| self.chunks[i].0.clone())
            .collect()
    }
}

/// The totals of one ranking on one set.
#[derive(Debug, Default)]
struct Measured {
    overall: Sums,
    kinds: BTreeMap<String, Sums>,
    changes: u32,
    superseded_first: u32,
    no_answer: u32,
    no_answer_hits: usize,
    /// Most hits any no-answer query got.
    no_answer_most: usize,
    /// Hits of no-answer queries not marked weak.
    no_answer_strong: usize,
    /// Hits returned to answerable queries, and how many of them quote a graded span (two hits
    /// quoting the same span both count, unlike in nDCG@5): nDCG@5 cannot see a page's hits
    /// after its answers, a model reading the page does.
    answered_hits: usize,
    graded_hits: usize,
    /// nDCG@5 of each answerable query, in the set's order (for the paired interval).
    ndcgs: Vec<f64>,
    /// For each change-over-time query, in the set's order: 1 when a superseded statement
    /// ranks above the current one, else 0 (for the ablation's paired interval).
    stales: Vec<f64>,
    misses: String,
}

impl Measured {
    fn superseded_rate(&self) -> f64 {
        f64::from(self.superseded_first) / f64::from(self.changes.max(1))
    }

    fn no_answer_average(&self) -> f64 {
        self.no_answer_hits as f64 / f64::from(self.no_answer.max(1))
    }

    /// Share of the hits returned to answerable queries that quote a graded span.
    fn graded_share(&self) -> f64 {
        self.graded_hits as f64 / self.answered_hits.max(1) as f64
    }
}

/// The spans a labelled query lists under `key` ("relevant" or "superseded"); a span that
/// does not parse fails the test rather than dropping out of the score unseen.
fn spans(query: &Value, key: &str) -> anyhow::Result<Vec<Span>> {
    query[key].as_array().map_or(Ok(Vec::new()), |a| {
        a.iter()
            .map(|span| Span::parse(span, key == "relevant"))
            .collect()
    })
}

/// A superseded statement may come without a grade (the seventh held-out set's do); an answer
/// may not, and a span that cannot be read fails the set instead of dropping out of its score.
/// (Dropped unseen, the seventh set first scored "0 of 0" change-over-time queries.)
#[test]
fn labelled_spans_need_a_grade_only_when_they_are_answers() {
    let query = serde_json::json!({
        "relevant": [{"file": "MEMORY.md", "start": 3, "end": 3, "grade": 2}],
        "superseded": [{"file": "memory/2025-01-02.md", "start": 5, "end": 6}],
    });
    let relevant = spans(&query, "relevant").expect("a graded answer");
    assert_eq!(
        (relevant[0].start, relevant[0].end, relevant[0].grade),
        (3, 3, 2)
    );
    let superseded = spans(&query, "superseded").expect("an ungraded superseded span");
    assert_eq!(superseded[0].file, "memory/2025-01-02.md");
    let ungraded = serde_json::json!({"relevant": [{"file": "USER.md", "start": 1, "end": 1}]});
    assert!(spans(&ungraded, "relevant").is_err());
    let lineless = serde_json::json!({"superseded": [{"file": "USER.md", "start": 1}]});
    assert!(spans(&lineless, "superseded").is_err());
}

/// Scores `rank` on every query of `labels`.
fn measure(labels: &Value, mut rank: impl FnMut(&str) -> Vec<Hit>) -> anyhow::Result<Measured> {
    let mut m = Measured::default();
    for query in labels["queries"].as_array().context("queries")? {
        let text = query["query"].as_str().context("query text")?;
        let kind = query["kind"].as_str().unwrap_or("other").to_owned();
        let (relevant, superseded) = (spans(query, "relevant")?, spans(query, "superseded")?);
        let hits = rank(text);
        if relevant.is_empty() {
            m.no_answer += 1;
            m.no_answer_hits += hits.len();
            m.no_answer_most = m.no_answer_most.max(hits.len());
            m.no_answer_strong += hits.iter().filter(|h| !h.weak).count();
            if !hits.is_empty() {
                let _ = writeln!(m.misses, "  [none] {text:?} → {} hits", hits.len());
            }
            continue;
        }
        let (ndcg, recall, rr) = score(&hits, &relevant);
        m.answered_hits += hits.len().min(K);
        m.graded_hits += hits
            .iter()
            .take(K)
            .filter(|h| relevant.iter().any(|s| s.overlaps(h)))
            .count();
        m.overall.add(ndcg, recall, rr);
        m.ndcgs.push(ndcg);
        m.kinds
            .entry(kind.clone())
            .or_default()
            .add(ndcg, recall, rr);
        if !superseded.is_empty() {
            m.changes += 1;
            let old = first_rank(&hits, &superseded);
            let current = first_rank(&hits, &relevant);
            let stale = old.is_some() && (current.is_none() || old < current);
            m.stales.push(if stale { 1.0 } else { 0.0 });
            if stale {
                m.superseded_first += 1;
                let _ = writeln!(m.misses, "  [superseded first] {text:?}");
            }
        }
        if ndcg < 0.5 || recall < 1.0 {
            let got: Vec<String> = hits
                .iter()
                .map(|h| format!("{}#L{}-L{}", h.file, h.start, h.end))
                .collect();
            let _ = writeln!(m.misses, "  [{kind}] {text:?} → {got:?}");
        }
    }
    Ok(m)
}

/// A markdown table of ours against the baseline, per kind and overall.
fn table(name: &str, ours: &Measured, baseline: &Measured) -> String {
    let mut out = format!(
        "### {name}\n\n| kind | queries | nDCG@5 | recall@5 | MRR | BM25 nDCG@5 |\n\
         |---|---:|---:|---:|---:|---:|\n"
    );
    for (kind, sums) in &ours.kinds {
        let (n, r, m) = sums.mean();
        let b = baseline.kinds.get(kind).map_or(0.0, |s| s.mean().0);
        let _ = writeln!(
            out,
            "| {kind} | {} | {n:.3} | {r:.3} | {m:.3} | {b:.3} |",
            sums.queries
        );
    }
    let (n, r, m) = ours.overall.mean();
    let (bn, br, bm) = baseline.overall.mean();
    let _ = writeln!(
        out,
        "| **all** | {} | **{n:.3}** | **{r:.3}** | **{m:.3}** | **{bn:.3}** |",
        ours.overall.queries
    );
    let (low, high) = paired_interval(&ours.ndcgs, &baseline.ndcgs);
    let _ = writeln!(
        out,
        "\nBM25 over {BASELINE_CHUNK_LINES}-line chunks: recall@5 {br:.3}, MRR {bm:.3}; ours − \
         BM25 nDCG@5: {:+.3} (95 % paired bootstrap interval {low:+.3} to {high:+.3})\n\
         superseded fact above the current one: {} of {} change-over-time queries ({:.1}%) \
         (BM25: {} of {})\nno-answer queries: {}, {:.2} hits on average, at most {}, {} not \
         marked weak\nhits graded: {} of {} returned to answerable queries ({:.1}%; BM25 {:.1}%)",
        n - bn,
        ours.superseded_first,
        ours.changes,
        ours.superseded_rate() * 100.0,
        baseline.superseded_first,
        baseline.changes,
        ours.no_answer,
        ours.no_answer_average(),
        ours.no_answer_most,
        ours.no_answer_strong,
        ours.graded_hits,
        ours.answered_hits,
        ours.graded_share() * 100.0,
        baseline.graded_share() * 100.0
    );
    out
}

/// Resamples of the queries for [`paired_interval`].
const RESAMPLES: usize = 2000;

/// The 95 % interval of the mean difference `ours − baseline` over the same queries, by the
/// paired bootstrap (the queries drawn with replacement, [`RESAMPLES`] times, a fixed seed so
/// every run prints the same): how far the margin over BM25 could move on another set of
/// queries like these. A margin whose interval holds 0 is not one the set can tell apart.
fn paired_interval(ours: &[f64], baseline: &[f64]) -> (f64, f64) {
    let differences: Vec<f64> = ours.iter().zip(baseline).map(|(a, b)| a - b).collect();
    if differences.is_empty() {
        return (0.0, 0.0);
    }
    let mut rng = fastrand::Rng::with_seed(14);
    let n = differences.len();
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| differences[rng.usize(..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    // 2.5 % of the resamples cut off at each end.
    let tail = RESAMPLES / 40;
    (means[tail], means[RESAMPLES - 1 - tail])
}

#[test]
fn the_paired_interval_holds_a_constant_difference_and_widens_with_spread() {
    let (low, high) = paired_interval(&[0.5, 0.7, 0.9], &[0.4, 0.6, 0.8]);
    assert!(
        (low - 0.1).abs() < 1e-9 && (high - 0.1).abs() < 1e-9,
        "{low} {high}"
    );
    let ours: Vec<f64> = (0..100)
        .map(|i| if i % 2 == 0 { 1.0 } else { 0.0 })
        .collect();
    let (low, high) = paired_interval(&ours, &[0.5; 100]);
    assert!(low < 0.0 && high > 0.0, "{low} {high}");
    assert_eq!(paired_interval(&[], &[]), (0.0, 0.0));
}

/// A set's workspace: `workspace/` beside its queries, or the one its `queries.json` names
/// (relative to the set), as the lookups set names the tuned set's.
fn workspace(set: &Path, labels: &Value) -> PathBuf {
    labels["workspace"]
        .as_str()
        .map_or_else(|| set.join("workspace"), |dir| set.join(dir))
}

/// The workspace the search reads: a set's workspace as it is, or, for a set that says when
/// its undated files were last modified (`mtimes.json`: path under the workspace → `YYYY-MM-DD`,
/// as the set's story has them; git keeps no modification times), a copy of it with those days
/// (noon UTC) as the files' modification times. The copy is returned with its path and removed
/// when dropped: an index keeps the text it read, so it may go once the index has refreshed.
fn timed_workspace(
    set: &Path,
    labels: &Value,
) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    let times = set.join("mtimes.json");
    if !times.is_file() {
        return Ok((workspace(set, labels), None));
    }
    let copy = tempfile::tempdir()?;
    common::copy_tree(&workspace(set, labels), copy.path())?;
    let days: BTreeMap<String, String> = serde_json::from_str(&std::fs::read_to_string(&times)?)
        .with_context(|| format!("{}", times.display()))?;
    for (file, day) in &days {
        let day = openclaw_memory::parse_day(day)
            .with_context(|| format!("{}: {day:?} is no day", times.display()))?;
        let noon = u64::try_from(day)? * 86_400 + 12 * 3_600;
        std::fs::File::options()
            .append(true)
            .open(copy.path().join(file))
            .with_context(|| format!("{}: {file}", times.display()))?
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(noon))?;
    }
    Ok((copy.path().to_path_buf(), Some(copy)))
}

/// A set's `queries.json`, checked against its workspace (see [`check_spans`]).
fn labels(set: &Path) -> anyhow::Result<Value> {
    let path = set.join("queries.json");
    let labels: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?,
    )?;
    check_spans(&workspace(set, &labels), &labels)
        .with_context(|| format!("{}", path.display()))?;
    Ok(labels)
}

/// Every query has its text and every span parses and quotes lines its file has: a label
/// naming a missing file or a line past the end would never match a hit, and the set would
/// score lower than it should without a word.
fn check_spans(workspace: &Path, labels: &Value) -> anyhow::Result<()> {
    let mut lines: HashMap<String, usize> = HashMap::new();
    for query in labels["queries"].as_array().context("no `queries` list")? {
        let text = query["query"]
            .as_str()
            .context("a query without its text")?;
        for key in ["relevant", "superseded"] {
            for span in spans(query, key).with_context(|| format!("{text:?}"))? {
                if !lines.contains_key(&span.file) {
                    let body = std::fs::read_to_string(workspace.join(&span.file))
                        .with_context(|| format!("{text:?} labels {}", span.file))?;
                    lines.insert(span.file.clone(), body.lines().count());
                }
                let count = lines[&span.file];
                anyhow::ensure!(
                    1 <= span.start && span.start <= span.end && span.end <= count,
                    "{text:?} labels lines {}–{} of {}, which has {count}",
                    span.start,
                    span.end,
                    span.file
                );
            }
        }
    }
    Ok(())
}

/// A set's `mtimes.json` is what the search reads: every file it names carries that day as
/// its modification time in the workspace the index is built from, and the files are the
/// set's own, unchanged.
#[test]
fn a_set_is_read_with_the_modification_days_it_gives() -> anyhow::Result<()> {
    let mut timed = 0;
    for (_, set) in every_set() {
        let Ok(text) = std::fs::read_to_string(set.join("mtimes.json")) else {
            continue;
        };
        timed += 1;
        let labels = labels(&set)?;
        let (root, copy) = timed_workspace(&set, &labels)?;
        assert!(copy.is_some());
        assert_ne!(root, workspace(&set, &labels));
        let days: BTreeMap<String, String> = serde_json::from_str(&text)?;
        for (file, day) in &days {
            let modified = std::fs::metadata(root.join(file))?
                .modified()?
                .duration_since(std::time::UNIX_EPOCH)?;
            let on = i64::try_from(modified.as_secs() / 86_400)?;
            assert_eq!(Some(on), openclaw_memory::parse_day(day), "{file}");
            assert_eq!(
                std::fs::read(root.join(file))?,
                std::fs::read(workspace(&set, &labels).join(file))?
            );
        }
    }
    assert!(timed > 0, "no set gives modification days");
    Ok(())
}

/// A label that points past its file's end, at a file that is not there, or a query without its
/// text fails the set.
#[test]
fn labels_must_quote_lines_the_workspace_has() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("MEMORY.md"),
        "# Memory\n\n- Car: Kia Niro\n",
    )?;
    let query = |file: &str, start: usize, end: usize| {
        serde_json::json!({"queries": [{"query": "car", "relevant": [
            {"file": file, "start": start, "end": end, "grade": 3}
        ]}]})
    };
    check_spans(dir.path(), &query("MEMORY.md", 3, 3))?;
    assert!(check_spans(dir.path(), &query("MEMORY.md", 3, 4)).is_err());
    assert!(check_spans(dir.path(), &query("MEMORY.md", 0, 1)).is_err());
    assert!(check_spans(dir.path(), &query("MEMORY.md", 3, 2)).is_err());
    assert!(check_spans(dir.path(), &query("USER.md", 1, 1)).is_err());
    let textless = serde_json::json!({"queries": [{"relevant": []}]});
    assert!(check_spans(dir.path(), &textless).is_err());
    Ok(())
}

/// The embedding model: `OPENCLAW_MEMORY_EMBEDDINGS`, else the one `scripts/peers.sh`
/// installs (`target/peers/potion-base-8M`). `None` when neither is there, unless
/// `RELEVANCE_REQUIRE_EMBEDDINGS` is set (the test command sets it), which fails instead.
fn word_model() -> Option<Arc<WordModel>> {
    static MODEL: OnceLock<Option<Arc<WordModel>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = std::env::var_os("OPENCLAW_MEMORY_EMBEDDINGS").map_or_else(
                || {
                    std::env::var_os("BRIDGE_PEERS_DIR")
                        .map_or_else(
                            || {
                                PathBuf::from(concat!(
                                    env!("CARGO_MANIFEST_DIR"),
                                    "/../../target/peers"
                                ))
                            },
                            PathBuf::from,
                        )
                        .join("potion-base-8M")
                },
                PathBuf::from,
            );
            match WordModel::load(&dir) {
                Ok(model) => Some(Arc::new(model)),
                Err(err) if std::env::var_os("RELEVANCE_REQUIRE_EMBEDDINGS").is_some() => {
                    panic!("the embedding model is required here: {err}")
                }
                Err(err) => {
                    eprintln!("measuring without embeddings: {err}");
                    None
                }
            }
        })
        .clone()
}

/// Our ranking with `options` on one labelled set, with `model` for lines close in meaning.
fn ours(
    set: &Path,
    labels: &Value,
    options: RankOptions,
    model: Option<Arc<WordModel>>,
) -> anyhow::Result<Measured> {
    let today = today(labels);
    let index = searcher(set, labels, options, model)?;
    measure(labels, |text| {
        index.search(text, K, today).iter().map(Hit::from).collect()
    })
}

/// The day a set's queries are asked on (days since the epoch), for the optional decay.
fn today(labels: &Value) -> Option<i64> {
    labels["today"]
        .as_str()
        .and_then(openclaw_memory::parse_day)
}

/// The index of a set's workspace with `options`, using `model` for lines close in meaning.
fn searcher(
    set: &Path,
    labels: &Value,
    options: RankOptions,
    model: Option<Arc<WordModel>>,
) -> anyhow::Result<MemoryIndex> {
    // The copy (if any) goes when this returns: the index holds what it read.
    let (root, _copy) = timed_workspace(set, labels)?;
    let mut index = MemoryIndex::new(MemoryStore::new(root), options);
    index.refresh()?;
    index.use_word_model(model);
    Ok(index)
}

/// One labelled set: our ranking and the baseline, measured in the same run.
struct Evaluation {
    /// Words only: no embedding model.
    lexical: Measured,
    /// With the embedding model, when there is one.
    embedded: Option<Measured>,
    baseline: Measured,
}

fn evaluate(set: &Path) -> anyhow::Result<Evaluation> {
    let labels = labels(set)?;
    let lexical = ours(set, &labels, RankOptions::default(), None)?;
    let embedded = word_model()
        .map(|model| ours(set, &labels, RankOptions::default(), Some(model)))
        .transpose()?;
    let bm25 = PlainBm25::new(&workspace(set, &labels))?;
    let baseline = measure(&labels, |text| bm25.search(text))?;
    Ok(Evaluation {
        lexical,
        embedded,
        baseline,
    })
}

/// Prints both configurations' tables and checks each against its floors.
fn report(name: &str, e: &Evaluation, floors: Option<(&Floors, &Floors)>, misses: bool) {
    eprintln!(
        "{}",
        table(&format!("{name}, words only"), &e.lexical, &e.baseline)
    );
    if let Some(embedded) = &e.embedded {
        eprintln!(
            "{}",
            table(
                &format!("{name}, with the embedding model"),
                embedded,
                &e.baseline
            )
        );
        if misses && !embedded.misses.is_empty() {
            eprintln!(
                "queries with nDCG@5 below 0.5 or an answer missing (with the model):\n{}",
                embedded.misses
            );
        }
    }
    if let Some((lexical, embedded)) = floors {
        check(&e.lexical, &e.baseline, lexical);
        if let Some(m) = &e.embedded {
            check(m, &e.baseline, embedded);
        }
    }
}

/// Each ranking component switched off (or, for the optional ones, on) in turn.
type Switch = fn(&mut RankOptions);

const ABLATIONS: &[(&str, Switch)] = &[
    ("stemming off", |o| o.stemming = false),
    ("typo tolerance off", |o| o.typo_tolerance = false),
    ("coverage boost off", |o| o.coverage_boost = 0.0),
    ("proximity off", |o| o.phrase_boost = 0.0),
    ("current-fact groups off", |o| o.current_facts = false),
    ("lookups keep their matches off", |o| {
        o.lookups_keep_matches = false;
    }),
    ("recorded changes off", |o| o.recorded_changes = false),
    ("preference questions to USER.md off", |o| {
        o.preference_directives = false;
    }),
    ("source notes before curated lines off", |o| {
        o.source_notes_first = false;
    }),
    ("following the answer off", |o| o.follow_answer = false),
    ("a message's own lines read whole", |o| {
        o.message_lines = false;
    }),
    ("one quote per text off", |o| o.distinct_quotes = false),
    ("coverage floors off", |o| {
        o.min_coverage = 0.0;
        o.relative_floor = 0.0;
    }),
    ("guess limit off", |o| o.guess_limit = K),
    ("guesses below the coverage floor off", |o| {
        o.guess_below_coverage = false;
    }),
    ("lines close in meaning off (words only)", |o| {
        o.meaning_similarity = None;
    }),
    ("+ half-life decay 30 d (OpenClaw)", |o| {
        o.recency_half_life_days = Some(30.0);
    }),
];

/// What a set must score. Issue 14's targets are nDCG@5 ≥ 0.88, recall@5 ≥ 0.93, a superseded
/// fact above the current one in ≤ 5 % of change-over-time queries, and nDCG@5 ≥ BM25 + 0.05,
/// on every set. The BM25 margin is reached with the model on every set but the lookups, and
/// words only on all but the fifth held-out set and the lookups (since the fourteenth round's
/// source notes before curated lines); where it is reached by less than 0.02 a floor would
/// break on one query, so the margin floor there is a regression floor and the pooled test
/// holds the target. The others are regression floors a little below what each set measured,
/// words only and with the embedding model, potion-base-8M (tuned 0.727 / 0.730 / 0 of 22 and
/// 0.831 / 0.845 / 0 of 22; held-out 0.539 / 0.549 / 2 of 14 and 0.670 / 0.711 / 3 of 14), so
/// the test fails if the ranking gets worse, not because a target is unmet.
#[derive(Debug)]
struct Floors {
    ndcg: f64,
    recall: f64,
    superseded_rate: f64,
    /// Least nDCG@5 over plain BM25 on the same set.
    bm25_margin: f64,
    /// Most hits a no-answer query may get: the 2 (`guess_limit`), except where a
    /// no-answer query holds every word of a note and is answered in full (see the changes set).
    no_answer_most: usize,
}

const TUNED_FLOORS: Floors = Floors {
    ndcg: 0.69,
    recall: 0.70,
    superseded_rate: 0.05,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

const TUNED_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.81,
    recall: 0.83,
    superseded_rate: 0.05,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

const HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.52,
    recall: 0.53,
    superseded_rate: 0.15,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// Stale: 3 of 14 since lines found by meaning are read under their heading (issue 14, fifth
/// round: nDCG@5 0.625 → 0.657 here, better on all three sets, and one more stale query; see
/// BENCHMARKS.md). The 5 % is not met on this set either way.
const HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.64,
    recall: 0.69,
    superseded_rate: 0.22,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The second held-out set (words only 0.645 / 0.675 / 0 of 23, +0.044 over BM25; with the
/// model 0.713 / 0.753 / 0 of 23, +0.112; as measured in the eleventh round of issue 14, the
/// tenth's 0.647 / 0.715 having been taken before its last commits). Words only it missed the
/// issue's +0.05 margin until the fourteenth round (0.661, +0.060; with the model 0.724); with
/// so little to spare the floor stays a regression floor, and the pooled test holds the target.
const SECOND_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.63,
    recall: 0.64,
    superseded_rate: 0.05,
    bm25_margin: 0.03,
    no_answer_most: 2,
};

const SECOND_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.70,
    recall: 0.74,
    superseded_rate: 0.05,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The third held-out set, measured when it was added (issue 14, eighth round): words only
/// 0.529 / 0.565 / 3 of 21, +0.078 over plain BM25; with the model 0.608 / 0.655 / 3 of 21,
/// +0.158. With the recorded changes (tenth round) 0.527 / 0.565 / 2 of 21 and 0.610 / 0.655 /
/// 2 of 21. Regression floors, like the others.
const THIRD_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.52,
    recall: 0.55,
    superseded_rate: 0.15,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

const THIRD_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.60,
    recall: 0.64,
    superseded_rate: 0.15,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The fourth held-out set, measured once when it was added (issue 14, eleventh round, after
/// the round's last ranking change): words only 0.658 / 0.704 / 8 of 21, +0.047 over plain
/// BM25; with the model 0.703 / 0.753 / 7 of 21, +0.092. Plain BM25 puts a superseded fact
/// first on only 3 of 21: on a set nobody tuned on, which fact is current is where the search
/// falls furthest short (38 % and 33 % against the 5 %). Regression floors, like the
/// others. Words only the margin over BM25 reached the issue's +0.05 in the fourteenth round
/// (0.663, +0.052; with the model 0.702), by too little to hold as a floor (one query moves it
/// by a few thousandths): the pooled test holds the target.
const FOURTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.64,
    recall: 0.69,
    superseded_rate: 0.40,
    bm25_margin: 0.03,
    no_answer_most: 2,
};

const FOURTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.69,
    recall: 0.74,
    superseded_rate: 0.35,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The fifth held-out set, measured when it was added (issue 14, thirteenth round): words only
/// 0.592 / 0.608 / 6 of 24, +0.029 over plain BM25; with the model 0.609 / 0.641 / 6 of 24,
/// +0.046. The model gains least here of any set, and preferences fall under plain BM25
/// (0.583 against 0.764). Regression floors, like the others. Since the fourteenth round (words
/// only 0.605, +0.042; with the model 0.618, +0.055) the model reaches the issue's +0.05 over
/// BM25 here, by too little to hold as a floor; the floors keep the margin positive.
const FIFTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.57,
    recall: 0.59,
    superseded_rate: 0.30,
    bm25_margin: 0.01,
    no_answer_most: 2,
};

const FIFTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.59,
    recall: 0.62,
    superseded_rate: 0.30,
    bm25_margin: 0.02,
    no_answer_most: 2,
};

/// The sixth held-out set, measured once when it was added (issue 14, fourteenth round, with
/// the round's final ranking): words only 0.650 / 0.653 / 6 of 23, +0.057 over plain BM25; with
/// the model 0.677 / 0.683 / 7 of 23, +0.084. Plain BM25 puts a superseded fact first on 6 of
/// 23. Regression floors, like the others; the margin over BM25 is held with the model,
/// and words only (+0.057, too little to spare) a regression floor.
const SIXTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.63,
    recall: 0.63,
    superseded_rate: 0.30,
    bm25_margin: 0.03,
    no_answer_most: 2,
};

const SIXTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.66,
    recall: 0.66,
    superseded_rate: 0.35,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The seventh held-out set, measured once when it was added (issue 14, eighteenth round, with
/// the seventeenth round's ranking, unchanged since): words only 0.618 / 0.644 / 7 of 23,
/// +0.120 over plain BM25; with the model 0.654 / 0.694 / 7 of 23, +0.156. Plain BM25 puts a
/// superseded fact first on only 3 of 23 here, fewer than we do. Regression floors, like the
/// others, and the margin over BM25 in both configurations.
const SEVENTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.59,
    recall: 0.62,
    superseded_rate: 0.35,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

const SEVENTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.63,
    recall: 0.67,
    superseded_rate: 0.35,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The eighth set, measured once while held out (issue 14, nineteenth round, after that round's
/// reading of session-memory message lines): words only 0.558 / 0.556 / 7 of 21, +0.088 over
/// plain BM25; with the model 0.599 / 0.607 / 7 of 21, +0.128 (0.603 / 0.615 once a message was
/// read by its own lines for meaning). A tuning set since the twentieth round (0.560 and 0.605
/// once a title's stop no longer cut a sentence that following reads). Regression floors, and
/// the margin over BM25 in both configurations.
const EIGHTH_SET_FLOORS: Floors = Floors {
    ndcg: 0.53,
    recall: 0.53,
    superseded_rate: 0.40,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

const EIGHTH_SET_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.57,
    recall: 0.58,
    superseded_rate: 0.40,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The ninth held-out set, measured once when it was added (issue 14, nineteenth round, with
/// that round's final ranking): words only 0.534 / 0.544 / 2 of 20, +0.078 over plain BM25; with
/// the model 0.578 / 0.596 / 4 of 20, +0.122. Regression floors, and the margin over
/// BM25 in both configurations.
const NINTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.51,
    recall: 0.52,
    superseded_rate: 0.20,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

const NINTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.55,
    recall: 0.57,
    superseded_rate: 0.30,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The tenth held-out set, measured once when it was added (issue 14, twentieth round, with
/// that round's final ranking): words only 0.553 / 0.532 / 7 of 21, +0.047 over plain BM25 (95 %
/// interval −0.005 to +0.099), under the issue's +0.05: the first held-out set where words alone
/// miss that margin, so its words-only margin floor is a regression floor at +0.03, as the sixth
/// set's; with the model 0.593 / 0.573 / 9 of 21, +0.087. Regression floors otherwise, and the
/// issue's margin with the model.
const TENTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.52,
    recall: 0.50,
    superseded_rate: 0.45,
    bm25_margin: 0.03,
    no_answer_most: 2,
};

const TENTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.56,
    recall: 0.54,
    superseded_rate: 0.50,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};

/// The eleventh held-out set, measured once when it was added (issue 14, twentieth round, with
/// that round's final ranking, which no result of this set changed): words only 0.594 / 0.614 /
/// 11 of 20, +0.027 over plain BM25 (95 % interval −0.025 to +0.077); with the model 0.598 /
/// 0.617 / 12 of 20, +0.031 (−0.021 to +0.081). Plain BM25 puts a superseded fact first on
/// only 6 of 20. Neither configuration reaches the margin over BM25, nor its stale
/// target: these are regression floors, the margin's at "not below BM25".
const ELEVENTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.56,
    recall: 0.58,
    superseded_rate: 0.60,
    bm25_margin: 0.0,
    no_answer_most: 2,
};
const ELEVENTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.56,
    recall: 0.58,
    superseded_rate: 0.65,
    bm25_margin: 0.0,
    no_answer_most: 2,
};
/// The twelfth held-out set, measured once when it was added (round 21): 0.627 / 0.634 / 4 of
/// 22, +0.024 over BM25 (interval −0.037 to +0.086) words only; 0.657 / 0.668 / 4 of 22, +0.055
/// with the model. The words-only margin floor is "not below BM25", the model's a regression
/// floor.
const TWELFTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.59,
    recall: 0.60,
    superseded_rate: 0.30,
    bm25_margin: 0.0,
    no_answer_most: 2,
};
const TWELFTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.62,
    recall: 0.63,
    superseded_rate: 0.30,
    bm25_margin: 0.03,
    no_answer_most: 2,
};
/// The thirteenth held-out set, measured once when it was added (round 21): 0.642 / 0.669 / 4
/// of 22, +0.067 over BM25 (+0.020 to +0.122) words only; 0.660 / 0.689 / 5 of 22, +0.085 with
/// the model. The words-only margin is within 0.02 of the issue's +0.05, so its floor is a
/// regression floor.
const THIRTEENTH_HELD_OUT_FLOORS: Floors = Floors {
    ndcg: 0.60,
    recall: 0.63,
    superseded_rate: 0.30,
    bm25_margin: 0.03,
    no_answer_most: 2,
};
const THIRTEENTH_HELD_OUT_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.62,
    recall: 0.65,
    superseded_rate: 0.35,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 2,
};
/// The mixed set (tuning), measured when it was added (round 21): 0.622 / 0.644 / 8 of 22,
/// +0.034 over BM25 words only; 0.640 / 0.663 / 8 of 22, +0.052 with the model. Both margins are
/// under the issue's +0.05 or within 0.02 of it, so their floors are regression floors.
const MIXED_SET_FLOORS: Floors = Floors {
    ndcg: 0.59,
    recall: 0.61,
    superseded_rate: 0.45,
    bm25_margin: 0.01,
    no_answer_most: 2,
};
const MIXED_SET_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.61,
    recall: 0.63,
    superseded_rate: 0.45,
    bm25_margin: 0.03,
    no_answer_most: 2,
};

/// The lookups set (words only and with the model alike: nDCG@5 0.968, recall@5 1.000;
/// plain BM25 0.952, which a query made of one line's words suits best). 0.935 / 0.975 before
/// the eleventh round's rule that a lookup's statement is not displaced by the same sentence
/// telling of another name (0.965 / 0.992), and its rule that a window never runs on into a
/// heading. Regression floors, and the margin over BM25 is kept positive
/// (the issue's +0.05 is out of reach here: 1.002 would be needed); without
/// `lookups_keep_matches` the current-fact groups score 0.766.
const LOOKUP_FLOORS: Floors = Floors {
    ndcg: 0.96,
    recall: 0.98,
    superseded_rate: 0.0,
    bm25_margin: 0.01,
    no_answer_most: 2,
};

/// The changes set (issue 14, sixteenth round, following the answer to one note and exact ties
/// in workspace order: words only 0.445 / 0.427 / 10 of 68, +0.104 over plain BM25; with the
/// model 0.477 / 0.465 / 12 of 68, +0.137; fifteenth round, filling every free place: 0.446 /
/// 0.431 / 10 and 0.479 / 0.469 / 12; the floors sit above the fourteenth round's figures, so
/// losing that rule fails here; fourteenth round: 0.426 / 0.405 / 10 and 0.459 / 0.443 / 12;
/// thirteenth round 0.422 / 0.399 / 10 and 0.454 / 0.443 / 12; tenth round 0.407 / 0.387 / 11 and 0.440 / 0.431 / 13;
/// before the recorded changes 0.365 / 0.359 / 19 of 68 and 0.383 / 0.379 / 21 of 68). The BM25
/// margin is met; nDCG@5, recall and stale are regression floors. Ten of its 25 `MEMORY.md`
/// lines were never updated after a change the daily notes record, and a curated statement
/// counts as new as the newest note (see `current.rs`); where a note names the old value as left
/// behind ("Cancelled PureGym and joined Bodyworks"), that note now comes first (see
/// `change.rs`), but most changes are worded without such a word ("Picked up a used Kia Niro
/// EV" for the car). Two of its eight no-answer queries hold every word of one note ("What is
/// the name of Dana's dog?": "she knows the names of half the dogs on the street") and get a
/// confident page of 3 hits.
const CHANGES_FLOORS: Floors = Floors {
    ndcg: 0.43,
    recall: 0.41,
    superseded_rate: 0.19,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 3,
};

const CHANGES_EMBEDDED_FLOORS: Floors = Floors {
    ndcg: 0.46,
    recall: 0.45,
    superseded_rate: 0.22,
    bm25_margin: BM25_MARGIN,
    no_answer_most: 3,
};

/// Issue 14's target margin over plain BM25.
const BM25_MARGIN: f64 = 0.05;

fn check(ours: &Measured, baseline: &Measured, floors: &Floors) {
    let (ndcg, recall, _) = ours.overall.mean();
    assert!(
        ndcg >= floors.ndcg,
        "nDCG@5 {ndcg:.3} is below {}",
        floors.ndcg
    );
    assert!(
        recall >= floors.recall,
        "recall@5 {recall:.3} is below {}",
        floors.recall
    );
    let margin = ndcg - baseline.overall.mean().0;
    assert!(
        margin >= floors.bm25_margin,
        "nDCG@5 is only {margin:+.3} over plain BM25"
    );
    let superseded_rate = ours.superseded_rate();
    assert!(
        superseded_rate <= floors.superseded_rate,
        "a superseded fact outranked the current one in {superseded_rate:.3} of the queries"
    );
    // No-answer queries: at most 2 hits each (`guess_limit`) unless the floors say otherwise.
    assert!(
        ours.no_answer_most <= floors.no_answer_most,
        "a no-answer query got {} hits",
        ours.no_answer_most
    );
}

/// Scores the fixture set `set` and checks it against `floors` (words only, with the model),
/// titled with its name and its folder under `tests/fixtures/`; `misses` lists the queries it
/// does worst on (tuning sets only: a held-out set shows its totals alone).
fn check_set(
    name: &str,
    set: &Path,
    floors: (&Floors, &Floors),
    misses: bool,
) -> anyhow::Result<()> {
    let e = evaluate(set)?;
    let folder = set.file_name().unwrap_or_default().to_string_lossy();
    report(
        &format!("{name} (tests/fixtures/{folder})"),
        &e,
        Some(floors),
        misses,
    );
    Ok(())
}

fn fixtures(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures")).join(name)
}

fn held_out() -> PathBuf {
    std::env::var_os("RELEVANCE_SET").map_or_else(|| fixtures("relevance-holdout"), PathBuf::from)
}

/// The second held-out set, written in issue 14's fourth round by someone who had read neither
/// the ranking code nor the other two sets.
fn second_held_out() -> PathBuf {
    fixtures("relevance-holdout-2")
}

/// The third held-out set, written in issue 14's eighth round by a helper who had read neither
/// the ranking code, BENCHMARKS.md nor the other sets, and measured once after the round's
/// last ranking change.
fn third_held_out() -> PathBuf {
    fixtures("relevance-holdout-3")
}

/// The fourth held-out set, written in issue 14's eleventh round by a helper who had read
/// neither the ranking code, BENCHMARKS.md, the README nor the other sets, and measured once,
/// after the round's last ranking change.
fn fourth_held_out() -> PathBuf {
    fixtures("relevance-holdout-4")
}

/// The fifth held-out set, written in issue 14's thirteenth round by a helper who had read
/// neither the ranking code nor the other sets, and first measured to decide one change
/// registered before the set existed (irregular word forms; dropped on it).
fn fifth_held_out() -> PathBuf {
    fixtures("relevance-holdout-5")
}

/// The sixth held-out set, written in issue 14's fourteenth round by a helper who read neither
/// the code nor the other sets, and who chose how to grade a curated line against the note
/// stating the same fact (equally: both 3), where the earlier briefs had asked for the curated
/// line a grade lower. Measured once, with the round's final ranking.
fn sixth_held_out() -> PathBuf {
    fixtures("relevance-holdout-6")
}

/// The seventh held-out set, written in issue 14's eighteenth round by a helper who read neither
/// the code nor the other sets (a marine engineer in Kristiansund; `USER.md` in OpenClaw's
/// `observed:` marker layout with unmarked contradictions; curated lines never graded 3), and
/// measured once, with the ranking that round left unchanged.
fn seventh_held_out() -> PathBuf {
    fixtures("relevance-holdout-7")
}

/// The eighth set, written in issue 14's nineteenth round by a helper who read neither the code
/// nor the other sets: most notes are what OpenClaw's own `session-memory` hook writes at a
/// reset (`memory/YYYY-MM-DD-HHMM.md`, one JSON-quoted line per message, many longer than a
/// hit's 700-byte quote), the rest the agent's own daily notes. Held out while the nineteenth
/// round measured it; since the twentieth it is a tuning set, the only one of session notes, and
/// its per-query results are read (its folder keeps its name).
fn eighth_set() -> PathBuf {
    fixtures("relevance-holdout-8")
}

/// The mixed set, written in issue 14's twenty-first round as a tuning set by a helper who read
/// neither the code nor the other sets: a land surveyor in Tucson, with daily notes,
/// session-memory notes and a fifth of the notes topic files without a date in their name
/// (`memory/people/*.md`, `memory/projects/*.md`, imports from Claude Code), some kept current
/// and some left stale. The first tuning set with such notes; its per-query results are read.
fn mixed_set() -> PathBuf {
    fixtures("relevance-mixed")
}

/// The ninth held-out set, written in issue 14's nineteenth round by a helper who read neither
/// the code nor the other sets, in the same session-memory format as the eighth (a chemistry
/// teacher near Hamilton, Ontario), so that a change for that format is decided on a set nobody
/// had seen. Measured once.
fn ninth_held_out() -> PathBuf {
    fixtures("relevance-holdout-9")
}

/// The tenth held-out set, written in issue 14's twentieth round by a helper who read neither
/// the code nor the other sets, in the session-memory format (a community nurse near Dunedin;
/// about a fifth of the notes named by a slug instead of the time, as the hook's `llmSlug`
/// option names them, and names taken twice suffixed `-2`). Measured once, with the round's
/// final ranking.
fn tenth_held_out() -> PathBuf {
    fixtures("relevance-holdout-10")
}

/// The eleventh held-out set, written in issue 14's twentieth round by a helper who read neither
/// the code nor the other sets, after that round's last ranking change (a bakery-café owner in
/// Ljubljana; daily notes with timed entries, session-memory notes and topic notes without a
/// date). Measured once, with that ranking.
fn eleventh_held_out() -> PathBuf {
    fixtures("relevance-holdout-11")
}

/// The twelfth held-out set, written in issue 14's twenty-first round by a helper who read
/// neither the code nor the other sets, from the same brief as the mixed tuning set (daily,
/// session-memory and undated topic notes, some kept current and some stale). Measured once
/// with the ranking that round left unchanged.
fn twelfth_held_out() -> PathBuf {
    fixtures("relevance-holdout-12")
}

/// The thirteenth held-out set, written at the end of issue 14's twenty-first round by a helper
/// who read neither the code nor the other sets, from a brief that named no marker for a topic
/// note kept current. Measured once, with the ranking that round left unchanged.
fn thirteenth_held_out() -> PathBuf {
    fixtures("relevance-holdout-13")
}

/// Every held-out set, by name: what the pooled test pools.
fn held_out_sets() -> [(&'static str, PathBuf); 12] {
    [
        ("held-out", held_out()),
        ("second held-out", second_held_out()),
        ("third held-out", third_held_out()),
        ("fourth held-out", fourth_held_out()),
        ("fifth held-out", fifth_held_out()),
        ("sixth held-out", sixth_held_out()),
        ("seventh held-out", seventh_held_out()),
        ("ninth held-out", ninth_held_out()),
        ("tenth held-out", tenth_held_out()),
        ("eleventh held-out", eleventh_held_out()),
        ("twelfth held-out", twelfth_held_out()),
        ("thirteenth held-out", thirteenth_held_out()),
    ]
}

/// Every set the ablation and the ceiling cover, by name: the tuned set, the held-out sets,
/// the lookups, the changes and the eighth set (session notes, tuned on since it was measured).
fn every_set() -> Vec<(&'static str, PathBuf)> {
    let mut sets = vec![("tuned", fixtures("relevance"))];
    sets.extend(held_out_sets());
    sets.push(("lookups", fixtures("relevance-lookups")));
    sets.push(("changes", fixtures("relevance-changes")));
    sets.push(("eighth (tuning)", eighth_set()));
    sets.push(("mixed (tuning)", mixed_set()));
    sets
}

/// One row of the pooled ablation: over the held-out sets and over the tuning sets (the
/// lookups left out: their queries are the tuned set's notes quoted back), what the component
/// adds to mean nDCG@5 and to the count of stale pages (everything on minus it off), each with
/// its paired interval.
fn pooled_row(out: &mut String, name: &str, names: &[&str], off: &[Measured], on: &[Measured]) {
    let held_out: Vec<&str> = held_out_sets().iter().map(|(n, _)| *n).collect();
    let cell = |pick: &dyn Fn(&str) -> bool, values: fn(&Measured) -> &Vec<f64>, count: bool| {
        let pooled = |m: &[Measured]| -> Vec<f64> {
            names
                .iter()
                .zip(m)
                .filter(|(n, _)| pick(n))
                .flat_map(|(_, m)| values(m).iter().copied())
                .collect()
        };
        let (a, b) = (pooled(on), pooled(off));
        let n = a.len() as f64;
        let (low, high) = paired_interval(&a, &b);
        let delta = a.iter().sum::<f64>() / n.max(1.0) - b.iter().sum::<f64>() / n.max(1.0);
        if count {
            // A count of pages: every resampled sum is a whole number.
            format!("{:+.0} ({:+.0} to {:+.0})", delta * n, low * n, high * n)
        } else {
            format!("{delta:+.3} ({low:+.3} to {high:+.3})")
        }
    };
    let is_held_out = |n: &str| held_out.contains(&n);
    let is_tuning = |n: &str| !held_out.contains(&n) && n != "lookups";
    let _ = writeln!(
        out,
        "| {name} | {} | {} | {} | {} |",
        cell(&is_held_out, |m| &m.ndcgs, false),
        cell(&is_held_out, |m| &m.stales, true),
        cell(&is_tuning, |m| &m.ndcgs, false),
        cell(&is_tuning, |m| &m.stales, true),
    );
}

/// Every component off in turn, nDCG@5 on every set (totals only, overall and per kind), with
/// the embedding model and words only. Run with `RELEVANCE_ABLATION=1`; the tables go into
/// BENCHMARKS.md.
#[test]
fn ablation_table() -> anyhow::Result<()> {
    if std::env::var_os("RELEVANCE_ABLATION").is_none() {
        return Ok(());
    }
    let sets = every_set();
    let labels: Vec<Value> = sets
        .iter()
        .map(|(_, s)| labels(s))
        .collect::<anyhow::Result<_>>()?;
    let mut configurations = vec![("words only", None)];
    if let Some(model) = word_model() {
        configurations.insert(0, ("with the embedding model", Some(model)));
    }
    for (configuration, model) in configurations {
        let run = |options: RankOptions| -> anyhow::Result<Vec<Measured>> {
            sets.iter()
                .zip(&labels)
                .map(|((_, s), l)| ours(s, l, options, model.clone()))
                .collect()
        };
        let full = run(RankOptions::default())?;
        let names: Vec<&str> = sets.iter().map(|(name, _)| *name).collect();
        let mut out = format!("{configuration}:\n\n| component |");
        for name in &names {
            let _ = write!(out, " {name} nDCG@5 | Δ |");
        }
        let _ = writeln!(
            out,
            " stale ({}) | no-answer hits ({}) | hits graded, % ({}) |",
            names.join(", "),
            names.join(", "),
            names.join(", ")
        );
        // Every column after the first holds numbers.
        let columns = 2 * names.len() + 3;
        out.push_str("|---|");
        out.push_str(&"---:|".repeat(columns));
        out.push('\n');
        let row = |out: &mut String, name: &str, m: &[Measured]| {
            let _ = write!(out, "| {name} |");
            for (measured, whole) in m.iter().zip(&full) {
                let (ndcg, base) = (measured.overall.mean().0, whole.overall.mean().0);
                let _ = write!(out, " {ndcg:.3} | {:+.3} |", ndcg - base);
            }
            let stale: Vec<String> = m.iter().map(|x| x.superseded_first.to_string()).collect();
            let hits: Vec<String> = m
                .iter()
                .map(|x| format!("{:.2}", x.no_answer_average()))
                .collect();
            let graded: Vec<String> = m
                .iter()
                .map(|x| format!("{:.0}", x.graded_share() * 100.0))
                .collect();
            let _ = writeln!(
                out,
                " {} | {} | {} |",
                stale.join(", "),
                hits.join(", "),
                graded.join(", ")
            );
            // Per kind too (totals, as for the whole set): a component can help one kind and
            // cost another, as the current-fact groups do exact lookups on the held-out set.
            for (set, measured) in names.iter().zip(m) {
                let kinds: Vec<String> = measured
                    .kinds
                    .iter()
                    .map(|(kind, sums)| format!("{kind} {:.3}", sums.mean().0))
                    .collect();
                let _ = writeln!(
                    out,
                    "| ↳ {set} per kind: {} |{}",
                    kinds.join(", "),
                    "|".repeat(columns)
                );
            }
        };
        row(&mut out, "everything on", &full);
        let mut pooled = String::new();
        for (name, switch) in ABLATIONS {
            let mut options = RankOptions::default();
            switch(&mut options);
            let measured = run(options)?;
            row(&mut out, name, &measured);
            pooled_row(&mut pooled, name, &names, &measured, &full);
        }
        eprintln!("{out}");
        eprintln!(
            "{configuration}, pooled: what each component gives, everything on minus the \
             component off, with its 95 % paired bootstrap interval (the queries resampled, fixed \
             seed). A component helps where it adds nDCG@5 and takes stale pages away.\n\n\
             | component | held-out nDCG@5 Δ | held-out stale Δ | tuning nDCG@5 Δ | tuning stale Δ |\n\
             |---|---:|---:|---:|---:|\n{pooled}"
        );
    }
    Ok(())
}

#[test]
fn local_search_meets_the_relevance_targets_on_the_tuned_set() -> anyhow::Result<()> {
    check_set(
        "tuned set",
        &fixtures("relevance"),
        (&TUNED_FLOORS, &TUNED_EMBEDDED_FLOORS),
        true,
    )
}

/// The held-out set (or `RELEVANCE_SET`): totals only, against the baseline from the same run.
#[test]
fn held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    let set = held_out();
    if !set.join("queries.json").is_file() {
        eprintln!("no held-out set at {}", set.display());
        return Ok(());
    }
    let e = evaluate(&set)?;
    let floors = std::env::var_os("RELEVANCE_SET")
        .is_none()
        .then_some((&HELD_OUT_FLOORS, &HELD_OUT_EMBEDDED_FLOORS));
    report(
        &format!("held-out set ({})", set.display()),
        &e,
        floors,
        false,
    );
    Ok(())
}

/// The lookups set: a few words of one line of the tuned workspace must find that line.
#[test]
fn lookups_find_the_line_they_quote() -> anyhow::Result<()> {
    check_set(
        "lookups",
        &fixtures("relevance-lookups"),
        (&LOOKUP_FLOORS, &LOOKUP_FLOORS),
        true,
    )
}

/// The second held-out set: totals only, against the baseline from the same run.
#[test]
fn second_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "second held-out set",
        &second_held_out(),
        (&SECOND_HELD_OUT_FLOORS, &SECOND_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The third held-out set: totals only, against the baseline from the same run.
#[test]
fn third_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "third held-out set",
        &third_held_out(),
        (&THIRD_HELD_OUT_FLOORS, &THIRD_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The fourth held-out set: totals only, against the baseline from the same run.
#[test]
fn fourth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "fourth held-out set",
        &fourth_held_out(),
        (&FOURTH_HELD_OUT_FLOORS, &FOURTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The fifth held-out set: totals only, against the baseline from the same run.
#[test]
fn fifth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "fifth held-out set",
        &fifth_held_out(),
        (&FIFTH_HELD_OUT_FLOORS, &FIFTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The sixth held-out set: totals only, against the baseline from the same run.
#[test]
fn sixth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "sixth held-out set",
        &sixth_held_out(),
        (&SIXTH_HELD_OUT_FLOORS, &SIXTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The seventh held-out set: totals only, against the baseline from the same run.
#[test]
fn seventh_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "seventh held-out set",
        &seventh_held_out(),
        (&SEVENTH_HELD_OUT_FLOORS, &SEVENTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The eighth set, session notes, a tuning set since the twentieth round: its misses are
/// listed like the other tuning sets'.
#[test]
fn eighth_set_session_notes_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "eighth set (session notes, tuned on since round 20)",
        &eighth_set(),
        (&EIGHTH_SET_FLOORS, &EIGHTH_SET_EMBEDDED_FLOORS),
        true,
    )
}

/// The mixed set, topic notes among daily and session notes, a tuning set: its misses are
/// listed like the other tuning sets'.
#[test]
fn mixed_set_topic_notes_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "mixed set (topic notes, tuned on)",
        &mixed_set(),
        (&MIXED_SET_FLOORS, &MIXED_SET_EMBEDDED_FLOORS),
        true,
    )
}

/// The ninth held-out set: totals only, against the baseline from the same run.
#[test]
fn ninth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "ninth held-out set",
        &ninth_held_out(),
        (&NINTH_HELD_OUT_FLOORS, &NINTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The tenth held-out set: totals only, against the baseline from the same run.
#[test]
fn tenth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "tenth held-out set",
        &tenth_held_out(),
        (&TENTH_HELD_OUT_FLOORS, &TENTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The eleventh held-out set: totals only, against the baseline from the same run.
#[test]
fn eleventh_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "eleventh held-out set",
        &eleventh_held_out(),
        (
            &ELEVENTH_HELD_OUT_FLOORS,
            &ELEVENTH_HELD_OUT_EMBEDDED_FLOORS,
        ),
        false,
    )
}

/// The twelfth held-out set: totals only, against the baseline from the same run.
#[test]
fn twelfth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "twelfth held-out set",
        &twelfth_held_out(),
        (&TWELFTH_HELD_OUT_FLOORS, &TWELFTH_HELD_OUT_EMBEDDED_FLOORS),
        false,
    )
}

/// The thirteenth held-out set: totals only, against the baseline from the same run.
#[test]
fn thirteenth_held_out_totals_against_plain_bm25() -> anyhow::Result<()> {
    check_set(
        "thirteenth held-out set",
        &thirteenth_held_out(),
        (
            &THIRTEENTH_HELD_OUT_FLOORS,
            &THIRTEENTH_HELD_OUT_EMBEDDED_FLOORS,
        ),
        false,
    )
}

/// The held-out sets as one: each set's interval is about ±0.06 wide, too wide to tell a
/// small gain from none, and together (1,228 answerable queries, twelve sets) they narrow it. Each
/// set's own test holds its floors; pooled, both configurations must clear the margin
/// over plain BM25 with an interval clear of zero (measured over the first four when this test
/// was added: +0.065 words only, +0.146 with the model).
#[test]
fn held_out_sets_pooled_against_plain_bm25() -> anyhow::Result<()> {
    let evaluations: Vec<Evaluation> = held_out_sets()
        .iter()
        .map(|(_, s)| evaluate(s))
        .collect::<anyhow::Result<_>>()?;
    let baseline: Vec<&Measured> = evaluations.iter().map(|e| &e.baseline).collect();
    let mut configurations = vec![(
        "words only",
        evaluations.iter().map(|e| &e.lexical).collect::<Vec<_>>(),
        POOLED_GRADED_SHARE,
    )];
    let embedded: Option<Vec<&Measured>> =
        evaluations.iter().map(|e| e.embedded.as_ref()).collect();
    if let Some(embedded) = embedded {
        configurations.push((
            "with the embedding model",
            embedded,
            POOLED_EMBEDDED_GRADED_SHARE,
        ));
    }
    let mut out = format!("### the {} held-out sets pooled\n\n", evaluations.len());
    let mut below = Vec::new();
    for (configuration, ours, graded_floor) in &configurations {
        let p = pooled(ours, &baseline);
        let _ = writeln!(
            out,
            "{configuration}: nDCG@5 {:.3} over {} queries (BM25 {:.3}); ours − BM25 {:+.3} (95 % \
             paired bootstrap interval {:+.3} to {:+.3}); superseded fact above the current one: \
             {} of {} (BM25: {}); hits graded {:.1}%",
            p.ours,
            p.queries,
            p.baseline,
            p.margin,
            p.low,
            p.high,
            p.stale,
            p.changes,
            p.baseline_stale,
            p.graded_share * 100.0
        );
        let _ = writeln!(
            out,
            "  per kind, ours (BM25): {}",
            pooled_kinds(ours, &baseline)
        );
        if p.margin < BM25_MARGIN || p.low <= 0.0 {
            below.push(format!(
                "{configuration}: {:+.3} ({:+.3} to {:+.3})",
                p.margin, p.low, p.high
            ));
        }
        if p.graded_share < *graded_floor {
            below.push(format!(
                "{configuration}: {:.1}% of the hits returned graded, under {:.0}%",
                p.graded_share * 100.0,
                graded_floor * 100.0
            ));
        }
    }
    eprintln!("{out}");
    assert!(
        below.is_empty(),
        "pooled over the held-out sets, under the +{BM25_MARGIN} margin over BM25, with an \
         interval reaching zero, or with fewer of the hits graded than before: {below:?}"
    );
    Ok(())
}

/// Least share of the hits returned to the held-out sets' answerable queries, pooled, that
/// quote a graded span: a regression floor under what the sixteenth round of issue 14 measured
/// (46.6 % words only, 48.4 % with the model; over seven sets since the eighteenth, 46.2 % and
/// 47.8 %; over nine since the nineteenth, 45.4 % and 47.2 %; over the nine of the twentieth,
/// the eighth out and the tenth in, 45.6 % and 47.1 %, then 45.7 % and 47.3 % with one quote
/// per text; with the eleventh set added, 45.3 % and 46.8 %, so the floor with the model moved
/// from 47 % to 46 % with the pool, not with the ranking; with the twelfth, 46.3 % and 47.7 %),
/// above the fifteenth round's
/// 42.3 % and 44.1 %,
/// when every free place of a short page was filled with followed hits none of which was graded.
/// A change that adds hits after the answers costs nothing in nDCG@5; this is what it costs.
/// Pooled by hits, so it rewards short pages: the nDCG@5 and recall floors are what keep a page
/// from being cut to raise it.
const POOLED_GRADED_SHARE: f64 = 0.45;
const POOLED_EMBEDDED_GRADED_SHARE: f64 = 0.46;

/// The held-out sets' totals as one set.
struct Pooled {
    queries: usize,
    ours: f64,
    baseline: f64,
    margin: f64,
    /// The margin's 95 % paired bootstrap interval.
    low: f64,
    high: f64,
    stale: u32,
    baseline_stale: u32,
    changes: u32,
    /// Share of the hits returned to answerable queries that quote a graded span.
    graded_share: f64,
}

/// nDCG@5 of every answerable query of `ours` and `baseline` (the same sets, in the same
/// order) as one set, the margin with its interval, the stale pages, and the hits graded.
fn pooled(ours: &[&Measured], baseline: &[&Measured]) -> Pooled {
    let ndcgs = |sets: &[&Measured]| -> Vec<f64> {
        sets.iter().flat_map(|m| m.ndcgs.iter().copied()).collect()
    };
    let (ours_ndcgs, baseline_ndcgs) = (ndcgs(ours), ndcgs(baseline));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (low, high) = paired_interval(&ours_ndcgs, &baseline_ndcgs);
    let (ours_mean, baseline_mean) = (mean(&ours_ndcgs), mean(&baseline_ndcgs));
    Pooled {
        queries: ours_ndcgs.len(),
        ours: ours_mean,
        baseline: baseline_mean,
        margin: ours_mean - baseline_mean,
        low,
        high,
        stale: ours.iter().map(|m| m.superseded_first).sum(),
        baseline_stale: baseline.iter().map(|m| m.superseded_first).sum(),
        changes: ours.iter().map(|m| m.changes).sum(),
        graded_share: ours.iter().map(|m| m.graded_hits).sum::<usize>() as f64
            / ours.iter().map(|m| m.answered_hits).sum::<usize>().max(1) as f64,
    }
}

/// nDCG@5 of each kind of query over the sets pooled, ours and the baseline's: which kinds
/// the margin comes from, and which fall under plain BM25.
fn pooled_kinds(ours: &[&Measured], baseline: &[&Measured]) -> String {
    let sum = |sets: &[&Measured]| {
        let mut kinds: BTreeMap<String, Sums> = BTreeMap::new();
        for (kind, sums) in sets.iter().flat_map(|m| &m.kinds) {
            let pool = kinds.entry(kind.clone()).or_default();
            pool.queries += sums.queries;
            pool.ndcg += sums.ndcg;
        }
        kinds
    };
    let (ours, baseline) = (sum(ours), sum(baseline));
    ours.iter()
        .map(|(kind, sums)| {
            let b = baseline.get(kind).map_or(0.0, |s| s.mean().0);
            format!("{kind} {:.3} ({b:.3})", sums.mean().0)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The changes set: facts that change over time, with a partly stale `MEMORY.md`.
#[test]
fn changes_find_the_current_statement() -> anyhow::Result<()> {
    check_set(
        "changes",
        &fixtures("relevance-changes"),
        (&CHANGES_FLOORS, &CHANGES_EMBEDDED_FLOORS),
        true,
    )
}

/// Hits of the candidate pool the ceiling picks from: word windows and lines close in meaning,
/// taking turns, for every query.
const POOL: usize = 40;
/// Candidates of a guess (the hits it would return without its limit) its best 2 are picked
/// from.
const GUESS_CANDIDATES: usize = 10;

/// The best page of `picks` hits a perfect re-ranker could make from the first `n` hits of
/// `pool`, picked greedily (each next hit the one adding most nDCG@5): a lower bound on the best
/// possible page.
fn best_page(pool: &[Hit], n: usize, picks: usize, relevant: &[Span]) -> f64 {
    let mut page: Vec<Hit> = Vec::with_capacity(picks);
    let mut left: Vec<&Hit> = pool.iter().take(n).collect();
    while page.len() < picks && !left.is_empty() {
        let gain = |h: &Hit| {
            let mut with = page.clone();
            with.push(h.clone());
            score(&with, relevant).0
        };
        let Some((i, _)) = left
            .iter()
            .enumerate()
            .max_by(|a, b| gain(a.1).total_cmp(&gain(b.1)).then(b.0.cmp(&a.0)))
        else {
            break;
        };
        page.push(left.remove(i).clone());
    }
    score(&page, relevant).0
}

/// The ceiling's sizes: the best page of the first this many uncut candidates.
const CEILING_SIZES: [usize; 4] = [5, 10, 20, POOL];

/// How much of the gap to the targets re-ranking could close: for each set, nDCG@5 of the page
/// the search returns; of the best page a perfect re-ranker could pick from the first 5, 10, 20
/// and 40 candidates the search finds when no floor, guess limit or meaning threshold cuts them
/// (word windows and close lines taking turns); and of the page with each guess's 2 hits the
/// best 2 of the first 10 it would return without its limit. Run with `RELEVANCE_CEILING=1`
/// (and the embedding model); the table goes into BENCHMARKS.md. Totals only, so the held-out
/// sets stay held out.
#[test]
fn ceiling_table() -> anyhow::Result<()> {
    if std::env::var_os("RELEVANCE_CEILING").is_none() {
        return Ok(());
    }
    let Some(model) = word_model() else {
        anyhow::bail!("the ceiling is measured with the embedding model; none was found");
    };
    let mut out = String::from("| set | search | page |");
    for n in CEILING_SIZES {
        let _ = write!(out, " best of {n} |");
    }
    out.push_str(" guesses: best 2 of 10 |\n|---|---|---:|");
    out.push_str(&"---:|".repeat(CEILING_SIZES.len() + 1));
    out.push('\n');
    for (name, set) in every_set() {
        for (search, model) in [("with the model", Some(&model)), ("words only", None)] {
            let row = ceiling_row(&set, model)?;
            let _ = write!(out, "| {name} | {search} |");
            for sums in &row {
                let _ = write!(out, " {:.3} |", sums.mean().0);
            }
            out.push('\n');
        }
    }
    eprintln!(
        "nDCG@5 of the page; of the best page picked from the first N candidates; and of the \
         page with each guess's 2 hits the best of its first 10 candidates:\n\n{out}"
    );
    Ok(())
}

/// One row of the ceiling table: the page, the best of each of [`CEILING_SIZES`], and the
/// best guesses.
fn ceiling_row(set: &Path, model: Option<&Arc<WordModel>>) -> anyhow::Result<Vec<Sums>> {
    let labels = labels(set)?;
    let today = today(&labels);
    let index_with = |options| searcher(set, &labels, options, model.cloned());
    let shipped = index_with(RankOptions::default())?;
    let uncut = index_with(RankOptions {
        min_coverage: 0.0,
        relative_floor: 0.0,
        // Every search a guess, so the lines close in meaning always join the pool.
        confident_coverage: f32::INFINITY,
        guess_limit: POOL,
        meaning_similarity: Some(0.0),
        ..RankOptions::default()
    })?;
    let unlimited = index_with(RankOptions {
        guess_limit: GUESS_CANDIDATES,
        ..RankOptions::default()
    })?;
    let guess_limit = RankOptions::default().guess_limit;
    let search = |index: &MemoryIndex, text: &str, limit: usize| -> Vec<Hit> {
        index
            .search(text, limit, today)
            .iter()
            .map(Hit::from)
            .collect()
    };
    // The page, each best of N, the best guesses.
    let mut row = vec![Sums::default(); CEILING_SIZES.len() + 2];
    for query in labels["queries"].as_array().context("queries")? {
        let text = query["query"].as_str().context("query text")?;
        let relevant = spans(query, "relevant")?;
        if relevant.is_empty() {
            continue;
        }
        let hits = search(&shipped, text, K);
        let page = score(&hits, &relevant).0;
        let pool = search(&uncut, text, POOL);
        let mut scores = vec![page];
        scores.extend(
            CEILING_SIZES
                .iter()
                .map(|&n| best_page(&pool, n, K, &relevant)),
        );
        // A guess keeps its limit of 2 hits, but they are the best 2 of the first 10 it could
        // have returned.
        let guess = !hits.is_empty() && hits.iter().all(|h| h.weak);
        scores.push(if guess {
            let candidates = search(&unlimited, text, GUESS_CANDIDATES);
            best_page(&candidates, GUESS_CANDIDATES, guess_limit, &relevant)
        } else {
            page
        });
        for (sums, value) in row.iter_mut().zip(scores) {
            sums.add(value, 0.0, 0.0);
        }
    }
    Ok(row)
}

/// Writes every set's pages, as the relevance test scores them, for re-rankers measured outside
/// the server (`bench/model_fusion.py`): `DIR/<set directory>-<words|model>.json`, a list of
/// `{"query", "hits": [{"file", "start", "end", "weak"}]}` in the set's query order. Run with
/// `RELEVANCE_PAGES=DIR`. The held-out sets' pages are written too, for a script that prints
/// their totals only; reading them per query would make them tuning sets.
#[test]
fn pages_for_rerankers_outside_the_server() -> anyhow::Result<()> {
    let Some(dir) = std::env::var_os("RELEVANCE_PAGES").map(PathBuf::from) else {
        return Ok(());
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut configurations = vec![("words", None)];
    configurations.extend(word_model().map(|model| ("model", Some(model))));
    for (_, set) in every_set() {
        let labels = labels(&set)?;
        let today = today(&labels);
        let name = set
            .file_name()
            .and_then(|n| n.to_str())
            .context("a set directory's name")?;
        for (configuration, model) in &configurations {
            let index = searcher(&set, &labels, RankOptions::default(), model.clone())?;
            let mut pages = Vec::new();
            for query in labels["queries"].as_array().context("queries")? {
                let text = query["query"].as_str().context("query text")?;
                let hits: Vec<Value> = index
                    .search(text, K, today)
                    .iter()
                    .map(Hit::from)
                    .map(|hit| {
                        serde_json::json!({
                            "file": hit.file,
                            "start": hit.start,
                            "end": hit.end,
                            "weak": hit.weak,
                        })
                    })
                    .collect();
                pages.push(serde_json::json!({"query": text, "hits": hits}));
            }
            let path = dir.join(format!("{name}-{configuration}.json"));
            std::fs::write(&path, serde_json::to_vec(&pages)?)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

/// One index has seen notes edited, removed, put back and added then removed, as a
/// long-running server's does, and is saved and loaded again; another builds the same files
/// from scratch, as on a new machine. All must answer every query of the tuning sets alike,
/// hit for hit and score for score, with the model and without: chunk ids, file slots and the
/// word table follow the index's history, and no ranking may.
#[test]
fn an_edited_workspace_answers_every_query_as_a_fresh_build_does() -> anyhow::Result<()> {
    let mut models = vec![None];
    models.extend(word_model().map(Some));
    for name in ["relevance", "relevance-changes", "relevance-lookups"] {
        let set = fixtures(name);
        let labels = labels(&set)?;
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("workspace");
        common::copy_tree(&workspace(&set, &labels), &root)?;
        let mut notes: Vec<PathBuf> = std::fs::read_dir(root.join("memory"))?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        notes.sort();
        let mut forms = String::from("- Zanzibar quokkas, a xylophonist's gazebo.");
        for note in notes.iter().take(40) {
            let text = std::fs::read_to_string(note)?;
            for word in text.split(|c: char| !c.is_ascii_alphabetic()) {
                if word.len() >= 5 {
                    write!(forms, " {word}s {word}ed {word}ing")?;
                }
            }
        }
        forms.push('\n');
        for model in &models {
            let mut edited =
                MemoryIndex::new(MemoryStore::new(root.clone()), RankOptions::default());
            edited.refresh()?;
            edited.use_word_model(model.clone());
            // Rewritten as they were: read again, new chunk ids.
            for note in notes.iter().step_by(3) {
                let text = std::fs::read(note)?;
                let file = std::fs::File::create(note)?;
                std::io::Write::write_all(&mut &file, &text)?;
                file.set_modified(
                    std::time::SystemTime::now() + std::time::Duration::from_secs(9),
                )?;
            }
            // Gone and back: new file slots.
            let gone: Vec<(PathBuf, Vec<u8>)> = notes
                .iter()
                .skip(1)
                .step_by(5)
                .map(|note| std::fs::read(note).map(|text| (note.clone(), text)))
                .collect::<Result<_, _>>()?;
            for (note, _) in &gone {
                std::fs::remove_file(note)?;
            }
            // A note, for a while, holding words no other does, and other forms of the notes'
            // own words ("walks" beside "walk"): the word table keeps them, and the latter's
            // stems live on.
            let passing = root.join("memory/2020-01-01.md");
            std::fs::write(&passing, &forms)?;
            edited.refresh()?;
            for (note, text) in &gone {
                std::fs::write(note, text)?;
            }
            std::fs::remove_file(&passing)?;
            edited.refresh()?;
            // What it saves, loaded again (as a server starting on that index file).
            let canonical = std::fs::canonicalize(&root)?;
            let mut loaded = MemoryIndex::from_snapshot(
                &edited.to_snapshot(&canonical)?,
                &canonical,
                MemoryStore::new(root.clone()),
                RankOptions::default(),
            )?;
            loaded.refresh()?;
            loaded.use_word_model(model.clone());
            let mut fresh =
                MemoryIndex::new(MemoryStore::new(root.clone()), RankOptions::default());
            fresh.refresh()?;
            fresh.use_word_model(model.clone());
            let today = today(&labels);
            let mut differ = Vec::new();
            for query in labels["queries"].as_array().context("queries")? {
                let text = query["query"].as_str().context("query text")?;
                let answer = fresh.search(text, K, today);
                if edited.search(text, K, today) != answer
                    || loaded.search(text, K, today) != answer
                {
                    differ.push(text.to_owned());
                }
            }
            assert!(
                differ.is_empty(),
                "{name} ({}): an edited index (or its saved file) and a fresh one answer \
                 differently: {differ:?}",
                if model.is_some() {
                    "with the model"
                } else {
                    "words only"
                }
            );
        }
    }
    Ok(())
}
