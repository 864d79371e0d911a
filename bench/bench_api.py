"""Benchmark the HTTP backend against proctor's local OpenAI-compatible server (a real process on 127.0.0.1).

1. Throughput: N requests at concurrency C against a server answering after a fixed latency L, for
   each HTTP client side by side in one run (repeats interleaved, so a change in machine load hits all
   alike): aiohttp (the package's), the hand-written HTTP/1.1 client it replaced and httpx (both as on
   main before issue 24, from bench/_old_http.py). Reports wall / ideal, where ideal = ceil(N / C) x L
   (goal <= 1.2), requests/s, and the client's CPU per request beside the server's CPU, so a
   CPU-starved machine is visible as such.
2. Faults: the same load with a fraction of requests failing (429 with Retry-After, 500, a hang past
   the client timeout, a malformed JSON body), per client: completed, errors, retries, lost (must be 0).

    python bench/bench_api.py [--requests 2000] [--concurrency 64] [--latency 0.05] [--repeats 3]
        [--clients aiohttp,hand-written,httpx] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from proctor.models import GenerateRequest, Message
from proctor.models.openai import OpenAIModel
from proctor.testing import serve

CLIENTS = ("aiohttp", "hand-written", "httpx")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _requests(n: int) -> list[GenerateRequest]:
    return [GenerateRequest((Message("user", f"Question {i}?\n(A) yes\n(B) no"),)) for i in range(n)]


async def _run(model: OpenAIModel, n: int) -> tuple[float, float, list[Any]]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = await model.generate(_requests(n))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    await model.aclose()
    return wall, cpu, out


def _model(url: str, concurrency: int, client: str, **settings: float) -> OpenAIModel:
    """An OpenAI-compatible model whose requests go through `client`."""
    model = OpenAIModel("bench", base_url=url, concurrency=concurrency, api_key="x", **settings)
    if client != "aiohttp":  # main's client: same retry policy, same headers, same in-flight limit
        from _old_http import HTTPBackend as OldBackend

        model.http = OldBackend(model._urls, model._request_headers, concurrency=concurrency,  # type: ignore[assignment]
                                policy=model.http.policy, transport="auto" if client == "hand-written" else "httpx")
    return model


def throughput(n: int, concurrency: int, latency: float, repeats: int, clients: list[str]) -> dict[str, Any]:
    ideal = math.ceil(n / concurrency) * latency
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
    with serve(latency=latency) as srv:
        for client in clients:  # warm-up: imports, the server's first requests
            asyncio.run(_run(_model(srv.base_url, concurrency, client), 200))
        for _ in range(repeats):
            for client in clients:
                srv.reset()
                s0 = _cpu_seconds(srv.proc.pid)
                wall, cpu, out = asyncio.run(_run(_model(srv.base_url, concurrency, client), n))
                stats = srv.stats()
                runs[client].append({
                    "wall_s": wall, "ratio": wall / ideal, "requests_per_s": n / wall, "client_cpu_s": cpu,
                    "client_cpu_ms_per_request": 1000 * cpu / n, "server_cpu_s": _cpu_seconds(srv.proc.pid) - s0,
                    "errors": sum(g.error is not None for g in out), "server_max_in_flight": stats["max_in_flight"],
                    "server_requests": stats["requests"]})
    summary = {c: {"median_ratio": statistics.median(r["ratio"] for r in rs),
                   "median_requests_per_s": statistics.median(r["requests_per_s"] for r in rs),
                   "median_client_cpu_ms_per_request": statistics.median(r["client_cpu_ms_per_request"] for r in rs)}
               for c, rs in runs.items()}
    return {"requests": n, "concurrency": concurrency, "latency_s": latency, "ideal_s": ideal, "runs": runs,
            "summary": summary, "load_avg_1m": os.getloadavg()[0], "cpus": os.cpu_count()}


def faults(n: int, concurrency: int, latency: float, rate: float, seed: int, client: str) -> dict[str, Any]:
    with serve(latency=latency, fault_rate=rate, seed=seed, retry_after=0.05, hang_s=60.0) as srv:
        model = _model(srv.base_url, concurrency, client, timeout=1.0, max_retries=5, backoff_base=0.05)
        wall, _, out = asyncio.run(_run(model, n))
        stats = srv.stats()
    completed = sum(g.error is None and g.text != "" for g in out)
    errors = sum(g.error is not None for g in out)
    return {"client": client, "requests": n, "fault_rate": rate, "seed": seed, "wall_s": wall, "completed": completed,
            "errors": errors, "lost": n - completed - errors, "retries": model.stats["retries"],
            "attempts": model.stats["attempts"], "faults_injected": stats["faults"], "timeout_s": 1.0,
            "max_retries": 5}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fault-rate", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clients", default=",".join(CLIENTS),
                    help="comma-separated, among aiohttp (proctor's), hand-written and httpx (main's, before #24)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    if unknown := [c for c in clients if c not in CLIENTS]:
        ap.error(f"unknown client(s) {unknown}: choose among {', '.join(CLIENTS)}")
    tp = throughput(args.requests, args.concurrency, args.latency, args.repeats, clients)
    fts = [faults(args.requests, args.concurrency, args.latency, args.fault_rate, args.seed, c) for c in clients]

    console = Console(width=140)
    t = Table(title=f"{args.requests} requests, concurrency {args.concurrency}, {args.latency * 1000:g} ms latency "
                    f"(ideal {tp['ideal_s']:.2f} s; {tp['cpus']} CPUs, load {tp['load_avg_1m']:.1f})")
    for col in ("client", "run", "wall s", "wall/ideal", "requests/s", "client CPU s", "client CPU ms/request",
                "server CPU s", "max in flight", "errors"):
        t.add_column(col, justify="right")
    for client, rs in tp["runs"].items():
        for i, r in enumerate(rs, 1):
            t.add_row(client, str(i), f"{r['wall_s']:.2f}", f"{r['ratio']:.2f}", f"{r['requests_per_s']:.0f}",
                      f"{r['client_cpu_s']:.2f}", f"{r['client_cpu_ms_per_request']:.3f}", f"{r['server_cpu_s']:.2f}",
                      str(r["server_max_in_flight"]), str(r["errors"]))
        m = tp["summary"][client]
        t.add_row(client, "median", "", f"{m['median_ratio']:.2f}", f"{m['median_requests_per_s']:.0f}", "",
                  f"{m['median_client_cpu_ms_per_request']:.3f}", "", "", "", end_section=True)
    console.print(t)
    f = Table(title=f"{args.requests} requests with {args.fault_rate:.0%} injected faults (seed {args.seed})")
    for col in ("client", "completed", "errors", "lost", "retries", "faults injected", "wall s"):
        f.add_column(col, justify="right")
    for ft in fts:
        f.add_row(ft["client"], str(ft["completed"]), str(ft["errors"]), str(ft["lost"]), str(ft["retries"]),
                  ", ".join(f"{k}: {v}" for k, v in sorted(ft["faults_injected"].items())), f"{ft['wall_s']:.2f}")
    console.print(f)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"throughput": tp, "faults": fts}, fh, indent=2)


if __name__ == "__main__":
    main()
