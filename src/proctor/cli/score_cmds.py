"""`proctor score`: probsem test suites scored by log-probability (seed 002)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DEFAULT_MAX_ERROR_RATE, InputError, ProctorError
from . import options
from .options import with_model_options


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
    from ..scoring.suites import SUITE_CLUSTER, SuiteScorer
    from ..tasks import Task

    names = list(dict.fromkeys(p.name for p, _ in groups))
    items = [it for prompt, suites in groups for s in suites for it in suite_to_items(prompt, s)]
    source = {"source": "probsem", "files": [str(f) for f in files], "sha256": {str(f): file_sha256(f) for f in files}}
    return Task("+".join(names), items, ItemPromptBuilder(), source=source, scorer=SuiteScorer(options),
                cluster=SUITE_CLUSTER)


def _options(norm: str, temperature: float, join: str) -> Any:
    from ..scoring.logprob import Norm
    from ..scoring.suites import ScoreOptions

    if norm not in {n.value for n in Norm}:
        raise ProctorError(f"--norm must be one of {', '.join(n.value for n in Norm)}, got {norm!r}")
    if join not in ("newline", "space"):
        raise ProctorError(f"--join must be newline or space, got {join!r}")
    if not temperature > 0 or temperature == float("inf"):
        raise ProctorError(f"--softmax-temperature must be a positive number, got {temperature}")
    return ScoreOptions(norm=Norm(norm), temperature=temperature, join=join)  # type: ignore[arg-type]


SCORE_EXAMPLES = """Examples (on the bundled examples, offline):

  proctor tiny-model out/tiny
  proctor score examples/suites --model hf:out/tiny --norm token
  proctor score examples/suites/test.txt examples/suites/test_A.json --model hf:out/tiny -o runs/suite-a
"""


@with_model_options
def score(
    paths: Annotated[list[Path], typer.Argument(
        metavar="DIR | PROMPT_FILE SUITE_FILE...", show_default=False,
        help="A directory of <P>.txt prompts and <P>_<T>.json suites, or one prompt file and its suite files.")],
    model: options.ModelSpec,
    norm: Annotated[str, typer.Option(metavar="sum|token|char|byte|pmi", help=(
        "How a query's log-probability is normalised: sum, per token, per char, per byte, or PMI."))] = "sum",
    softmax_temperature: Annotated[float, typer.Option(metavar="NUMBER", help=(
        "Divides the scores before the softmax that gives each query's probability (> 0)."))] = 1.0,
    temp: Annotated[float | None, options.old_spelling("--temp", "NUMBER")] = None,
    join: Annotated[str, typer.Option(metavar="newline|space", help=(
        "How a context and its query are joined (newline: probsem's, the query on its own line)."))] = "newline",
    out: Annotated[Path | None, typer.Option("--out", "-o", metavar="DIR", help=(
        "Folder for probsem's result files (CSV + JSONL per suite, named with the model: several models"
        " accumulate); each run log goes in a run directory inside it."
        " Default: the run directory under --runs-root."))] = None,
    runs_root: options.RunsRoot = Path("runs"),
    store: options.Store = None,
    no_cache: options.NoCache = False,
    no_history: options.NoHistory = False,
    progress: options.ShowProgress = None,
    max_error_rate: options.MaxErrorRate = DEFAULT_MAX_ERROR_RATE,
    model_options: options.ModelOptions | None = None,
) -> None:
    """Score every context x query pair of probsem test suites by log-probability.

    The run goes through the same path as `proctor run --mode logprob` (request cache, kill -9 resume,
    history). Writes CSV + JSONL per suite, named with the model as probsem names them, into `--out` (several
    models accumulate there; default: the run directory), and the run log (manifest.json, samples.jsonl,
    results.json, summary.json) that `proctor report`, `runs`, `history` and `compare` read into a run
    directory under `--out` (default: under `--runs-root`).
    """
    from ..exporters.probsem import write_probsem_outputs  # the user asked for probsem's files
    from ..models.registry import get_model
    from ..runner import RunConfig, evaluate, finish_done_run, plan_run
    from ..scoring.suites import suite_results
    from .run_cmds import finish, say_resume

    temperature = options.prefer(softmax_temperature, temp, "--temp", "--softmax-temperature")
    opts = _options(norm, temperature, join)
    groups, files = _load(paths)
    task = suite_task(groups, files, opts)
    given = model_options or options.ModelOptions({})
    given.check_applicable([model])
    # -o is probsem's output folder: each model's CSVs accumulate there, each run log in a directory of its own
    config = RunConfig(mode="logprob", runs_root=out or runs_root, use_cache=not no_cache, store_path=store,
                       record_history=not no_history, progress=progress, command=["proctor", *sys.argv[1:]])
    state = plan_run(task, model, config)
    say_resume(state)
    if state.left == 0:  # nothing left to ask: the model is not loaded
        log = finish_done_run(state, config)
    else:
        log = evaluate(task, get_model(model, **given.for_spec(model)), config)
    results = suite_results(task.items, log.samples)
    written = write_probsem_outputs(out or log.path, log.path, model.replace("/", "-"), results, opts)
    _print_table(model, norm, temperature, results)
    typer.echo(f"wrote {len(written) - 1} result files to {out or log.path}; the run log (manifest.json,"
               f" samples.jsonl, results.json, summary.json) is in {log.path}")
    finish(log, max_error_rate)


def _print_table(model: str, norm: str, temp: float, results: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"proctor score · {model} · norm={norm} · softmax temperature={temp}")
    for col in ("suite", "contexts", "scored", "ties", "accuracy", "95% CI", "Brier", "ECE", "log-loss"):
        table.add_column(col, justify="left" if col == "suite" else "right")
    for r in results:
        s = r.summary
        ci = "—" if s.accuracy is None else f"[{s.ci_low or 0:.3f}, {s.ci_high or 0:.3f}]"
        table.add_row(f"{r.prompt}_{r.suite}", str(s.n_contexts), str(s.n_scored), str(s.n_ties),
                      _fmt(s.accuracy), ci, _fmt(s.brier), _fmt(s.ece), _fmt(s.log_loss))
    Console(width=None if sys.stdout.isatty() else 110).print(table)  # piped: not cut at 80 (as `run`)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(name="score", epilog=SCORE_EXAMPLES)(score)
