"""`proctor score`: probsem test suites scored by log-probability (seed 002)."""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError, ProctorError


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load(paths: list[Path]) -> tuple[list[tuple[Any, list[Any]]], list[Path]]:
    """(prompt, suites) groups and every input file read, from `DIR` or `PROMPT_FILE SUITE_FILE...`."""
    from ..formats.suites import read_prompt, read_prompt_dir, read_suite

    if len(paths) == 1 and paths[0].is_dir():
        groups = [(p, s) for p, s in read_prompt_dir(paths[0]) if s]
        if not groups:
            raise InputError.at(paths[0], "no suite files (<P>_<T>.json) next to any prompt (<P>.txt)")
        files = [paths[0] / f"{p.name}.txt" for p, _ in groups]
        files += [paths[0] / f"{p.name}_{s.name}.json" for p, ss in groups for s in ss]
        return groups, files
    if len(paths) < 2:
        raise InputError.at(paths[0], "give a directory, or a prompt file followed by at least one suite file")
    prompt = read_prompt(paths[0])
    problems = []
    suites = []
    for sp in paths[1:]:
        try:
            suites.append(read_suite(sp, prompt=prompt.name))
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        raise InputError(problems)
    names = [s.name for s in suites]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError.at(paths[1], f"suite names repeat: {dup} (names come from <P>_<T>.json)")
    return [(prompt, suites)], list(paths)


def score(
    paths: Annotated[list[Path], typer.Argument(help="DIR, or PROMPT_FILE SUITE_FILE...", show_default=False)],
    model: Annotated[str, typer.Option("--model", "-m", help="Model spec, e.g. hf:gpt2")],
    norm: Annotated[str, typer.Option(help="sum | token | char | byte | pmi")] = "sum",
    temp: Annotated[float, typer.Option("--temp", help="Temperature dividing the scores (> 0)")] = 1.0,
    join: Annotated[str, typer.Option(help="newline (probsem: query on its own line) | space")] = "newline",
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory")] = Path("outputs"),
    batch_size: Annotated[int, typer.Option(help="Sequences per forward pass (hf)")] = 32,
    device: Annotated[str, typer.Option(help="cpu | cuda | auto (hf)")] = "cpu",
    dtype: Annotated[str, typer.Option(help="auto | float32 | bfloat16 | float16 (hf)")] = "auto",
    trust_remote_code: Annotated[bool, typer.Option(help="Run code shipped with an hf model (off unless asked)")] = False,
    base_url: Annotated[list[str] | None, typer.Option(
        help="OpenAI-compatible server base URL (repeat to spread load over several)")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once (API backends)")] = 16,
    store: Annotated[Path | None, typer.Option(help="History store (default: proctor's user data directory)")] = None,
    no_history: Annotated[bool, typer.Option("--no-history", help="Do not record the run in the history store")] = False,
) -> None:
    """Score every context x query pair of probsem test suites.

    Writes CSV + JSONL per suite, summary.json, and a proctor run log (manifest.json, samples.jsonl,
    results.json) that `proctor report`, `runs`, `history` and `compare` read; records the run in the history store.
    """
    from rich.console import Console
    from rich.table import Table

    from ..models.registry import get_model
    from ..provenance import utc_now as _now
    from ..scoring.logprob import Norm
    from ..scoring.suites import (
        ScoreOptions,
        run_manifest,
        score_suites,
        write_outputs,
        write_run_log,
        write_summary,
    )
    from .options import model_options

    if norm not in {n.value for n in Norm}:
        raise ProctorError(f"--norm must be one of {', '.join(n.value for n in Norm)}, got {norm!r}")
    if join not in ("newline", "space"):
        raise ProctorError(f"--join must be newline or space, got {join!r}")
    if not temp > 0 or temp == float("inf"):
        raise ProctorError(f"--temp must be a positive number, got {temp}")
    groups, files = _load(paths)
    m = get_model(model, **model_options(
        model, base_urls=base_url, concurrency=concurrency, batch_size=batch_size, device=device, dtype=dtype,
        trust_remote_code=trust_remote_code,
    ))
    opts = ScoreOptions(norm=Norm(norm), temperature=temp, join=join)  # type: ignore[arg-type]
    started_at = _now()
    results = []
    for prompt, suites in groups:
        results.extend(asyncio.run(score_suites(m, prompt, suites, opts)))
    written: list[str] = []
    for r in results:
        written += [str(p) for p in write_outputs(out, r, opts, model).values()]
    written.append(str(write_summary(out, results)))
    manifest = run_manifest(
        results, opts, model=m, files=files, started_at=started_at, finished_at=_now(),
        command=["proctor", *sys.argv[1:]], kind="score",
        inputs={str(f): _sha256(f) for f in files}, outputs=written,
    )
    write_run_log(out, manifest, results, opts)
    recorded = None
    if not no_history:
        from ..store import Store, default_store_path

        with Store(store or default_store_path()) as st:
            recorded = st.record_run(out)
    table = Table(title=f"proctor score · {model} · norm={norm} · temp={temp}")
    for col in ("suite", "contexts", "scored", "ties", "accuracy", "95% CI", "Brier", "ECE", "log-loss"):
        table.add_column(col, justify="left" if col == "suite" else "right")
    for r in results:
        s = r.summary
        ci = "—" if s["accuracy"] is None else f"{s['ci_low']:.2f}–{s['ci_high']:.2f}"
        table.add_row(f"{r.prompt}_{r.suite}", str(s["n_contexts"]), str(s["n_scored"]), str(s["n_ties"]),
                      _fmt(s["accuracy"]), ci, _fmt(s["brier"]), _fmt(s["ece"]), _fmt(s["log_loss"]))
    console = Console()
    console.print(table)
    console.print(f"wrote {len(written)} files and a run log (manifest.json, samples.jsonl, results.json) to {out}")
    if recorded is not None:
        console.print(f"recorded run {recorded.run_id} in the history store")


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(name="score")(score)
