"""`run --retry-truncated RUN --max-tokens N`: ask a run's truncated samples again with a larger budget.

The retry is a run of its own (`RunSpec.retry_of`: RUN's id and budget are in its id), so RUN is never changed (its
checksums and signature still hold). Its directory starts as a copy of RUN's samples: the first attempts, in the
log. The samples RUN left truncated are then asked again at N (an errored one is asked again too, as any resume
asks errors); each second attempt is appended after its first and carries the first's outcome, score, output tokens
and budget (`Sample.first_attempt`). The later record of a sample id is the one scored (as for every run), so which
attempt counts is explicit: the second, wherever it exists. results.json holds both numbers: `overall` (after the
retry) and `metrics.first_attempt_accuracy` (`proctor.metrics.first_attempt`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from ..core.spec import OPERATIONAL_OPTIONS, OptionValue, RetryOf, RunSpec
from ..data.tasks import Task
from ..log.runlog import (
    MANIFEST,
    RESULTS,
    SAMPLES,
    FirstAttempt,
    Outcome,
    Sample,
    append_samples,
    iter_run_samples,
    read_manifest,
    sample_index,
)
from ..metrics.budget import asked_with
from ..util.errors import InputError, ProctorError
from .verify import unchanged


def retry_spec(run: str | Path, max_tokens: int | None, backend: Mapping[str, OptionValue] | None = None) -> RunSpec:
    """The spec of asking `run`'s truncated samples again at `max_tokens`: its own resolved spec with the larger
    budget and `retry_of`; `backend`: how requests travel now (base URL, concurrency…), nothing that changes answers."""
    path = Path(run)
    if not (path / MANIFEST).is_file():
        raise InputError.at(str(run), "--retry-truncated: not a run directory (no manifest.json)")
    manifest = read_manifest(path)
    spec = manifest.spec
    if spec is None:
        raise InputError.at(str(run), "--retry-truncated: an imported run (or one written before RunSpec): proctor "
                                      "does not know how to ask its items again")
    if (spec.scorer.mode or "generate") != "generate" or spec.shard is not None:
        raise InputError.at(str(run), "--retry-truncated: only a whole generation run (a shard: merge it first)")
    if spec.stop_when is not None:
        raise InputError.at(str(run), "--retry-truncated: a run --stop-when-decided asked only some items; asking "
                                      "the rest is the same command without --stop-when-decided")
    if not (path / RESULTS).is_file():
        raise InputError.at(str(run), "--retry-truncated: the run has not finished (no results.json): finish it "
                                      "first with the same command, then retry its truncated samples")
    problem = unchanged(path)
    if problem is not None:
        raise InputError.at(str(run), f"--retry-truncated: the run does not verify ({problem}): a retry copies "
                                      "its first attempts, so they must be the run's own")
    first = spec.generation.max_tokens
    if max_tokens is None or (first is not None and max_tokens <= first):
        raise ProctorError(f"max_tokens: --retry-truncated asks again with a larger budget: give --max-tokens N above "
                           f"{run}'s {first}")
    truncated = sum(s.outcome is Outcome.TRUNCATED for s in iter_run_samples(path))
    if not truncated:
        raise InputError.at(str(run), "--retry-truncated: no sample was truncated; nothing to ask again")
    changing = sorted(k for k in (backend or {}) if k not in OPERATIONAL_OPTIONS)
    if changing:
        raise ProctorError(f"--retry-truncated asks {run}'s model as it was: {', '.join(changing)} would change its "
                           "answers (only where requests go may change: --base-url, --concurrency…)")
    model = spec.model.model_copy(update={"options": {**spec.model.options, **(backend or {})}})
    earlier = tuple(b for b in spec.retry_of.ladder if b is not None) if spec.retry_of is not None else ()
    return spec.model_copy(update={
        "model": model, "generation": spec.generation.model_copy(update={"max_tokens": max_tokens}),
        "retry_of": RetryOf(run=str(path), run_id=manifest.run_id, max_tokens=first, budgets=earlier)})


def check_retry(task: Task, spec: RunSpec) -> None:
    """Refuse a retry whose data changed since its first run (its samples would not be this data's), or that is
    sharded or stops when decided (it copies the whole first run and asks again within it)."""
    if spec.retry_of is not None and (spec.shard is not None or spec.stop_when is not None):
        raise ProctorError("--retry-truncated: not with --shard, --shards or --stop-when-decided (it asks again "
                           "within one whole run)")
    if spec.retry_of is not None and spec.dataset.content_hash not in (None, task.content_hash):
        raise ProctorError(f"{task.name}: the data changed since {spec.retry_of.run} ran (content hash "
                           f"{spec.dataset.content_hash}, now {task.content_hash}): nothing to retry against")


def pending(sample: Sample, spec: RunSpec) -> bool:
    """A record a retry run still has to ask again: truncated at a budget below the run's (one it copied from the
    run it retries, not yet asked again here)."""
    if spec.retry_of is None or sample.outcome is not Outcome.TRUNCATED:
        return False
    return asked_with(sample, spec) != spec.generation.max_tokens


def samples_dir(run_dir: Path, spec: RunSpec) -> Path:
    """Where a run's samples are read from before it starts: its directory, or, for a retry not yet begun, the
    first run's (which it starts as a copy of)."""
    if spec.retry_of is not None and not (run_dir / SAMPLES).exists():
        return Path(spec.retry_of.run)
    return run_dir


@dataclass
class Resumed:
    """What a run resumed in its directory needs of the samples already there, read one at a time: the ids
    finished (not asked again), what they cost, the first attempts a retry still asks again (whole: their second
    attempts carry them) and, for `--stop-when-decided` alone (its looks read their scores), the finished samples
    themselves. A resumed run holds ids, not its samples (#40)."""

    ids: set[str] = field(default_factory=set)
    spent: Decimal = Decimal(0)
    firsts: dict[str, Sample] = field(default_factory=dict)
    samples: dict[str, Sample] = field(default_factory=dict)
    errored: list[str] = field(default_factory=list)  # --stop-when-decided: the errored ids, asked again first


def resumed(run_dir: Path, spec: RunSpec) -> Resumed:
    """The finished samples of `run_dir` (errors are asked again). A retry first copies in its first run's samples
    the directory lacks (the first attempts, once); their truncated ones not yet asked again are its `firsts`."""
    if spec.retry_of is not None:
        _copy_first_run(run_dir, Path(spec.retry_of.run))
    out = Resumed()
    for s in iter_run_samples(run_dir):
        if s.outcome is Outcome.ERROR:
            if spec.stop_when is not None:
                out.errored.append(s.sample_id)
            if s.first_attempt is not None:  # a second attempt that errored: asked again, its first kept
                out.firsts[s.sample_id] = s
            continue
        if pending(s, spec):
            out.firsts[s.sample_id] = s
            continue
        out.ids.add(s.sample_id)
        out.spent += sum((Decimal(c) for c in (s.cost, s.judge_cost) if c is not None), Decimal(0))
        if spec.stop_when is not None:
            out.samples[s.sample_id] = s
    return out


def _copy_first_run(run_dir: Path, first: Path, batch: int = 1024) -> None:
    """Append the first run's samples `run_dir` does not hold yet (all of them, for a retry not yet begun), a batch
    at a time."""
    have = sample_index(run_dir / SAMPLES)
    missing: list[Sample] = []
    for s in iter_run_samples(first):
        if s.sample_id not in have:
            missing.append(s)
        if len(missing) == batch:
            append_samples(run_dir / SAMPLES, missing)
            missing = []
    if missing:
        append_samples(run_dir / SAMPLES, missing)


def marked(samples: Sequence[Sample], firsts: Mapping[str, Sample], spec: RunSpec) -> list[Sample]:
    """Attempts asked again with the record of those before (`Sample.first_attempt`, a ladder's
    `earlier_attempts`) and the budget asked (`asked_at`); an attempt of this run that errored and is asked again
    hands on the attempts it carried."""
    if not firsts or spec.retry_of is None:
        return list(samples)
    return [_after(s, f, spec) if (f := firsts.get(s.sample_id)) is not None else s for s in samples]


def _after(sample: Sample, before: Sample, spec: RunSpec) -> Sample:
    """`sample`, asked again in place of `before`, carrying the attempts before it."""
    budget = spec.generation.max_tokens
    if asked_with(before, spec) == budget:  # this run's own attempt, errored: what it carried
        first, earlier = before.first_attempt, before.earlier_attempts
    else:
        attempt = FirstAttempt(outcome=before.outcome, score=before.score, output_tokens=before.output_tokens,
                               max_tokens=asked_with(before, spec))
        first = before.first_attempt or attempt
        earlier = [*before.earlier_attempts, attempt] if before.first_attempt is not None else []
    return sample.model_copy(update={"first_attempt": first, "earlier_attempts": earlier, "asked_at": budget})


def retry_line(spec: RunSpec, run_dir: Path, truncated: int, errored: int) -> str | None:
    """What a retry says before it asks: the first run's truncated samples it asks again (a retry not yet begun),
    or those still left (one killed mid-way); None for any other run, or a retry with nothing truncated left."""
    if spec.retry_of is None:
        return None
    also = f" and {errored} errored one(s)" if errored else ""
    budget = spec.generation.max_tokens
    if (run_dir / SAMPLES).exists():
        return (f"resuming {run_dir}: asking again the {truncated} truncated sample(s) still left{also} at "
                f"--max-tokens {budget}") if truncated else None
    return (f"asking again the {truncated} truncated sample(s) of {spec.retry_of.run}{also} at --max-tokens "
            f"{budget}; the first attempts are kept in {run_dir}")


__all__ = ["Resumed", "check_retry", "marked", "pending", "resumed", "retry_line", "retry_spec", "samples_dir"]
