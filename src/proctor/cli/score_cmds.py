"""`proctor score`: probsem test suites scored by log-probability (seed 002)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..util.errors import DEFAULT_MAX_ERROR_RATE, ProctorError
from ..util.termsafe import plain
from . import options
from .fields import with_flags
from .messages import note
from .options import with_model_options
from .outcome import finish
from .run_options import with_records
from .tables import print_table, whole_table

if TYPE_CHECKING:
    from ..metrics.suites import SuiteResult

SCORE_EXAMPLES = """Examples (on the bundled examples, offline):

  proctor tiny-model out/tiny
  proctor score examples/suites --model hf:out/tiny --norm token
  proctor score examples/suites/test.txt examples/suites/test_A.json --model hf:out/tiny -o runs/suite-a
"""

SCORING = "Scoring"


@dataclass(frozen=True)
class SuiteScoring:
    """How a query is scored: its log-probability's normalisation, the softmax temperature, the join."""

    norm: Annotated[str, typer.Option(metavar="NORM", help=(
        "How a query's log-probability is normalised: sum, token (per token), char (per char), byte (per byte) "
        "or pmi."),
        rich_help_panel=SCORING)] = "sum"
    softmax_temperature: Annotated[float, typer.Option(metavar="NUMBER", help=(
        "Divides the scores before the softmax that gives each query's probability (> 0)."),
        rich_help_panel=SCORING)] = 1.0
    temp: Annotated[float | None, options.old_spelling("--temp", "NUMBER")] = None
    join: Annotated[str, typer.Option(metavar="newline|space", help=(
        "How a context and its query are joined (newline: probsem's, the query on its own line)."),
        rich_help_panel=SCORING)] = "newline"

    def temperature(self) -> float:
        """--softmax-temperature, or its old spelling --temp (warned)."""
        return float(options.prefer(self.softmax_temperature, self.temp, "--temp", "--softmax-temperature"))


@dataclass(frozen=True)
class ScoreOutput:
    """Where `score` writes (probsem's files, the run directory, the store), what it reads again and prints, and
    the exit rule."""

    out: Annotated[Path | None, typer.Option("--out", "-o", metavar="DIR", help=(
        "Folder for probsem's result files (CSV + JSONL per suite, named with the model: several models"
        " accumulate); each run log goes in a run directory inside it."
        " Default: the run directory under --runs-root."), rich_help_panel=options.OUTPUT)] = None
    runs_root: options.RunsRoot = Path("runs")
    store: options.Store = None
    no_cache: options.NoCache = False
    no_history: options.NoHistory = False
    progress: options.ShowProgress = None
    max_error_rate: options.MaxErrorRate = DEFAULT_MAX_ERROR_RATE


@with_model_options
@options.panels(runs_root=options.OUTPUT, store=options.OUTPUT, no_cache=options.OUTPUT, no_history=options.OUTPUT,
                progress=options.SWITCHES, max_error_rate=options.OUTPUT)
@with_records(scoring=SuiteScoring, output=ScoreOutput)
def score(
    paths: Annotated[list[Path], typer.Argument(
        metavar="DIR | PROMPT_FILE SUITE_FILE...", show_default=False,
        help="A directory of <P>.txt prompts and <P>_<T>.json suites, or one prompt file and its suite files.")],
    model: options.ModelSpec,
    scoring: SuiteScoring = SuiteScoring(),
    output: ScoreOutput = ScoreOutput(),
    model_options: options.ModelOptions | None = None,
) -> None:
    """Score every context x query pair of probsem test suites by log-probability.

    The run goes through the same path as `proctor run --mode logprob` (request cache, kill -9 resume,
    history). Writes CSV + JSONL per suite, named with the model as probsem names them, into `--out` (several
    models accumulate there; default: the run directory), and the run log (manifest.json, samples.jsonl,
    results.json, summary.json) that `proctor report`, `runs`, `history` and `compare` read into a run
    directory under `--out` (default: under `--runs-root`).
    """
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from ..interop.probsem_export import ProbsemFiles
    from ..metrics.suites import suite_results
    from ..run import pipeline
    from ..run.build import suite_spec
    from ..run.pipeline import Events, RunOptions

    temperature, norm, out = scoring.temperature(), scoring.norm, output.out
    given = model_options or options.ModelOptions({})
    try:
        spec = suite_spec(paths, model, norm=norm, softmax_temperature=temperature, join=scoring.join,
                          model_options=given.for_spec(model))
    except ProctorError as e:
        raise with_flags(e) from None
    given.check_applicable([model])
    # -o is probsem's output folder: each model's CSVs accumulate there, each run log in a directory of its own
    run_options = RunOptions(runs_root=out or output.runs_root, use_cache=not output.no_cache, store=output.store,
                             record_history=not output.no_history, progress=output.progress,
                             command=["proctor", *sys.argv[1:]], outputs=(ProbsemFiles(out),))
    written: list[Path] = []
    events = Events(resuming=lambda line: note(plain(line)), wrote=lambda output, paths: written.extend(paths))
    planned = pipeline.plan([spec], run_options)
    (log,) = pipeline.execute(planned, events, outputs=run_options.outputs)
    _print_table(model, norm, temperature, suite_results(planned[0].task.items, log.samples))
    typer.echo(f"wrote {len(written) - 1} result files to {out or log.path}; the run log (manifest.json,"
               f" samples.jsonl, results.json, summary.json) is in {log.path}")
    finish(log, output.max_error_rate)


def _print_table(model: str, norm: str, temp: float, results: Sequence[SuiteResult]) -> None:
    table = whole_table(f"proctor score · {model} · norm={norm} · softmax temperature={temp}")
    for col in ("suite", "contexts", "scored", "ties", "accuracy", "95% CI", "Brier", "ECE", "log-loss"):
        table.add_column(col, justify="left" if col == "suite" else "right")
    for r in results:
        b, cal = r.summary.block, r.summary.calibration
        ci = "—" if b.accuracy is None else f"[{b.ci_low or 0:.3f}, {b.ci_high or 0:.3f}]"
        table.add_row(f"{r.prompt}_{r.suite}", str(b.n), str(b.n_scored), str(r.summary.n_ties), _fmt(b.accuracy), ci,
                      *(_fmt(getattr(cal, k)) if cal else "—" for k in ("brier", "ece", "log_loss")))
    print_table(table, [str(c.header) for c in table.columns])


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(name="score", epilog=SCORE_EXAMPLES)(score)
