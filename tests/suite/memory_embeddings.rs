//! The optional embedding model through the real `openclaw-memory` binary: a question worded
//! unlike its note finds it with the model (a guess, marked weak) and not without it; a model
//! directory that cannot be used leaves the search working on words, and `check` says why.

use bridge_test_support::{McpProcess, binary_path, embedding_model};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A workspace where the dentist is named only as "Dentist … Lakeside Dental".
fn workspace() -> anyhow::Result<TempDir> {
    let home = super::memory_protocol::workspace()?;
    let ws = home.path().join(".openclaw/workspace");
    let filler = [
        "- Groceries at the market; dinner was soup.",
        "- Standup: sprint planning moved to Thursday.",
        "- Walked along the river before work.",
        "- The build server finished the nightly pipeline.",
    ];
    for day in 1..=20 {
        let mut text = format!("# 2026-03-{day:02}\n\n");
        for line in filler.iter().cycle().skip(day).take(3) {
            text.push_str(line);
            text.push('\n');
        }
        if day == 11 {
            text.push_str(
                "- Dentist: Dr. Chidi Okafor at Lakeside Dental, cleaning booked for 15:30.\n",
            );
        }
        std::fs::write(ws.join(format!("memory/2026-03-{day:02}.md")), text)?;
    }
    Ok(home)
}

async fn search(home: &TempDir, model: &str, query: &str) -> anyhow::Result<Value> {
    let mut mcp = McpProcess::spawn(
        &binary_path("openclaw-memory"),
        &[],
        home.path(),
        &[("OPENCLAW_MEMORY_EMBEDDINGS", model)],
    )?;
    mcp.initialize().await?;
    let answer = mcp
        .call_tool("openclaw_memory_search", json!({"query": query}))
        .await?;
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(answer["result"]["structuredContent"].clone())
}

fn finds_the_dentist(found: &Value) -> bool {
    found["hits"].as_array().is_some_and(|hits| {
        hits.iter()
            .any(|h| h.to_string().contains("Lakeside Dental"))
    })
}

#[tokio::test]
async fn a_question_in_other_words_finds_its_note_only_with_the_model() -> anyhow::Result<()> {
    let home = workspace()?;
    let model = embedding_model();
    let model = model.to_str().unwrap_or_default();
    let query = "who looks after her teeth";

    // No line holds "teeth" (or "looks"): the search is a guess, and the line closest in
    // meaning ("Dentist … Lakeside Dental") is among its at most 2 hits, marked weak.
    let found = search(&home, model, query).await?;
    assert!(finds_the_dentist(&found), "{found}");
    let hits = found["hits"].as_array().cloned().unwrap_or_default();
    assert!(hits.len() <= 2, "{found}");
    assert!(hits.iter().all(|h| h["weak"] == json!(true)), "{found}");

    let words_only = search(&home, "off", query).await?;
    assert!(!finds_the_dentist(&words_only), "{words_only}");

    // An exact lookup quotes the same lines with or without the model.
    let exact = "Chidi Okafor Lakeside Dental";
    let citations = |found: &Value| -> Vec<String> {
        found["hits"]
            .as_array()
            .map(|hits| hits.iter().map(|h| h["citation"].to_string()).collect())
            .unwrap_or_default()
    };
    let with = search(&home, model, exact).await?;
    let without = search(&home, "off", exact).await?;
    assert_eq!(citations(&with), citations(&without), "{with} {without}");
    assert!(finds_the_dentist(&with), "{with}");
    Ok(())
}

#[tokio::test]
async fn an_unusable_model_leaves_search_on_words_and_check_says_why() -> anyhow::Result<()> {
    let home = workspace()?;
    let broken = home.path().join("not-a-model");
    std::fs::create_dir_all(&broken)?;
    std::fs::write(broken.join("tokenizer.json"), "{ not json")?;
    let broken = broken.to_str().unwrap_or_default();

    let found = search(&home, broken, "MikroTik router").await?;
    assert!(found.to_string().contains("MikroTik"), "{found}");

    let output = std::process::Command::new(binary_path("openclaw-memory"))
        .args(["check", "--json"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPENCLAW_MEMORY_EMBEDDINGS", broken)
        .output()?;
    let report: Value = serde_json::from_slice(&output.stdout)?;
    let check = report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "embeddings"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["status"], "fail", "{report}");
    assert!(
        check["detail"]
            .as_str()
            .is_some_and(|d| d.contains("tokenizer.json")),
        "{report}"
    );
    assert!(
        check["fix"]
            .as_str()
            .is_some_and(|f| f.contains("OPENCLAW_MEMORY_EMBEDDINGS")),
        "{report}"
    );
    Ok(())
}
