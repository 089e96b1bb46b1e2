//! Measured relevance of the local search on the labelled set in `tests/fixtures/relevance/`
//! (a generated OpenClaw workspace and queries with graded line spans; see its `generate.py`).
//! Prints nDCG@5, recall@5 and MRR overall and per kind of query, how often a superseded fact
//! outranks the current one, and how many hits no-answer queries get; fails below the targets.
//!
//! `RELEVANCE_SET=DIR` scores another set in the same format (`DIR/workspace`,
//! `DIR/queries.json`). `cargo test -p openclaw-memory --test relevance -- --nocapture` shows
//! the table.
#![expect(
    clippy::cast_precision_loss,
    reason = "metrics over a few hundred queries"
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use openclaw_memory::index::rank::RankOptions;
use openclaw_memory::store::MemoryStore;
use openclaw_memory::{LocalHit, MemoryIndex};
use serde_json::Value;

/// Hits looked at per query, as the tool's default `limit`.
const K: usize = 5;
/// Grade from which a span counts as an answer (recall, MRR).
const ANSWER_GRADE: u64 = 2;

#[derive(Debug, Clone)]
struct Span {
    file: String,
    start: usize,
    end: usize,
    grade: u64,
}

impl Span {
    fn parse(value: &Value) -> Option<Self> {
        Some(Self {
            file: value["file"].as_str()?.to_owned(),
            start: usize::try_from(value["start"].as_u64()?).ok()?,
            end: usize::try_from(value["end"].as_u64()?).ok()?,
            grade: value["grade"].as_u64()?,
        })
    }

    fn overlaps(&self, hit: &LocalHit) -> bool {
        hit.path.to_string() == self.file
            && hit.start_line <= self.end
            && self.start <= hit.end_line
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
fn score(hits: &[LocalHit], relevant: &[Span]) -> (f64, f64, f64) {
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

fn first_rank(hits: &[LocalHit], spans: &[Span]) -> Option<usize> {
    hits.iter()
        .take(K)
        .position(|hit| spans.iter().any(|s| s.overlaps(hit)))
}

#[test]
fn local_search_meets_the_relevance_targets() -> anyhow::Result<()> {
    let set = std::env::var_os("RELEVANCE_SET").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/fixtures/relevance"
            ))
        },
        PathBuf::from,
    );
    let labels: Value = serde_json::from_str(
        &std::fs::read_to_string(set.join("queries.json")).context("queries.json")?,
    )?;
    let today = labels["today"]
        .as_str()
        .and_then(openclaw_memory::paths::parse_day);
    let mut index = MemoryIndex::new(
        MemoryStore::new(set.join("workspace")),
        RankOptions::default(),
    );
    index.refresh()?;

    let mut overall = Sums::default();
    let mut kinds: BTreeMap<String, Sums> = BTreeMap::new();
    let (mut changes, mut superseded_first) = (0, 0);
    let (mut no_answer, mut no_answer_hits) = (0, 0);
    let mut misses = String::new();
    for query in labels["queries"].as_array().context("queries")? {
        let text = query["query"].as_str().context("query text")?;
        let kind = query["kind"].as_str().unwrap_or("other").to_owned();
        let spans = |key: &str| -> Vec<Span> {
            query[key]
                .as_array()
                .map(|a| a.iter().filter_map(Span::parse).collect())
                .unwrap_or_default()
        };
        let (relevant, superseded) = (spans("relevant"), spans("superseded"));
        let hits = index.search(text, K, today);
        if relevant.is_empty() {
            no_answer += 1;
            no_answer_hits += hits.len();
            if !hits.is_empty() {
                let _ = writeln!(misses, "  [none] {text:?} → {} hits", hits.len());
            }
            continue;
        }
        let (ndcg, recall, rr) = score(&hits, &relevant);
        overall.add(ndcg, recall, rr);
        kinds.entry(kind.clone()).or_default().add(ndcg, recall, rr);
        if !superseded.is_empty() {
            changes += 1;
            let old = first_rank(&hits, &superseded);
            let current = first_rank(&hits, &relevant);
            if old.is_some() && (current.is_none() || old < current) {
                superseded_first += 1;
                let _ = writeln!(misses, "  [superseded first] {text:?}");
            }
        }
        if ndcg < 0.5 || recall < 1.0 {
            let got: Vec<String> = hits
                .iter()
                .map(|h| format!("{}#L{}-L{}", h.path, h.start_line, h.end_line))
                .collect();
            let _ = writeln!(misses, "  [{kind}] {text:?} → {got:?}");
        }
    }

    let (ndcg, recall, mrr) = overall.mean();
    let superseded_rate = f64::from(superseded_first) / f64::from(changes.max(1));
    let none_avg = no_answer_hits as f64 / f64::from(no_answer.max(1));
    let mut table =
        String::from("| kind | queries | nDCG@5 | recall@5 | MRR |\n|---|---:|---:|---:|---:|\n");
    for (kind, sums) in &kinds {
        let (n, r, m) = sums.mean();
        let _ = writeln!(
            table,
            "| {kind} | {} | {n:.3} | {r:.3} | {m:.3} |",
            sums.queries
        );
    }
    let _ = writeln!(
        table,
        "| **all** | {} | **{ndcg:.3}** | **{recall:.3}** | **{mrr:.3}** |",
        overall.queries
    );
    let _ = writeln!(
        table,
        "\nsuperseded fact above the current one: {superseded_first} of {changes} change-over-time \
         queries ({:.1}%)\nno-answer queries: {no_answer}, {none_avg:.2} hits on average",
        superseded_rate * 100.0
    );
    eprintln!("{table}");
    if !misses.is_empty() {
        eprintln!("queries with nDCG@5 below 0.5 or an answer missing:\n{misses}");
    }
    assert!(ndcg >= 0.85, "nDCG@5 {ndcg:.3} is below 0.85");
    assert!(recall >= 0.92, "recall@5 {recall:.3} is below 0.92");
    assert!(
        superseded_rate <= 0.05,
        "a superseded fact outranked the current one in {superseded_rate:.3} of the queries"
    );
    assert!(none_avg <= 1.0, "no-answer queries got {none_avg:.2} hits");
    Ok(())
}
