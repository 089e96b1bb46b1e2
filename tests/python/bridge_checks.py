"""What the bridge's Python SDK scripts share: running named checks against the bridge binary
through the official MCP Python SDK, one bridge process per phase, printing `ok`/`FAIL` per
check and a closing "N passed, M failed" line."""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

Check = tuple[str, Callable[..., Awaitable[None]]]
# An elicitation callback for the phase's client (None: the client declares no elicitation),
# and its checks, run in order against one bridge process.
Phase = tuple[Any, Sequence[Check]]


async def run_phases(
    binary: str,
    workspace: Path,
    env: dict[str, str],
    phases: Sequence[Phase],
    *,
    args: tuple = (),
    seconds: float = 90,
) -> int:
    """Runs every phase; each check is awaited as `check(session, *args)` within `seconds`.
    Returns the exit code: 1 if any check failed."""
    passed = failed = 0
    params = StdioServerParameters(
        command=binary, args=["--workspace", str(workspace)], env=env, cwd=env["HOME"]
    )
    with open(Path(env["HOME"]) / "bridge-stderr.log", "a") as errlog:
        for callback, checks in phases:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, elicitation_callback=callback) as session:
                    init = await session.initialize()
                    assert init.server_info.name == "copilot-bridge", init.server_info
                    for name, check in checks:
                        try:
                            with anyio.fail_after(seconds):
                                await check(session, *args)
                        except Exception:  # noqa: BLE001 - report every failing check
                            failed += 1
                            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
                        else:
                            passed += 1
                            print(f"ok   {name}", flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0
