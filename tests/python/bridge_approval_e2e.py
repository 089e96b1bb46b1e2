"""Policy `ask` reaching a person through MCP elicitation (protocol 2025-xx, `elicitation/create`)
with the official MCP Python SDK (`mcp` 2.3) as the client, the real Copilot CLI behind the
bridge and a scripted model that asks to run shell commands the policy marks `ask`.

Usage: bridge_approval_e2e.py BINARY WORKSPACE ENV_JSON SECRET

The Rust test that runs this script scripted ASK-YES, ASK-NO, ASK-DECLINE, ASK-CANCEL,
ASK-SESSION and ASK-HEADLESS (each a `bash` call that creates a file named after it, then a reply), and set the
policy's ask_tools to ["bash"]. SECRET appears in the ASK-YES command and must appear in no
question. Prints one line per check and "N passed, M failed"; exits 1 if any check failed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession

from bridge_checks import run_phases

BINARY = ""
WORKSPACE = Path()
ENV: dict[str, str] = {}
SECRET = ""
STATE: dict[str, Any] = {"answer": "yes", "questions": []}


async def answer(context: Any, params: Any) -> types.ElicitResult:
    STATE["questions"].append(params.message)
    schema = params.requested_schema
    assert schema["properties"]["approve"]["type"] == "boolean", schema
    mode = STATE["answer"]
    if mode == "yes":
        return types.ElicitResult(action="accept", content={"approve": True})
    if mode == "no":
        return types.ElicitResult(action="accept", content={"approve": False})
    return types.ElicitResult(action=mode)


async def delegate(session: ClientSession, marker: str) -> dict:
    result = await session.call_tool("copilot_code_task", {"prompt": f"please {marker}"})
    assert not result.is_error, result
    return result.structured_content


async def check_yes(session: ClientSession) -> None:
    STATE["answer"] = "yes"
    result = await delegate(session, "ASK-YES")
    assert (WORKSPACE / "ask-yes.txt").exists(), result
    assert result["denials"] == [], result
    question = STATE["questions"][-1]
    assert "touch" in question and "bash" in question, question
    for asked in STATE["questions"]:
        assert SECRET not in asked, asked


async def check_refusals(session: ClientSession) -> None:
    for mode, marker, said in [
        ("no", "ASK-NO", "said no"),
        ("decline", "ASK-DECLINE", "declined"),
        ("cancel", "ASK-CANCEL", "cancelled"),
    ]:
        STATE["answer"] = mode
        asked_before = len(STATE["questions"])
        result = await delegate(session, marker)
        assert len(STATE["questions"]) == asked_before + 1, (mode, STATE["questions"])
        assert not (WORKSPACE / f"{marker.lower()}.txt").exists(), (mode, result)
        reasons = " ".join(d["reason"] for d in result["denials"])
        assert said in reasons, (mode, result)


async def check_session_shows_the_wait(session: ClientSession) -> None:
    STATE["answer"] = "yes"
    started = await session.call_tool("copilot_session_start", {"workingDirectory": str(WORKSPACE)})
    session_id = started.structured_content["sessionId"]
    await session.call_tool(
        "copilot_session_query", {"sessionId": session_id, "prompt": "please ASK-SESSION"}
    )
    events: list[dict] = []
    while not events or events[-1].get("callback") != "onIdle":
        result = await session.call_tool(
            "copilot_session_live", {"sessionId": session_id, "waitMs": 5000}
        )
        events.extend((result.structured_content or {}).get("events", []))
    deltas = [e.get("delta", "") for e in events if e.get("callback") == "onToolExecution"]
    waiting = [i for i, d in enumerate(deltas) if d.startswith("waiting for a person's approval")]
    allowed = [i for i, d in enumerate(deltas) if d.startswith("permission allowed")]
    assert waiting and allowed and waiting[0] < allowed[0], (deltas, events)
    assert (WORKSPACE / "ask-session.txt").exists(), events
    await session.call_tool("copilot_session_stop", {"sessionId": session_id})


async def check_own_tool(session: ClientSession) -> None:
    STATE["answer"] = "yes"
    made = await session.call_tool(
        "copilot_create_file", {"path": "confirmed.txt", "content": "yes\n"}
    )
    assert not made.is_error and (WORKSPACE / "confirmed.txt").exists(), made
    assert "copilot_create_file" in STATE["questions"][-1], STATE["questions"][-1]
    STATE["answer"] = "no"
    refused = await session.call_tool(
        "copilot_create_file", {"path": "refused.txt", "content": "no\n"}
    )
    text = " ".join(b.text for b in refused.content if getattr(b, "type", "") == "text")
    assert refused.is_error and "said no" in text, text
    assert not (WORKSPACE / "refused.txt").exists()


async def check_client_without_elicitation(session: ClientSession) -> None:
    refused = await session.call_tool(
        "copilot_create_file", {"path": "headless.txt", "content": "x\n"}
    )
    text = " ".join(b.text for b in refused.content if getattr(b, "type", "") == "text")
    assert refused.is_error and "enable elicitation" in text, text
    assert not (WORKSPACE / "headless.txt").exists()
    result = await delegate(session, "ASK-HEADLESS")
    assert not (WORKSPACE / "ask-headless.txt").exists(), result
    reasons = " ".join(d["reason"] for d in result["denials"])
    assert "enable elicitation" in reasons and "ask_tools" in reasons, result


async def main() -> int:
    phases = [
        (
            answer,
            [
                ("an accepted question runs the command, and no secret is shown", check_yes),
                ("no, decline and cancel each refuse, and the result says so", check_refusals),
                ("a session's live events show the wait for the answer", check_session_shows_the_wait),
                ("the bridge's own tool marked ask is asked for too", check_own_tool),
            ],
        ),
        (None, [("a client without elicitation is refused with the fix", check_client_without_elicitation)]),
    ]
    return await run_phases(BINARY, WORKSPACE, ENV, phases, seconds=120)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv[1])
    WORKSPACE = Path(sys.argv[2])
    ENV = json.loads(sys.argv[3])
    SECRET = sys.argv[4]
    sys.exit(anyio.run(main))
