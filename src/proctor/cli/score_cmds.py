"""`proctor score`: probsem test suites scored by log-probability (seed 002)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError, ProctorError


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


def suite_task(groups: list[tuple[Any, list[Any]]], files: list[Path], options: Any) -> Any:
    """One Task over every context of every suite, carrying the suite scorer."""
    from ..benchmarks.hub import file_sha256
    from ..formats.convert import suite_to_items
    from ..prompts import ItemPromptBuilder
    from ..scoring.suites import SuiteScorer
    from ..tasks import Task

    names = list(dict.fromkeys(p.name for p, _ in groups))
    items = [it for prompt, suites in groups for s in suites for it in suite_to_items(prompt, s)]
    source = {"source": "probsem", "files": [str(f) for f in files], "sha256": {str(f): file_sha256(f) for f in files}}
    return Task("+".join(names), items, ItemPromptBuilder(), source=source, scorer=SuiteScorer(options))


def _options(norm: str, temp: float, join: str) -> Any:
    from ..scoring.logprob import Norm
    from ..scoring.suites import ScoreOptions

    if norm not in {n.value for n in Norm}:
        raise ProctorError(f"--norm must be one of {', '.join(n.value for n in Norm)}, got {norm!r}")
    if join not in ("newline", "space"):
        raise ProctorError(f"--join must be newline or space, got {join!r}")
    if not temp > 0 or temp == float("inf"):
        raise ProctorError(f"--temp must be a positive number, got {temp}")
    return ScoreOptions(norm=Norm(norm), temperature=temp, join=join)  # type: ignore[arg-type]


def score(
    paths: Annotated[list[Path], typer.Argument(help="DIR, or PROMPT_FILE SUITE_FILE...", show_default=False)],
    model: Annotated[str, typer.Option("--model", "-m", help="Model spec, e.g. hf:gpt2")],
    norm: Annotated[str, typer.Option(help="sum | token | char | byte | pmi")] = "sum",
    temp: Annotated[float, typer.Option("--temp", help="Temperature dividing the scores (> 0)")] = 1.0,
    join: Annotated[str, typer.Option(help="newline (probsem: query on its own line) | space")] = "newline",
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory (also the run directory)")] = Path("outputs"),
    batch_size: Annotated[int | None, typer.Option(help="Sequences per forward pass (hf; default 32)")] = None,
    device: Annotated[str | None, typer.Option(help="cpu | cuda | auto (hf; default cpu)")] = None,
    dtype: Annotated[str | None, typer.Option(help="auto | float32 | bfloat16 | float16 (hf; default auto)")] = None,
    trust_remote_code: Annotated[bool, typer.Option(help="Run code shipped with an hf model (off unless asked)")] = False,
    base_url: Annotated[list[str] | None, typer.Option(
        help="OpenAI-compatible server base URL (repeat to spread load over several)")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Requests in flight at once (API backends; default 32)")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the request cache.")] = False,
    store: Annotated[Path | None, typer.Option(help="Store for cache and history (default: proctor's user data directory)")] = None,
    no_history: Annotated[bool, typer.Option("--no-history", help="Do not record the run in the history store")] = False,
    max_error_rate: Annotated[float, typer.Option(help="Exit 1 when more than this share of contexts errored.")] = 0.1,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress")] = None,
) -> None:
    """Score every context x query pair of probsem test suites.

    The run goes through the same path as `proctor run --mode logprob` (request cache, kill -9 resume,
    history). Writes CSV + JSONL per suite and summary.json beside the run log (manifest.json,
    samples.jsonl, results.json) that `proctor report`, `runs`, `history` and `compare` read.
    """
    from ..models.registry import get_model
    from ..runner import RunConfig, evaluate
    from ..scoring.suites import suite_results, write_probsem_outputs
    from .options import check_applicable, model_options
    from .run_cmds import finish

    opts = _options(norm, temp, join)
    groups, files = _load(paths)
    task = suite_task(groups, files, opts)
    given: dict[str, Any] = {"base_urls": base_url, "concurrency": concurrency, "batch_size": batch_size,
                             "device": device, "dtype": dtype, "trust_remote_code": trust_remote_code}
    check_applicable([model], **given)
    m = get_model(model, **model_options(model, **given))
    config = RunConfig(mode="logprob", out_dir=out, use_cache=not no_cache, store_path=store,
                       record_history=not no_history, progress=progress, command=["proctor", *sys.argv[1:]])
    log = evaluate(task, m, config)
    results = suite_results(task.items, log.samples)
    written = write_probsem_outputs(out, m.name.replace("/", "-"), results, opts)
    _print_table(model, norm, temp, results)
    typer.echo(f"wrote {len(written)} files and a run log (manifest.json, samples.jsonl, results.json) to {out}")
    finish(log, max_error_rate)


def _print_table(model: str, norm: str, temp: float, results: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"proctor score · {model} · norm={norm} · temp={temp}")
    for col in ("suite", "contexts", "scored", "ties", "accuracy", "95% CI", "Brier", "ECE", "log-loss"):
        table.add_column(col, justify="left" if col == "suite" else "right")
    for r in results:
        s = r.summary
        ci = "—" if s["accuracy"] is None else f"{s['ci_low']:.2f}–{s['ci_high']:.2f}"
        table.add_row(f"{r.prompt}_{r.suite}", str(s["n_contexts"]), str(s["n_scored"]), str(s["n_ties"]),
                      _fmt(s["accuracy"]), ci, _fmt(s["brier"]), _fmt(s["ece"]), _fmt(s["log_loss"]))
    Console().print(table)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(name="score")(score)
