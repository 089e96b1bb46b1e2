"""End-to-end checks of `copilot-bridge`'s delegate-a-task tools through the official MCP
Python SDK (`mcp` 2.3), with the real Copilot CLI behind the bridge and a scripted model.

Usage: bridge_code_e2e.py BINARY WORKSPACE ENV_JSON

The Rust test that runs this script owns the scripted model server and has already scripted
the markers used here (PY-WRITE-1, PY-AGAIN-1, PY-HANG-1, PY-AFTER-1, PY-SLOWT-1, PY-PAR-A,
PY-PAR-B, PY-SER-A2, PY-RESTART-1). ENV_JSON is the
environment for the bridge (CLI path, BYOK settings, scratch HOME). Prints one line per check
and a closing "N passed, M failed" line; exits 1 if any check failed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import ClientSession

from bridge_checks import run_phases

BINARY = ""
WORKSPACE = Path()
ENV: dict[str, str] = {}
CODE_TOOLS = {"copilot_code_task", "copilot_code", "copilot_code_verbose"}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def check_schemas(session: ClientSession, state: dict) -> None:
    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert CODE_TOOLS <= tools.keys(), tools.keys()
    for name in CODE_TOOLS:
        schema = tools[name].input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert "$ref" not in str(schema), (name, schema)
        assert schema["properties"]["timeout"]["type"] == "integer", schema
        assert "workingDir" in schema["properties"] and "sessionId" in schema["properties"], schema
        assert tools[name].description and len(tools[name].description) > 40, name
    assert tools["copilot_code_task"].input_schema["required"] == ["prompt"]
    assert tools["copilot_code"].input_schema["required"] == ["task"]
    orchestrate = tools["copilot_orchestrate"].input_schema
    jsonschema.Draft202012Validator.check_schema(orchestrate)
    assert orchestrate["required"] == ["task"], orchestrate
    assert orchestrate["properties"]["plan"]["type"] == "object", orchestrate
    assert orchestrate["properties"]["maxConcurrency"]["type"] == "integer", orchestrate
    assert tools["copilot_orchestrate"].output_schema is None or "summary" in str(
        tools["copilot_orchestrate"].output_schema
    )


async def check_task_with_progress(session: ClientSession, state: dict) -> None:
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    result = await session.call_tool(
        "copilot_code_task", {"prompt": "please PY-WRITE-1"}, progress_callback=on_progress
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert (WORKSPACE / "py.txt").read_text() == "written by python\n"
    assert data["stopReason"] == "end_turn" and data["timedOut"] is False, data
    assert [c["status"] for c in data["toolCalls"]] == ["completed"], data
    assert any(m.startswith("tool started") for m in progress), progress
    assert text_of(result).rstrip().endswith(f"Session: {data['sessionId']}"), text_of(result)
    state["session"] = data["sessionId"]


async def check_verbose_continuation(session: ClientSession, state: dict) -> None:
    result = await session.call_tool(
        "copilot_code_verbose", {"task": "PY-AGAIN-1", "sessionId": state["session"]}
    )
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert text.startswith("## Execution log") and "## Result" in text, text
    assert result.structured_content["sessionId"] == state["session"], result.structured_content
    assert result.structured_content["text"] == "Same session, verbose.", result.structured_content


async def check_cancel_then_continue(session: ClientSession, state: dict) -> None:
    with anyio.move_on_after(4) as scope:
        await session.call_tool(
            "copilot_code_task", {"prompt": "PY-HANG-1", "sessionId": state["session"]}
        )
    assert scope.cancelled_caught, "the hanging task finished on its own"
    # The SDK sent notifications/cancelled; the session and its directory are free again.
    result = await session.call_tool(
        "copilot_code", {"task": "PY-AFTER-1", "sessionId": state["session"]}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content["text"] == "after the cancel", result.structured_content


async def check_timeout_partial(session: ClientSession, state: dict) -> None:
    result = await session.call_tool("copilot_code_task", {"prompt": "PY-SLOWT-1", "timeout": 3000})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["timedOut"] is True, data
    assert "partial words" in data["text"], data
    assert "Timed out" in text_of(result), text_of(result)


async def check_parallel_dirs(session: ClientSession, state: dict) -> None:
    for name in ("a", "b"):
        (WORKSPACE / name).mkdir(exist_ok=True)
    done: dict[str, Any] = {}

    async def run(key: str, arguments: dict) -> None:
        done[key] = await session.call_tool("copilot_code_task", arguments)

    hang_a = anyio.CancelScope()

    async def run_a() -> None:
        with hang_a:
            await run("a", {"prompt": "PY-PAR-A", "workingDir": "a"})

    async with anyio.create_task_group() as group:
        group.start_soon(run_a)
        await anyio.sleep(1)  # the first task in `a` holds the directory by now
        group.start_soon(run, "a2", {"prompt": "PY-SER-A2", "workingDir": "a"})
        # `b` runs while `a` is busy...
        await run("b", {"prompt": "PY-PAR-B", "workingDir": "b"})
        assert done["b"].structured_content["text"] == "b done", done["b"]
        # ...while the second task in `a` waits for the first.
        await anyio.sleep(1)
        assert "a2" not in done, "a second task in directory a ran beside the first"
        hang_a.cancel()
    assert "a" not in done, done
    assert done["a2"].structured_content["text"] == "a2 done", done["a2"]
    assert done["a2"].structured_content["workingDir"].endswith("/a"), done["a2"]


async def check_restart_continuation(session: ClientSession, state: dict) -> None:
    result = await session.call_tool(
        "copilot_code", {"task": "PY-RESTART-1", "sessionId": state["session"]}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content["sessionId"] == state["session"], result.structured_content
    assert result.structured_content["text"] == "after the restart", result.structured_content


async def check_errors(session: ClientSession, state: dict) -> None:
    missing = await session.call_tool("copilot_code_task", {"prompt": "x", "workingDir": "nope"})
    assert missing.is_error and "does not exist" in text_of(missing), text_of(missing)
    unknown = await session.call_tool("copilot_code", {"task": "x", "sessionId": "no-such-id"})
    assert unknown.is_error and "unknown sessionId" in text_of(unknown), text_of(unknown)
    empty = await session.call_tool("copilot_code", {"task": "  "})
    assert empty.is_error and "empty" in text_of(empty), text_of(empty)
    bad = await session.call_tool("copilot_code_task", {"prompt": "x", "timeout": "soon"})
    assert bad.is_error and "timeout" in text_of(bad), text_of(bad)


async def main() -> int:
    state: dict = {}
    # The second bridge process continues the first one's session (reloaded from the store).
    phases = [
        (
            None,
            [
                ("code tool schemas are plain and valid", check_schemas),
                ("a task creates a file and reports progress", check_task_with_progress),
                ("the verbose tool continues the session with a log", check_verbose_continuation),
                ("a cancelled task frees its session", check_cancel_then_continue),
                ("a timed-out task returns its partial output", check_timeout_partial),
                ("directories run in parallel, one directory serialized", check_parallel_dirs),
                ("bad directories, ids and arguments are clear errors", check_errors),
            ],
        ),
        (None, [("a session continues after the bridge restarts", check_restart_continuation)]),
    ]
    return await run_phases(BINARY, WORKSPACE, ENV, phases, args=(state,))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv[1])
    WORKSPACE = Path(sys.argv[2])
    ENV = json.loads(sys.argv[3])
    sys.exit(anyio.run(main))
