"""`copilot-bridge`'s file tools through the official MCP Python SDK (`mcp` 2.3): schemas,
reads, creates, listings, limits, and the path-attack list, with nothing leaked or written
outside the workspace.

Usage: bridge_files_e2e.py BINARY

Builds its own scratch workspace (with a sibling `ws-evil` directory and symlinks out of the
workspace), prints one line per check and a closing "N passed, M failed" line; exits 1 if any
check failed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

OUTSIDE_SECRET = "outside-marker-51be0c"
FILE_TOOLS = {"copilot_read_file", "copilot_create_file", "copilot_list_files"}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def layout(base: Path) -> tuple[Path, Path]:
    ws = base / "ws"
    outside = base / "ws-evil"
    (ws / "src" / "deep").mkdir(parents=True)
    outside.mkdir()
    (ws / "src" / "main.rs").write_text("fn main() {}\n")
    (ws / "src" / "deep" / "lib.rs").write_text("pub fn f() {}\n")
    (ws / "README.md").write_text("# hello\n")
    (ws / ".env").write_text("OPENAI_API_KEY=sk-proj-" + "A1b2C3d4E5f6G7h8" * 3 + "\n")
    (outside / "secret.txt").write_text(OUTSIDE_SECRET)
    os.symlink(outside / "secret.txt", ws / "link-out")
    os.symlink(outside, ws / "dir-out")
    os.symlink("src/main.rs", ws / "link-in")
    return ws, outside


async def check_schemas(session: ClientSession, ws: Path, outside: Path) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert FILE_TOOLS <= tools.keys(), tools.keys()
    for name in FILE_TOOLS:
        jsonschema.Draft202012Validator.check_schema(tools[name].input_schema)
    assert tools["copilot_read_file"].input_schema["required"] == ["path"]
    assert set(tools["copilot_create_file"].input_schema["required"]) == {"path", "content"}


async def check_read_create_list(session: ClientSession, ws: Path, outside: Path) -> None:
    read = await session.call_tool("copilot_read_file", {"path": "src/main.rs"})
    assert not read.is_error, text_of(read)
    assert "fn main() {}" in text_of(read), text_of(read)
    via_link = await session.call_tool("copilot_read_file", {"path": "link-in"})
    assert not via_link.is_error and "fn main" in text_of(via_link), text_of(via_link)

    created = await session.call_tool(
        "copilot_create_file", {"path": "new/dir/a.txt", "content": "made by python\n"}
    )
    assert not created.is_error, text_of(created)
    assert (ws / "new" / "dir" / "a.txt").read_text() == "made by python\n"
    again = await session.call_tool("copilot_create_file", {"path": "new/dir/a.txt", "content": "x"})
    assert again.is_error and "overwrite" in text_of(again), text_of(again)
    replaced = await session.call_tool(
        "copilot_create_file", {"path": "new/dir/a.txt", "content": "second\n", "overwrite": True}
    )
    assert not replaced.is_error, text_of(replaced)
    assert (ws / "new" / "dir" / "a.txt").read_text() == "second\n"

    listed = await session.call_tool("copilot_list_files", {"recursive": True, "glob": "**/*.rs"})
    assert not listed.is_error, text_of(listed)
    text = text_of(listed)
    assert "src/main.rs" in text and "src/deep/lib.rs" in text and "README.md" not in text, text


async def check_secrets_redacted(session: ClientSession, ws: Path, outside: Path) -> None:
    read = await session.call_tool("copilot_read_file", {"path": ".env"})
    assert not read.is_error, text_of(read)
    assert "A1b2C3d4E5f6G7h8" not in text_of(read), text_of(read)
    assert "OPENAI_API_KEY=" in text_of(read), text_of(read)


async def check_limits(session: ClientSession, ws: Path, outside: Path) -> None:
    long_path = await session.call_tool("copilot_read_file", {"path": "a" * 1001})
    assert long_path.is_error and "1000" in text_of(long_path).replace(",", ""), text_of(long_path)
    big = await session.call_tool(
        "copilot_create_file", {"path": "big.txt", "content": "x" * 500_001}
    )
    assert big.is_error and "500" in text_of(big), text_of(big)
    assert not (ws / "big.txt").exists()
    wrong = await session.call_tool("copilot_read_file", {"path": 42})
    assert wrong.is_error and "path" in text_of(wrong), text_of(wrong)


async def check_attacks(session: ClientSession, ws: Path, outside: Path) -> None:
    attacks = [
        "../ws-evil/secret.txt",
        "src/../../ws-evil/secret.txt",
        "./../ws-evil/secret.txt",
        "src/../..",
        "..",
        str(outside / "secret.txt"),
        str(outside),
        str(ws) + "/../ws-evil/secret.txt",
        "/etc/passwd",
        "/proc/self/root/etc/passwd",
        "link-out",
        "dir-out/secret.txt",
        "dir-out",
        "src/main.rs\x00",
        "src/\x00../../ws-evil/secret.txt",
    ]
    for attack in attacks:
        calls = [
            ("copilot_read_file", {"path": attack}),
            ("copilot_create_file", {"path": f"{attack}/x", "content": "pwned"}),
            ("copilot_create_file", {"path": attack, "content": "pwned", "overwrite": True}),
            ("copilot_list_files", {"directory": attack, "recursive": True}),
        ]
        for tool, arguments in calls:
            result = await session.call_tool(tool, arguments)
            dumped = result.model_dump_json()
            assert OUTSIDE_SECRET not in dumped, (tool, attack, dumped)
            assert "root:x:0:0" not in dumped, (tool, attack, dumped)
            assert result.is_error, (tool, attack, dumped)
    assert (outside / "secret.txt").read_text() == OUTSIDE_SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"], list(outside.iterdir())
    # Still healthy after every refusal.
    read = await session.call_tool("copilot_read_file", {"path": "README.md"})
    assert not read.is_error, text_of(read)


async def main() -> int:
    binary = sys.argv[1]
    checks = [check_schemas, check_read_create_list, check_secrets_redacted, check_limits, check_attacks]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        ws, outside = layout(base)
        params = StdioServerParameters(
            command=binary,
            args=["--workspace", str(ws)],
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(base),
                "RUST_LOG": "warn",
                "COPILOT_AUDIT_LOG_DIR": str(base / "audit"),
            },
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for check in checks:
                    try:
                        with anyio.fail_after(60):
                            await check(session, ws, outside)
                        print(f"ok   {check.__name__}")
                        passed += 1
                    except Exception:  # noqa: BLE001 - report every failure, keep going
                        print(f"FAIL {check.__name__}\n{traceback.format_exc()}")
                        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
