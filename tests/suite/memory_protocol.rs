//! `openclaw-memory` on the wire, with raw JSON-RPC lines for what an SDK would not send: a
//! `server/discover` probe, unknown methods, malformed lines, and a cancelled call that must
//! get no answer while the server keeps serving.

use bridge_test_support::{McpProcess, binary_path};
use serde_json::json;
use tempfile::TempDir;

/// A home holding an OpenClaw workspace whose `MEMORY.md` names the router.
pub(crate) fn workspace() -> anyhow::Result<TempDir> {
    let home = TempDir::new()?;
    let ws = home.path().join(".openclaw/workspace");
    std::fs::create_dir_all(ws.join("memory"))?;
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n- The router is a MikroTik hAP.\n",
    )?;
    Ok(home)
}

#[tokio::test]
async fn raw_server_discover_is_answered_and_initialize_still_works() -> anyhow::Result<()> {
    let home = workspace()?;
    let mut mcp = McpProcess::spawn(&binary_path("openclaw-memory"), &[], home.path(), &[])?;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discovered = mcp
        .request("server/discover", json!({"_meta": meta}))
        .await?;
    let versions = &discovered["result"]["supportedVersions"];
    assert!(
        versions
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{discovered}"
    );
    // A bare probe without metadata is refused with a JSON-RPC error, not a crash.
    let bare = mcp.request("server/discover", json!({})).await?;
    assert_eq!(bare["error"]["code"], json!(-32602), "{bare}");
    let init = mcp.initialize().await?;
    assert_eq!(init["serverInfo"]["name"], json!("openclaw-memory"));
    let found = mcp
        .call_tool("openclaw_memory_search", json!({"query": "router"}))
        .await?;
    assert_eq!(
        found["result"]["structuredContent"]["hits"][0]["citation"],
        json!("MEMORY.md#L3-L3"),
        "{found}"
    );
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

#[tokio::test]
async fn unknown_methods_and_garbage_do_not_stop_the_server() -> anyhow::Result<()> {
    let home = workspace()?;
    let mut mcp = McpProcess::spawn(&binary_path("openclaw-memory"), &[], home.path(), &[])?;
    mcp.initialize().await?;
    mcp.send_line("{\"jsonrpc\":\"2.0\",\"id\":").await?;
    mcp.send_line("[]").await?;
    let unknown = mcp
        .request("memory/write", json!({"file": "MEMORY.md"}))
        .await?;
    assert_eq!(unknown["error"]["code"], json!(-32601), "{unknown}");
    let bad = mcp
        .call_tool("openclaw_memory_read", json!({"file": ["MEMORY.md"]}))
        .await?;
    assert_eq!(bad["result"]["isError"], json!(true), "{bad}");
    let read = mcp.call_tool("openclaw_memory_read", json!({})).await?;
    assert_eq!(
        read["result"]["structuredContent"]["totalLines"],
        json!(3),
        "{read}"
    );
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer_and_the_next_one_does() -> anyhow::Result<()> {
    let home = workspace()?;
    // Enough notes that building the index takes longer than the cancel takes to arrive.
    let bulk = home.path().join(".openclaw/workspace/memory/bulk");
    std::fs::create_dir_all(&bulk)?;
    let body = "- filler about gardens, kites and the weather in spring\n".repeat(40);
    for i in 0..3000 {
        std::fs::write(bulk.join(format!("n{i}.md")), &body)?;
    }
    let mut mcp = McpProcess::spawn(&binary_path("openclaw-memory"), &[], home.path(), &[])?;
    mcp.initialize().await?;
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
        "params": {"name": "openclaw_memory_search", "arguments": {"query": "gardens kites"}}}),
    )
    .await?;
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "slow", "reason": "test"}}),
    )
    .await?;
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "next", "method": "tools/call",
        "params": {"name": "openclaw_memory_read", "arguments": {"lines": 1}}}),
    )
    .await?;
    // The first message with an id must be the answer to "next": "slow" was cancelled.
    let answer = loop {
        let message = mcp.recv().await?;
        if message.get("id").is_some() {
            break message;
        }
    };
    assert_eq!(answer["id"], json!("next"), "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["text"],
        json!("# Memory")
    );
    // A search waits for the index the cancelled call was building, so it is answered after
    // that call finished: if the cancelled call were answered, it would come first.
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "after", "method": "tools/call",
        "params": {"name": "openclaw_memory_search", "arguments": {"query": "router"}}}),
    )
    .await?;
    let after = loop {
        let message = mcp.recv().await?;
        if message.get("id").is_some() {
            break message;
        }
    };
    assert_eq!(after["id"], json!("after"), "{after}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}
