"""End-to-end checks of `openclaw-memory` through the official MCP Python SDK (`mcp` 2.3).

Usage: memory_e2e.py BINARY

Spawns the server with the SDK's stdio client against temporary OpenClaw workspaces and checks
tool schemas, every tool's results and errors, bad arguments, an unknown tool, path attacks,
the call-depth limit, cancellation and the modern `server/discover` opening. Prints one line
per check and a closing "N passed, M failed" line; exits 1 if any check failed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

BINARY = ""
TOOLS = {"openclaw_memory_search", "openclaw_memory_read", "openclaw_user_prefs"}
SECRET = "zanzibar-secret-7731"

MEMORY_MD = """# MEMORY.md

- The user's home server is called "bluefin" and runs Debian 12.
- Decision 2026-11-20: use PostgreSQL 16 for the invoicing project, not MySQL.
"""
DAILY = """# 2026-11-21

- Debugged the tokio-tungstenite reconnect loop with the user; exponential backoff capped at 30s.
- User mentioned they will travel to Lisbon next week.
"""
USER_MD = """# USER.md - User Model

## Directives

<!-- observed: 2026-11-20 | status: active -->

- Prefer concise answers with Rust code examples.

<!-- observed: 2026-10-02 | status: superseded -->

- Always answer in French.
"""


def make_workspace(root: Path) -> Path:
    """A realistic OpenClaw workspace plus attack material around it."""
    home = root / "home"
    ws = home / ".openclaw" / "workspace"
    (ws / "memory" / "imports").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY_MD)
    (ws / "USER.md").write_text(USER_MD)
    (ws / "memory" / "2026-11-21.md").write_text(DAILY)
    long_note = "".join(f"- line {i} of a long imported chat\n" for i in range(1, 301))
    (ws / "memory" / "imports" / "chat.md").write_text(long_note)
    (ws / "users" / "sam").mkdir(parents=True)
    (ws / "users" / "sam" / "USER.md").write_text(
        "## Directives\n<!-- observed: 2026-11-01 | status: active -->\n- Sam likes tables.\n"
    )
    # Things that must never come out: a secret beside the workspace, a symlinked note and a
    # symlinked folder pointing at it, a sibling folder whose name shares a prefix with memory/,
    # and a non-memory file inside the workspace.
    secret = root / "secret.md"
    secret.write_text(f"- {SECRET} root:x:0:0\n")
    (ws / "memory" / "leak.md").symlink_to(secret)
    (ws / "memory" / "outside").symlink_to(root)
    (ws / "memory-evil").mkdir()
    (ws / "memory-evil" / "x.md").write_text(f"- {SECRET}\n")
    (ws / "AGENTS.md").write_text(f"- {SECRET}\n")
    (ws.parent / "openclaw.json").write_text('{"gateway": {"auth": {"token": "%s"}}}' % SECRET)
    return home


def params(home: Path, extra_env: dict[str, str] | None = None) -> StdioServerParameters:
    env = {"HOME": str(home), "RUST_LOG": "warn", "COPILOT_AUDIT_LOG_DIR": str(home / "audit")}
    env.update(extra_env or {})
    return StdioServerParameters(command=BINARY, args=[], env=env, cwd=str(home))


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def no_leak(result: Any) -> None:
    dumped = result.model_dump_json()
    assert SECRET not in dumped, f"secret leaked: {dumped[:500]}"


async def check_schemas(session: ClientSession, home: Path) -> None:
    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    assert names == TOOLS, names
    for tool in listed.tools:
        schema = tool.input_schema
        assert isinstance(schema, dict) and schema.get("type") == "object", (tool.name, schema)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert "$ref" not in str(schema), (tool.name, schema)
        depth = schema["properties"]["_depth"]
        assert depth["type"] == "integer" and "default" not in depth, depth
        assert "_depth" not in schema.get("required", []), schema
        assert tool.annotations is not None and tool.annotations.read_only_hint is True, tool.name
        assert tool.output_schema and tool.output_schema.get("type") == "object", tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.description and len(tool.description) > 40, tool.name
    search = next(t for t in listed.tools if t.name == "openclaw_memory_search")
    assert search.input_schema["required"] == ["query"], search.input_schema


async def check_search(session: ClientSession, home: Path) -> None:
    result = await session.call_tool("openclaw_memory_search", {"query": "PostgreSQL invoicing"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["source"] == "local" and data["query"] == "PostgreSQL invoicing", data
    top = data["hits"][0]
    assert top["path"] == "MEMORY.md", data
    assert (top["startLine"], top["endLine"]) == (4, 4), top
    assert top["citation"] == "MEMORY.md#L4-L4" and top["source"] == "local", top
    assert "PostgreSQL 16" in top["snippet"] and top["score"] > 0, top
    assert "MEMORY.md#L4-L4" in text_of(result)
    # Words far apart in one note (different bullets) still find it.
    apart = await session.call_tool("openclaw_memory_search", {"query": "Lisbon backoff", "limit": 1})
    hits = apart.structured_content["hits"]
    assert len(hits) == 1 and hits[0]["path"] == "memory/2026-11-21.md", hits
    none = await session.call_tool("openclaw_memory_search", {"query": "kangaroo"})
    assert not none.is_error and none.structured_content["hits"] == [], none


async def check_fresh(session: ClientSession, home: Path) -> None:
    note = home / ".openclaw" / "workspace" / "memory" / "2026-11-22.md"
    search = lambda: session.call_tool("openclaw_memory_search", {"query": "quokka"})  # noqa: E731
    assert (await search()).structured_content["hits"] == []
    note.write_text("- Saw a quokka at the zoo.\n")
    hits = (await search()).structured_content["hits"]
    assert [h["path"] for h in hits] == ["memory/2026-11-22.md"], hits
    note.write_text("- Nothing about animals any more, just a longer line of text.\n")
    assert (await search()).structured_content["hits"] == []
    note.write_text("- The quokka came back.\n")
    assert len((await search()).structured_content["hits"]) == 1
    note.unlink()
    assert (await search()).structured_content["hits"] == []


async def check_read(session: ClientSession, home: Path) -> None:
    default = await session.call_tool("openclaw_memory_read", {})
    assert not default.is_error, text_of(default)
    data = default.structured_content
    assert data["path"] == "MEMORY.md" and data["text"] == MEMORY_MD.rstrip("\n"), data
    assert (data["from"], data["to"], data["totalLines"], data["truncated"]) == (1, 4, 4, False), data
    window = await session.call_tool(
        "openclaw_memory_read", {"file": "memory/imports/chat.md", "from": 10, "lines": 5}
    )
    data = window.structured_content
    assert data["text"].splitlines()[0] == "- line 10 of a long imported chat", data
    assert (data["from"], data["to"], data["nextFrom"], data["truncated"]) == (10, 14, 15, True), data
    assert "from=15" in text_of(window)
    default_window = await session.call_tool("openclaw_memory_read", {"file": "memory/imports/chat.md"})
    assert default_window.structured_content["to"] == 120, default_window.structured_content
    past = await session.call_tool("openclaw_memory_read", {"file": "MEMORY.md", "from": 99})
    assert past.is_error and "past the end" in text_of(past), text_of(past)
    missing = await session.call_tool("openclaw_memory_read", {"file": "memory/none.md"})
    assert missing.is_error and "does not exist" in text_of(missing), text_of(missing)


async def check_prefs(session: ClientSession, home: Path) -> None:
    result = await session.call_tool("openclaw_user_prefs", {})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    active = [d["text"] for d in data["directives"]["active"]]
    superseded = [d["text"] for d in data["directives"]["superseded"]]
    assert active == ["Prefer concise answers with Rust code examples."], data
    assert superseded == ["Always answer in French."], data
    assert data["directives"]["active"][0]["observed"] == "2026-11-20", data
    assert data["path"] == "USER.md" and "## Directives" in data["text"], data
    sam = await session.call_tool("openclaw_user_prefs", {"profile": "sam"})
    assert sam.structured_content["path"] == "users/sam/USER.md", sam.structured_content
    assert [d["text"] for d in sam.structured_content["directives"]["active"]] == ["Sam likes tables."]
    nobody = await session.call_tool("openclaw_user_prefs", {"profile": "nobody"})
    assert nobody.is_error and "does not exist" in text_of(nobody), text_of(nobody)


async def check_bad_arguments(session: ClientSession, home: Path) -> None:
    cases = [
        ("openclaw_memory_search", {}, "query"),
        ("openclaw_memory_search", {"query": "x", "limit": "five"}, "limit"),
        ("openclaw_memory_search", {"query": "x", "limit": 0}, "between 1 and 50"),
        ("openclaw_memory_search", {"query": "x", "limit": 51}, "between 1 and 50"),
        ("openclaw_memory_search", {"query": 42}, "string"),
        ("openclaw_memory_search", {"query": "x", "querry": "y"}, "querry"),
        ("openclaw_memory_search", {"query": "   "}, "empty"),
        ("openclaw_memory_read", {"file": 7}, "string"),
        ("openclaw_memory_read", {"from": -1}, "from"),
        ("openclaw_memory_read", {"lines": 0}, "lines"),
        ("openclaw_user_prefs", {"profile": ["a"]}, "profile"),
        ("openclaw_memory_search", {"query": "x", "_depth": "deep"}, "_depth"),
    ]
    for tool, arguments, expected in cases:
        result = await session.call_tool(tool, arguments)
        message = text_of(result)
        assert result.is_error, (tool, arguments, message)
        assert expected in message, (tool, arguments, message)
    # The server is still fine afterwards.
    ok = await session.call_tool("openclaw_memory_search", {"query": "bluefin"})
    assert not ok.is_error and ok.structured_content["hits"], ok


async def check_unknown_tool(session: ClientSession, home: Path) -> None:
    try:
        result = await session.call_tool("openclaw_memory_write", {"file": "MEMORY.md"})
    except MCPError as error:
        assert "unknown tool" in str(error) and "openclaw_memory_search" in str(error), str(error)
    else:
        raise AssertionError(f"unknown tool answered: {result}")
    ok = await session.call_tool("openclaw_memory_read", {"file": "USER.md", "lines": 1})
    assert not ok.is_error


async def check_path_attacks(session: ClientSession, home: Path) -> None:
    for file in [
        "../openclaw.json",
        "/etc/passwd",
        "memory/../../secret.md",
        "memory/../AGENTS.md",
        "AGENTS.md",
        "memory-evil/x.md",
        "memory/leak.md",
        "memory/outside/secret.md",
        "MEMORY.md\u0000",
        "~/.openclaw/openclaw.json",
        "memory\\..\\..\\secret.md",
        "users/../../secret.md",
    ]:
        result = await session.call_tool("openclaw_memory_read", {"file": file})
        assert result.is_error, (file, text_of(result))
        no_leak(result)
    for profile in ["..", "../..", "sam/../..", "/etc", "sam\u0000"]:
        result = await session.call_tool("openclaw_user_prefs", {"profile": profile})
        assert result.is_error, (profile, text_of(result))
        no_leak(result)
    result = await session.call_tool("openclaw_memory_search", {"query": SECRET + " root", "limit": 50})
    assert not result.is_error and result.structured_content["hits"] == [], result
    assert "root:x:0:0" not in result.model_dump_json(), result


async def check_symlinked_user_md(session: ClientSession, home: Path) -> None:
    result = await session.call_tool("openclaw_user_prefs", {})
    assert result.is_error and "outside" in text_of(result), text_of(result)
    no_leak(result)


async def check_depth(session: ClientSession, home: Path) -> None:
    ok = await session.call_tool("openclaw_memory_search", {"query": "bluefin", "_depth": 2})
    assert not ok.is_error, text_of(ok)
    for tool in TOOLS:
        refused = await session.call_tool(tool, {"_depth": 3, "query": "bluefin"} if "search" in tool else {"_depth": 3})
        assert refused.is_error and "call depth 3" in text_of(refused), (tool, text_of(refused))


async def check_inherited_depth(session: ClientSession, home: Path) -> None:
    refused = await session.call_tool("openclaw_memory_read", {})
    assert refused.is_error and "call depth" in text_of(refused), text_of(refused)


async def check_no_workspace(session: ClientSession, home: Path) -> None:
    for tool, arguments in [
        ("openclaw_memory_search", {"query": "x"}),
        ("openclaw_memory_read", {}),
        ("openclaw_user_prefs", {}),
    ]:
        result = await session.call_tool(tool, arguments)
        message = text_of(result)
        assert result.is_error and "Looked in" in message, (tool, message)
        assert ".openclaw/workspace" in message and "OPENCLAW_WORKSPACE_DIR" in message, message


async def check_cancellation(session: ClientSession, home: Path) -> None:
    # A big workspace makes the first search (the index build) take a while.
    memory = home / ".openclaw" / "workspace" / "memory" / "bulk"
    memory.mkdir(parents=True)
    body = "".join(f"- filler sentence number {i} about gardens and kites\n" for i in range(40))
    for i in range(3000):
        (memory / f"2025-01-{i:04d}.md").write_text(f"# note {i}\n{body}")
    with anyio.move_on_after(0.02) as scope:
        await session.call_tool("openclaw_memory_search", {"query": "gardens kites"})
    assert scope.cancelled_caught, "the search finished before it could be cancelled"
    # The server carries on: the next call is answered.
    result = await session.call_tool("openclaw_memory_search", {"query": "bluefin"})
    assert not result.is_error and result.structured_content["hits"][0]["path"] == "MEMORY.md", result


async def run_session(
    home: Path, check: Callable[[ClientSession, Path], Awaitable[None]], *, env=None, modern=False
) -> None:
    with open(home / "server-stderr.log", "a") as errlog:
        async with stdio_client(params(home, env), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                if modern:
                    discovered = await session.discover()
                    info = discovered.model_dump(by_alias=True)
                    assert "2026-07-28" in info["supportedVersions"], info
                else:
                    init = await session.initialize()
                    assert init.server_info.name == "openclaw-memory", init.server_info
                    assert init.capabilities.tools is not None
                await check(session, home)


async def check_discover_then_tools(session: ClientSession, home: Path) -> None:
    listed = await session.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    result = await session.call_tool("openclaw_memory_search", {"query": "bluefin Debian"})
    assert not result.is_error and result.structured_content["hits"][0]["path"] == "MEMORY.md", result


async def main() -> int:
    passed = failed = 0

    async def case(name: str, check, *, env=None, modern=False, setup=None) -> None:
        nonlocal passed, failed
        with tempfile.TemporaryDirectory(prefix="memory-e2e-") as tmp:
            home = make_workspace(Path(tmp))
            if setup:
                setup(home)
            try:
                with anyio.fail_after(120):
                    await run_session(home, check, env=env, modern=modern)
            except Exception:  # noqa: BLE001 - report every failing check, then fail the run
                failed += 1
                print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
                log = home / "server-stderr.log"
                if log.exists():
                    print("server stderr:\n" + log.read_text()[-3000:], flush=True)
            else:
                passed += 1
                print(f"ok   {name}", flush=True)

    def symlink_user_md(home: Path) -> None:
        user_md = home / ".openclaw" / "workspace" / "USER.md"
        user_md.unlink()
        user_md.symlink_to(home.parent / "secret.md")

    def remove_workspace(home: Path) -> None:
        import shutil

        shutil.rmtree(home / ".openclaw")

    await case("tool schemas are plain, valid and read-only", check_schemas)
    await case("search ranks, cites and finds words far apart", check_search)
    await case("search sees notes written, changed and deleted after start", check_fresh)
    await case("read returns line windows and explains errors", check_read)
    await case("prefs split directives into active and superseded", check_prefs)
    await case("bad arguments come back as clear tool errors", check_bad_arguments)
    await case("an unknown tool is a JSON-RPC error and the server goes on", check_unknown_tool)
    await case("path attacks through all three tools leak nothing", check_path_attacks)
    await case("a USER.md symlinked out of the workspace is refused", check_symlinked_user_md, setup=symlink_user_md)
    await case("calls at the depth limit are refused", check_depth)
    await case("depth inherited from the environment counts", check_inherited_depth, env={"COPILOT_BRIDGE_DEPTH": "3"})
    await case("without a workspace every tool says where it looked", check_no_workspace, setup=remove_workspace)
    await case("a cancelled search does not stop the server", check_cancellation)
    await case("server/discover (2026-07-28) opens a session", check_discover_then_tools, modern=True)

    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv[1])
    sys.exit(anyio.run(main))
