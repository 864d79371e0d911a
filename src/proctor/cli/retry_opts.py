"""`run --retry-truncated RUN --max-tokens N`: the option, the retry's spec from RUN's own (only where requests go may
be given besides), and the two accuracies said when it ends (`proctor.run.retry` does the rest)."""

from __future__ import annotations

from collections.abc import Mapping
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
        "Ask RUN's truncated samples again with the larger --max-tokens, as a run of its own that keeps the "
        "first attempts in its log (RUN, a run directory or recorded run id, is not changed; default: none)."),
    rich_help_panel="Generation (--mode generate)")]


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
    first = results.metrics.get("first_attempt_accuracy")
    retried = still = 0  # counted in one pass: the samples may be read from disk, never held for this
    for s in log.iter_samples():
        if s.first_attempt is not None:
            retried += 1
            still += s.outcome is Outcome.TRUNCATED
    o = results.overall
    if first is None or first.value is None or o.accuracy is None:
        return
    typer.echo(plain(
        f"{log.manifest.dataset.name or 'run'}: first attempt (--max-tokens {spec.retry_of.max_tokens}) accuracy "
        f"{first.value:.3f} [{first.ci_low or 0:.3f}, {first.ci_high or 0:.3f}]; {retried} truncated asked "
        f"again at --max-tokens {spec.generation.max_tokens} ({still} truncated again): accuracy {o.accuracy:.3f} "
        f"[{o.ci_low or 0:.3f}, {o.ci_high or 0:.3f}], the second attempts scored"))
