"""`proctor explain A B`: why two runs' numbers differ, ranked by how much of the difference each cause explains."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..analysis.explain import explain_runs
from ..util.termsafe import escape_control
from . import options
from .history_cmds import run_dir_of

EXPLAIN_EXAMPLES = """Examples:

  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:first -o runs/mmlu-first
  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:random -o runs/mmlu-random
  proctor explain runs/mmlu-first runs/mmlu-random
"""


def explain(
    run_a: Annotated[str, typer.Argument(metavar="A", show_default=False, help="A run directory or recorded run id.")],
    run_b: Annotated[str, typer.Argument(metavar="B", show_default=False, help="The run to explain A against.")],
    store: options.Store = None,
    n_boot: options.NBoot = 2000,
    boot_seed: options.BootSeed = 0,
    as_json: options.Json = False,
) -> None:
    """What differs between two runs — settings, prompts, answer rule, data, backend — and the flipped samples by
    cause (error or truncation, the same output read differently, a different output), ranked by their share of
    the score difference, with the paired difference and its 95% interval."""
    got = explain_runs(run_dir_of(run_a, store), run_dir_of(run_b, store), n_boot=n_boot, seed=boot_seed)
    if as_json:
        typer.echo(json.dumps(got.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    typer.echo(f"A: {escape_control(got.a)}\nB: {escape_control(got.b)}")
    for line in got.lines():
        typer.echo(escape_control(line))


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(epilog=EXPLAIN_EXAMPLES)(explain)
