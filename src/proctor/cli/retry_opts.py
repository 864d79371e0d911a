"""`run --retry-truncated RUN --max-tokens N`: the option, the retry's spec from RUN's own (only where requests go may
be given besides), and the two accuracies said when it ends (`proctor.run.retry` does the rest)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.spec import RunSpec
from ..log.runlog import Outcome, RunLog
from ..util.errors import ProctorError
from ..util.termsafe import plain
from .fields import flag_for

RetryTruncated = Annotated[str | None, typer.Option(
    "--retry-truncated", metavar="RUN", show_default=False, help=(
        "Ask RUN's truncated samples again at the larger --max-tokens, in a new run that keeps the first attempts "
        "(RUN is not changed; default: none)."),
    rich_help_panel="Generation (--mode generate)")]


Budgets = Annotated[str | None, typer.Option(
    "--budgets", metavar="N,N,...", show_default=False, help=(
        "Budget ladder: ask the still truncated again at each next budget (default: none)."),
    rich_help_panel="Generation (--mode generate)")]


@dataclass(frozen=True)
class Again:
    """Asking a run's truncated samples again: once (`--retry-truncated RUN`), or up a ladder of budgets."""

    retry_truncated: RetryTruncated = None
    budgets: Budgets = None


def ladder_budgets(text: str, flags: Mapping[str, Any], datasets: list[str]) -> list[int]:
    """`--budgets N,N,...`: two or more increasing token budgets, for one generation run of one dataset."""
    try:
        budgets = [int(part) for part in text.split(",")]
    except ValueError:
        raise ProctorError(f"--budgets {plain(text)!r}: give increasing token budgets, e.g. 1024,4096,16384") from None
    if len(budgets) < 2 or budgets[0] < 1 or any(b <= a for a, b in pairwise(budgets)):
        raise ProctorError(f"--budgets {plain(text)!r}: give two or more increasing token budgets, e.g. 1024,4096,16384")
    clash = next((f for f, v in (("--max-tokens", flags.get("max_tokens")), ("--mode logprob",
                  flags.get("mode") == "logprob" or None), ("--stop-when-decided", flags.get("stop_when_decided")
                                                            or None)) if v is not None), None)
    if clash is not None:
        raise ProctorError(f"--budgets: not with {clash} (the ladder's first budget is the first run's --max-tokens; "
                           "each step asks again the generations still cut)")
    if len(datasets) != 1:
        raise ProctorError("--budgets: one DATASET at a time (each step retries the run before it)")
    return budgets


def retry_specs(run: str, datasets: list[str], model: str | None, flags: Mapping[str, Any], backend: dict[str, Any],
                store: Path | None, elsewhere: str | None) -> list[RunSpec]:
    """The retry's spec: RUN's own, at the larger budget. A DATASET, --model or a setting flag besides is refused
    (RUN's settings are the ones asked again), and so is `elsewhere` (the flag that would run it another way)."""
    from ..run.build import eval_options
    from ..run.retry import retry_spec

    if elsewhere is not None:
        raise ProctorError(f"--retry-truncated: not with {elsewhere} (it asks again within one whole run, here)")
    changed = [name for name in eval_options(**flags).changed() if name != "max_tokens"]
    if datasets or model is not None or changed:
        flags_named = [flag_for(k) for k in changed]
        named = [*(["DATASET"] if datasets else []), *(["--model"] if model is not None else []), *flags_named]
        raise ProctorError(f"--retry-truncated asks {run} again with its own settings: {', '.join(named)} cannot "
                           "be given with it (only --max-tokens, and where requests go: --base-url, --concurrency…)")
    from .history_cmds import run_dir_of

    return [retry_spec(run_dir_of(run, store, "--retry-truncated"), flags.get("max_tokens"), backend)]


def print_accuracies(log: RunLog) -> None:
    """For a retry run: the first attempts' accuracy beside the accuracy after asking again."""
    spec = log.manifest.spec
    results = log.results
    if spec is None or spec.retry_of is None or results is None:
        return
    from ..metrics.budget import asked_with

    first = results.metrics.get("first_attempt_accuracy")
    retried = still = 0  # counted in one pass: the samples may be read from disk, never held for this
    budget = spec.generation.max_tokens
    for s in log.iter_samples():
        if s.first_attempt is not None and asked_with(s, spec) == budget:  # asked again by this run
            retried += 1
            still += s.outcome is Outcome.TRUNCATED
    o = results.overall
    if first is None or first.value is None or o.accuracy is None:
        return
    typer.echo(plain(
        f"{log.manifest.dataset.name or 'run'}: first attempt (--max-tokens {spec.retry_of.first_budget}) accuracy "
        f"{first.value:.3f} [{first.ci_low or 0:.3f}, {first.ci_high or 0:.3f}]; {retried} truncated asked "
        f"again at --max-tokens {spec.generation.max_tokens} ({still} truncated again): accuracy {o.accuracy:.3f} "
        f"[{o.ci_low or 0:.3f}, {o.ci_high or 0:.3f}], the second attempts scored"))
    curve = results.budget_curve
    if curve is not None:
        steps = ", ".join(f"{st.max_tokens:,} → {st.block.accuracy:.3f}" if st.block.accuracy is not None else
                          f"{st.max_tokens:,} → –" for st in curve.steps)
        settled = (f"settles at {curve.settled_at:,}" if curve.settled_at is not None else "does not settle")
        cut = f"; {curve.still_truncated} still truncated" if curve.still_truncated else ""
        typer.echo(plain(f"accuracy by --max-tokens: {steps} ({settled}{cut})"))
