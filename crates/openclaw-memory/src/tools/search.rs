//! `openclaw_memory_search`: ranked hits from OpenClaw's memory, through the gateway's own
//! search when it is connected, else (or when it fails) from the local index.

use std::fmt::Write as _;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::tool;
use serde::{Deserialize, Serialize};

use crate::index::{LocalHit, snippet};
use crate::server::MemoryServer;
use crate::tools::{Answer, ToolError, blocking};
use openclaw_gateway::search::SearchResult;

/// Hits returned when the caller does not say.
pub const DEFAULT_LIMIT: u32 = 5;
/// Most hits one call may ask for (the gateway's `maxResults` cap too).
pub const MAX_LIMIT: u32 = 50;
/// Longest accepted query, in bytes.
const MAX_QUERY_BYTES: usize = 2_000;

/// Arguments of `openclaw_memory_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for, in plain words, e.g. "database decision for invoicing". Words need
    /// not be next to each other in the note.
    pub query: String,
    /// How many hits to return, 1 to 50 (default 5).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// File relative to the OpenClaw workspace, e.g. `memory/2026-11-21.md`.
    pub path: String,
    /// First line of the snippet (1-based).
    pub start_line: usize,
    /// Last line of the snippet (1-based, inclusive).
    pub end_line: usize,
    /// Relevance; higher is better (scales differ between sources).
    pub score: f64,
    /// The matching lines.
    pub snippet: String,
    /// Where the snippet is, as `path#Lstart-Lend`.
    pub citation: String,
    /// `local` (this server's index) or `gateway` (OpenClaw's own search).
    pub source: String,
    /// `true` when nothing in memory holds most of the query: the hit is a guess sharing a
    /// word or two with it (or, with an embedding model, close to it in meaning), not an
    /// answer. Do not rely on it. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub weak: bool,
}

impl Hit {
    /// Builds a hit, deriving its citation.
    pub fn new(
        path: String,
        start_line: usize,
        end_line: usize,
        score: f64,
        snippet: String,
        source: &str,
    ) -> Self {
        Self {
            citation: format!("{path}#L{start_line}-L{end_line}"),
            path,
            start_line,
            end_line,
            score,
            snippet,
            source: source.to_owned(),
            weak: false,
        }
    }

    fn from_gateway(result: SearchResult) -> Self {
        let mut snippet = result.snippet.trim_end().to_owned();
        if snippet.len() > snippet::MAX_CHARS {
            let mut cut = snippet::MAX_CHARS;
            while !snippet.is_char_boundary(cut) {
                cut -= 1;
            }
            snippet.truncate(cut);
            snippet.push('…');
        }
        Self::new(
            result.path,
            result.start_line,
            result.end_line,
            (result.score * 1_000.0).round() / 1_000.0,
            snippet,
            "gateway",
        )
    }

    fn from_local(hit: LocalHit) -> Self {
        Self {
            weak: hit.weak,
            ..Self::new(
                hit.path.to_string(),
                hit.start_line,
                hit.end_line,
                (f64::from(hit.score) * 1_000.0).round() / 1_000.0,
                hit.snippet,
                "local",
            )
        }
    }
}

/// Result of `openclaw_memory_search`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchOutput {
    /// The query as received.
    pub query: String,
    /// Who answered: `local` or `gateway`.
    pub source: String,
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// Why the answer came from where it did, when that is worth knowing (e.g. the gateway
    /// failed and the local index answered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// Checks the arguments, returning the query and limit.
fn validate(args: &SearchArgs) -> Result<(String, usize), ToolError> {
    let query = args.query.trim();
    if query.is_empty() {
        return Err(ToolError::Model(
            "query is empty; pass the words to look for, e.g. {\"query\": \"laptop model\"}"
                .to_owned(),
        ));
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(ToolError::Model(format!(
            "query is {} bytes; keep it under {MAX_QUERY_BYTES} (a few keywords work best)",
            query.len()
        )));
    }
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ToolError::Model(format!(
            "limit must be between 1 and {MAX_LIMIT}, got {limit}"
        )));
    }
    Ok((query.to_owned(), limit as usize))
}

fn render(output: &SearchOutput) -> String {
    let mut text = String::new();
    let n = output.hits.len();
    let _ = write!(
        text,
        "{n} hit{} for \"{}\" ({} search)",
        if n == 1 { "" } else { "s" },
        output.query,
        output.source
    );
    if let Some(notice) = &output.notice {
        let _ = write!(text, "\nNote: {notice}");
    }
    for (i, hit) in output.hits.iter().enumerate() {
        let _ = write!(
            text,
            "\n\n{}. {} (score {}{})",
            i + 1,
            hit.citation,
            hit.score,
            if hit.weak {
                "; weak: a guess, nothing in memory holds most of the query"
            } else {
                ""
            }
        );
        for line in hit.snippet.lines() {
            let _ = write!(text, "\n   > {line}");
        }
    }
    text
}

impl MemoryServer {
    /// Search OpenClaw's memory (MEMORY.md, daily notes in memory/, USER.md) for notes about a
    /// topic. Returns the best matching line ranges with a citation (`path#L4-L9`) for each;
    /// read more around a hit with openclaw_memory_read. When nothing holds most of the query
    /// it returns at most 2 hits marked `weak: true`: guesses, not answers. Read-only.
    #[tool(
        name = "openclaw_memory_search",
        annotations(title = "Search OpenClaw memory", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SearchOutput>()
    )]
    pub(crate) async fn memory_search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        ctx: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<Answer<SearchOutput>, ToolError> {
        let (query, limit) = validate(&args)?;
        let mut notice = None;
        if let Some(gateway) = self.gateway() {
            match gateway.search(&query, limit, &ctx.ct).await {
                Ok(results) => {
                    let output = SearchOutput {
                        query,
                        source: "gateway".to_owned(),
                        hits: results.into_iter().map(Hit::from_gateway).collect(),
                        notice: None,
                    };
                    return Ok(Answer {
                        text: render(&output),
                        value: output,
                    });
                }
                Err(err) => {
                    tracing::info!(%err, "gateway search failed; answering from the local index");
                    notice = Some(format!(
                        "the OpenClaw gateway could not answer ({err}); these hits come from the \
                         local index"
                    ));
                }
            }
        }
        let service = self.service().clone();
        let local_query = query.clone();
        let (_workspace, hits) = blocking(move || {
            service
                .search_local(&local_query, limit)
                .map_err(ToolError::from)
        })
        .await?;
        let output = SearchOutput {
            query,
            source: "local".to_owned(),
            hits: hits.into_iter().map(Hit::from_local).collect(),
            notice,
        };
        Ok(Answer {
            text: render(&output),
            value: output,
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn args(query: &str, limit: Option<u32>) -> SearchArgs {
        SearchArgs {
            query: query.to_owned(),
            limit,
        }
    }

    #[test]
    fn limits_and_empty_queries_are_checked() {
        assert_eq!(
            validate(&args(" cats ", None)).ok(),
            Some(("cats".into(), 5))
        );
        for bad in [args("", None), args("x", Some(0)), args("x", Some(51))] {
            assert!(validate(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn citations_name_the_line_range() {
        let hit = Hit::new("MEMORY.md".into(), 4, 5, 1.0, "x".into(), "local");
        assert_eq!(hit.citation, "MEMORY.md#L4-L5");
    }
}
