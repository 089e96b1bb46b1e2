"""End-to-end checks of `copilot-bridge`'s long-lived session tools through the official MCP
Python SDK (`mcp` 2.3), with the real Copilot CLI behind the bridge and a scripted model.

Usage: bridge_sessions_e2e.py BINARY WORKSPACE ENV_JSON

The Rust test that runs this script owns the scripted model server and has already scripted
the markers used here (PYS-WRITE, PYS-SLOW). ENV_JSON is the environment for the bridge (CLI
path, BYOK settings, scratch HOME). Prints one line per check and a closing
"N passed, M failed" line; exits 1 if any check failed.
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
SESSION_TOOLS = {
    "copilot_session_start": ["workingDirectory"],
    "copilot_session_query": ["prompt", "sessionId"],
    "copilot_session_live": ["sessionId"],
    "copilot_session_stop": ["sessionId"],
    "copilot_session_list": [],
}


def structured(result: Any) -> dict:
    assert not result.is_error, result
    assert result.structured_content is not None, result
    return result.structured_content


async def live_until_idle(session: ClientSession, session_id: str) -> list[dict]:
    events: list[dict] = []
    while not events or events[-1].get("callback") != "onIdle":
        result = await session.call_tool(
            "copilot_session_live", {"sessionId": session_id, "waitMs": 5000}
        )
        content = result.structured_content or {}
        if content.get("error") == "HttpRequestTimeout":
            continue
        events.extend(structured(result)["events"])
    return events


def callbacks(events: list[dict]) -> list[str]:
    names: list[str] = []
    for event in events:
        name = event.get("callback", "sessionError")
        if not names or names[-1] != name:
            names.append(name)
    return names


async def check_schemas(session: ClientSession, state: dict) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name, required in SESSION_TOOLS.items():
        assert name in tools, tools.keys()
        schema = tools[name].input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert sorted(schema.get("required", [])) == required, (name, schema)
        assert "_depth" in schema["properties"], (name, schema)
        assert tools[name].description and len(tools[name].description) > 40, name


async def check_a_turn(session: ClientSession, state: dict) -> None:
    started = structured(
        await session.call_tool("copilot_session_start", {"workingDirectory": str(WORKSPACE)})
    )
    session_id = started["sessionId"]
    state["id"] = session_id
    queried = structured(
        await session.call_tool(
            "copilot_session_query", {"sessionId": session_id, "prompt": "PYS-WRITE"}
        )
    )
    assert queried == {}, queried
    events = await live_until_idle(session, session_id)
    names = callbacks(events)
    assert names[0] == "onAgentStart" and names[-2:] == ["onAgentEnd", "onIdle"], names
    assert "onStartToolExecution" in names and "onEndToolExecution" in names, names
    assert (WORKSPACE / "py-session.txt").read_text() == "from the python sdk\n"
    listed = structured(await session.call_tool("copilot_session_list", {}))
    row = next(s for s in listed["sessions"] if s["sessionId"] == session_id)
    assert row["state"] == "idle" and row["queuedEvents"] == 0, row


async def check_stop_and_drain(session: ClientSession, state: dict) -> None:
    session_id = state["id"]
    await session.call_tool(
        "copilot_session_query", {"sessionId": session_id, "prompt": "PYS-SLOW"}
    )
    first = structured(
        await session.call_tool(
            "copilot_session_live", {"sessionId": session_id, "maxEvents": 1}
        )
    )
    assert len(first["events"]) == 1, first
    stopped = structured(await session.call_tool("copilot_session_stop", {"sessionId": session_id}))
    assert stopped == {"result": "Closed"}, stopped
    while True:
        result = await session.call_tool("copilot_session_live", {"sessionId": session_id})
        content = result.structured_content or {}
        if "events" not in content:
            break
    assert content.get("error") == "SessionClosed" and not result.is_error, content
    gone = await session.call_tool("copilot_session_live", {"sessionId": session_id})
    assert gone.is_error and (gone.structured_content or {}).get("error") == "SessionNotFound"


async def check_errors(session: ClientSession, state: dict) -> None:
    relative = await session.call_tool("copilot_session_start", {"workingDirectory": "rel"})
    assert relative.is_error, relative
    assert relative.structured_content["error"] == "WorkingDirectoryNotAbsolutePath"
    bad = await session.call_tool("copilot_session_live", {"sessionId": "x", "waitMs": "soon"})
    assert bad.is_error, bad
    too_long = await session.call_tool(
        "copilot_session_live", {"sessionId": "x", "waitMs": 60000}
    )
    assert too_long.is_error, too_long


async def main() -> int:
    state: dict = {}
    checks = [
        ("session tool schemas are plain and valid", check_schemas),
        ("a session turn streams ordered events and edits a file", check_a_turn),
        ("stop drains, then SessionClosed, then SessionNotFound", check_stop_and_drain),
        ("bad arguments are clear errors", check_errors),
    ]
    return await run_phases(BINARY, WORKSPACE, ENV, [(None, checks)], args=(state,))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv[1])
    WORKSPACE = Path(sys.argv[2])
    ENV = json.loads(sys.argv[3])
    sys.exit(anyio.run(main))
