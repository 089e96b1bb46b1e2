"""Latency of `copilot-bridge` through the official MCP Python SDK (`mcp` 2.3).

Usage: bridge_bench.py BRIDGE SCRIPTED_AGENT [--reads N] [--tasks N]

1. `copilot_read_file` round trip: a 4 KiB file read N times through the SDK's stdio client;
   the time from `call_tool` to its parsed result, so the SDK's own work is included.
2. Bridge overhead on a delegated task: the bridge drives `scripted-acp-agent` (standing in for
   the Copilot CLI behind COPILOT_CLI_PATH), which stamps the wall-clock time just after it
   writes each turn's final answer. The overhead is from that stamp to the moment the SDK hands
   us the tool result: everything the bridge does after the agent's last word (collecting the
   turn, the session store, rendering, redaction, audit, the MCP answer) plus the SDK's parsing.

Prints a markdown table of percentiles for each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import stat
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50": statistics.median(ordered),
        "p90": at(0.90),
        "p99": at(0.99),
        "max": ordered[-1],
    }


def row(name: str, runs: int, samples_ms: list[float]) -> str:
    p = percentiles(samples_ms)
    return (
        f"| {name} | {runs} | {p['p50']:.3f} | {p['p90']:.3f} | {p['p99']:.3f} | {p['max']:.3f} |"
    )


def base_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RUST_LOG": "warn",
        "COPILOT_LOG_LEVEL": "warning",
        "COPILOT_AUDIT_LOG_DIR": str(home / "audit"),
    }


async def bench_reads(bridge: str, home: Path, runs: int) -> list[float]:
    work = home / "work"
    work.mkdir()
    (work / "notes.md").write_text("line of text for the benchmark\n" * 136)  # ~4 KiB
    params = StdioServerParameters(
        command=bridge, args=["--workspace", str(work)], env=base_env(home)
    )
    samples: list[float] = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(runs + 100):
                started = time.perf_counter()
                result = await session.call_tool("copilot_read_file", {"path": "notes.md"})
                elapsed = (time.perf_counter() - started) * 1000
                assert not result.is_error, result
                if i >= 100:  # the first calls warm caches and the allocator
                    samples.append(elapsed)
    return samples


async def bench_overhead(bridge: str, agent: str, home: Path, runs: int) -> list[float]:
    work = home / "tasks"
    work.mkdir()
    stamps = home / "stamps.txt"
    wrapper = home / "copilot"
    wrapper.write_text(f'#!/bin/sh\nexec "{agent}" --stamp "{stamps}"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = base_env(home) | {"COPILOT_CLI_PATH": str(wrapper)}
    params = StdioServerParameters(command=bridge, args=["--workspace", str(work)], env=env)
    samples: list[float] = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(runs + 10):
                result = await session.call_tool(
                    "copilot_code_task", {"prompt": f"benchmark task {i}"}
                )
                received_us = time.time_ns() // 1000
                assert not result.is_error, result
                assert result.structured_content["stopReason"] == "end_turn", result
                last = stamps.read_text().split()[-1]
                if i >= 10:
                    samples.append((received_us - int(last)) / 1000)
    return samples


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("bridge")
    parser.add_argument("agent")
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=200)
    args = parser.parse_args()
    args.bridge = os.path.abspath(args.bridge)
    args.agent = os.path.abspath(args.agent)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        reads = await bench_reads(args.bridge, home, args.reads)
        overhead = await bench_overhead(args.bridge, args.agent, home, args.tasks)
    print("| measurement (ms) | runs | p50 | p90 | p99 | max |")
    print("|---|---:|---:|---:|---:|---:|")
    print(row("`copilot_read_file` round trip, 4 KiB, Python SDK", args.reads, reads))
    print(row("bridge overhead: agent's last word → SDK has the result", args.tasks, overhead))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
