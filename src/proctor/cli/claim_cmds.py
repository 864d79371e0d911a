"""`proctor claim`: register, before the run, what it must show (`proctor.run.claim`); `run --claim` runs under it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..util.errors import ProctorError
from ..util.termsafe import escape_control, plain
from . import options
from .fields import with_flags
from .messages import note
from .options import with_model_options
from .run_options import with_records, with_run_options

if TYPE_CHECKING:
    from ..run.claim import Verdict

CLAIMS = "The claim"
CLAIM_EXAMPLES = """Examples (offline):

  proctor keygen me.pem
  proctor claim examples/items/multiple-choice.jsonl --model scripted:first --at-least 5 --key me.pem -o CLAIM.json
  proctor run examples/items/multiple-choice.jsonl --model scripted:first --claim CLAIM.json -o runs/claimed
  proctor verify runs/claimed --claim CLAIM.json --claim-key me.pem.pub
  proctor claim examples/items/multiple-choice.jsonl --model scripted:random --no-worse-than runs/claimed --allowed-drop 5 -o NEW.json

Exit status: 0 written, 2 bad input (the same options as `proctor run`). `proctor verify --claim` answers PASS (0),
FAIL (1), INCONCLUSIVE (3) or TAMPERED (4); see docs/claims.md.
"""


@dataclass(frozen=True)
class ClaimTerms:
    """The claim's own options: the comparison and its bound, the metric, α."""

    at_least: Annotated[float | None, typer.Option(
        "--at-least", metavar="PERCENT", show_default=False, rich_help_panel=CLAIMS,
        help="Claim the metric is at least PERCENT: PASS when its whole 95% interval is at or above it (default: none).")] = None
    no_worse_than: Annotated[Path | None, typer.Option(
        "--no-worse-than", metavar="RUN", show_default=False, rich_help_panel=CLAIMS,
        help="Claim the run is no worse than this finished run (the baseline, on the same data) by more than "
             "--allowed-drop points (default: none).")] = None
    allowed_drop: Annotated[float | None, typer.Option(
        "--allowed-drop", metavar="POINTS", show_default=False, rich_help_panel=CLAIMS,
        help="With --baseline: the largest drop in accuracy allowed, in points (PASS when the paired interval of "
             "run − baseline is at or above −POINTS; default: none).")] = None
    metric: Annotated[str, typer.Option(
        "--metric", metavar="NAME", rich_help_panel=CLAIMS,
        help="The metric claimed: accuracy, acc_norm or a registered metric of results.json.")] = "accuracy"
    alpha: Annotated[float, typer.Option(
        "--alpha", metavar="A", rich_help_panel=CLAIMS,
        help="1 − the interval's level (a threshold claim: 0.05, results.json's 95% interval).")] = 0.05


ClaimOut = Annotated[Path, typer.Option(
    "--out", "-o", metavar="CLAIM.json", help="Where the claim is written (never over an existing file).")]
ClaimKey = Annotated[Path | None, typer.Option(
    "--key", metavar="PEM", show_default=False,
    help="Sign the claim with this Ed25519 private key (`proctor keygen`; default: unsigned).")]
Datasets = Annotated[list[str], typer.Argument(
    metavar="DATASET", show_default=False, help="The built-in benchmark or file the run will evaluate.")]
Model = Annotated[str, typer.Option(
    "--model", "-m", metavar="SPEC", show_default=False, help="The model the run will ask (as `proctor run --model`).")]


def _terms(t: ClaimTerms) -> Any:
    from ..run.claim import Terms  # the library loads when the command runs (start-up time)

    if (t.at_least is None) == (t.no_worse_than is None):
        raise ProctorError("give the claim: --at-least PERCENT, or --no-worse-than RUN --allowed-drop POINTS")
    if t.at_least is not None:
        if t.allowed_drop is not None:
            raise ProctorError("--allowed-drop goes with --no-worse-than, not --at-least")
        return Terms("at_least", t.at_least / 100, t.metric, t.alpha)
    if t.allowed_drop is None:
        raise ProctorError("--no-worse-than: give --allowed-drop POINTS, the largest drop allowed")
    return Terms("no_worse_than", t.allowed_drop / 100, t.metric, t.alpha, t.no_worse_than)


@with_model_options
@with_records(terms=ClaimTerms)
@with_run_options()
def claim(datasets: Datasets, model: Model, flags: Mapping[str, Any] | None = None, terms: ClaimTerms | None = None,
          out: ClaimOut = Path("CLAIM.json"), key: ClaimKey = None,
          model_options: options.ModelOptions | None = None) -> None:
    """Register, before the run, what it must show: the data's hash, the resolved spec's run id, the metric and
    its threshold (or a baseline and the drop allowed) and α, signed; `proctor run --claim` runs under it and
    `proctor verify --claim` answers PASS, FAIL, INCONCLUSIVE or TAMPERED."""
    from ..run.claim import make_claim, write_claim
    from ..run.resolve import load_spec_task, resolve
    from .run_cmds import _specs

    wanted = _terms(terms or ClaimTerms())
    if len(datasets) != 1:
        raise ProctorError("a claim is about one run: give one DATASET")
    try:
        (spec,) = _specs(datasets, model, flags or {}, model_options or options.ModelOptions({}))
    except ProctorError as e:
        raise with_flags(e) from None
    task = load_spec_task(spec)
    body = make_claim(resolve(spec, task), task, wanted)
    path = write_claim(out, body, key)
    signed = "signed" if key is not None else "unsigned (give --key to sign it)"
    typer.echo(plain(f"claim: {body.text()} of run {body.run_id} ({body.model} on {body.dataset}, data "
                     f"{body.content_hash[:23]}…), written {body.written_at}, {signed}"))
    typer.echo(plain(f"wrote {path}: run it with `proctor run … --claim {path}`"))


# ---------------------------------------------------------------- verify --claim


def verify_against(run: Path, claim_path: Path, keys: tuple[Path | None, Path | None], baseline: Path | None,
                   as_json: bool) -> None:
    """`proctor verify RUN --claim CLAIM.json`: the answer and its reason; the exit status by the answer."""
    from ..run.claim import Check, verify_claim

    got = verify_claim(run, claim_path, Check(public_key=keys[0], claim_key=keys[1], baseline=baseline))
    if as_json:
        typer.echo(json.dumps(got.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        _print_verdict(got)
    raise typer.Exit(got.exit_code)


def _print_verdict(got: Verdict) -> None:
    for line in got.notes:
        note(escape_control(line))
    typer.echo(f"claim: {escape_control(got.claim.text())} of run {got.claim.run_id}"
               + (f", signed by {got.signer}" if got.signer else ""))
    typer.echo(f"{got.answer.value}: {escape_control(got.reason)}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("claim", epilog=CLAIM_EXAMPLES)(claim)
