"""Backends held to each other: do two runs of the same items (two backends, engines, dtypes, batch sizes or
shards) give the same answers?

Samples are paired by item and epoch. For log-likelihood runs (a choice's or a suite query's log-probability in
the sample's details), the per-item difference is the largest |log p_A − log p_B| over its options; the record
gives its maximum, 99th percentile and mean. For every run, an answer *flips* when the answer read (`extracted`)
differs; the flip rate gets a Wilson 95% interval, and generation runs also report the share of byte-identical
outputs. The flipping items are listed. A sample the infrastructure failed in one run and not in the other
(`Sample.failure`: sandbox, server, timeout, request) is a difference the model did not make: those are listed apart
(`infra_flips`), with how many of the flips they are. See docs/statistics.md.

A side whose answers came from the request cache (`Sample.cached_requests`) repeats an earlier run's answers: the
cache key is the backend's identity, which leaves out what should not change an answer (batch size, concurrency,
URLs), so two batch sizes run through one store agree perfectly by construction. The record counts such samples
on each side and warns; ask that side again with `--no-cache` to hold the two configurations to each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..log.failure import INFRA_FAILURES
from ..log.runlog import RunLog, Sample
from ..metrics.results import read_run
from ..run.store import record_from_log
from ..stats.comparison import RunRef
from ..stats.intervals import wilson_interval
from ..util.errors import InputError, ProctorError
from .compare import run_ref

SHOWN_FLIPS = 20  # flipping items a console listing shows (the record keeps them all)


class Flip(BaseModel):
    """One item (and epoch) whose answer differs between the runs."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    epoch: int
    answer_a: str | None
    answer_b: str | None
    score_a: float | None
    score_b: float | None


class InfraFlip(BaseModel):
    """One item (and epoch) the infrastructure failed in one run and not in the other: a difference the model did
    not make (`Sample.failure`)."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    epoch: int
    failure_a: str | None  # the failure class in run 1 (None: no failure)
    failure_b: str | None


class LogprobDelta(BaseModel):
    """Per-item largest |Δ log p| over the options, summarised over the paired items."""

    model_config = ConfigDict(frozen=True)

    n: int  # paired samples with log-probabilities on both sides
    max: float
    p99: float
    mean: float
    worst: list[tuple[str, float]]  # the items with the largest differences, largest first


class Agreement(BaseModel):
    """Two runs of the same items held to each other."""

    model_config = ConfigDict(frozen=True)

    a: RunRef
    b: RunRef
    n_paired: int  # samples (item, epoch) both runs answered
    only_in_a: int
    only_in_b: int
    logprob: LogprobDelta | None  # log-likelihood runs
    n_flips: int
    flip_rate: float
    flip_ci_low: float
    flip_ci_high: float
    n_identical_outputs: int | None  # generation runs: byte-identical raw outputs
    identical_share: float | None
    n_score_changes: int  # paired samples whose score differs
    flips: list[Flip]
    # samples both runs hold (answered or not) that the infrastructure failed in one run only: the differences it
    # explains; `n_flips_infra`: of the flips above, those (an infrastructure failure scored, e.g. a sandbox limit)
    infra_flips: list[InfraFlip] = []
    n_flips_infra: int = 0
    cached_a: int = 0  # paired samples of run 1 with an answer from the request cache
    cached_b: int = 0  # … of run 2
    warnings: list[str] = []

    def lines(self) -> list[str]:
        """The record in plain sentences (the console's and the report's)."""
        out = [(f"{self.n_paired:,} paired answers: {self.n_flips:,} flip ({100 * self.flip_rate:.1f}% "
               f"[{100 * self.flip_ci_low:.1f}, {100 * self.flip_ci_high:.1f}]), {self.n_score_changes:,} "
               "change score")]
        if self.identical_share is not None:
            out.append(f"identical outputs: {self.n_identical_outputs:,} ({100 * self.identical_share:.1f}%)")
        if self.infra_flips:
            one = sum(f.failure_a is not None and f.failure_a in _INFRA for f in self.infra_flips)
            out.append(f"infrastructure explains {len(self.infra_flips):,} differences: samples it failed in one run "
                       f"only ({RUN_LABELS[0]} {one:,}, {RUN_LABELS[1]} {len(self.infra_flips) - one:,}), "
                       f"{self.n_flips_infra:,} of them among the flips")
        if self.logprob is not None:
            lp = self.logprob
            out.append(f"per-item |Δ log p| over {lp.n:,} items: max {lp.max:.2e}, p99 {lp.p99:.2e}, "
                       f"mean {lp.mean:.2e}")
        return out


def _logprobs(s: Sample) -> dict[str, float] | None:
    """A sample's option log-probabilities (choice or suite details), None when it has none."""
    raw: Any = getattr(s.details, "logprobs", None)
    if not isinstance(raw, Mapping) or not raw:
        return None
    return {str(k): float(v) for k, v in raw.items() if v is not None}


def _max_delta(a: Sample, b: Sample) -> float | None:
    la, lb = _logprobs(a), _logprobs(b)
    if la is None or lb is None or la.keys() != lb.keys() or not la:
        return None
    return max(abs(la[k] - lb[k]) for k in la)


def _summary(deltas: Sequence[tuple[str, float]]) -> LogprobDelta | None:
    if not deltas:
        return None
    values = np.array([d for _, d in deltas])
    worst = sorted(deltas, key=lambda t: -t[1])[:SHOWN_FLIPS]
    return LogprobDelta(n=len(deltas), max=float(values.max()), p99=float(np.quantile(values, 0.99)),
                        mean=float(values.mean()), worst=worst)


RUN_LABELS = ("run 1", "run 2")  # never "A"/"B": those are answer letters too


def cache_warnings(cached: tuple[int, int], n_paired: int) -> list[str]:
    """What to say of sides served from the request cache: they repeat earlier answers, measure nothing."""
    return [f"{label}: {n:,} of {n_paired:,} paired answers came from the request cache, so they repeat an earlier "
            "run's answers (the cache key leaves out batch size, concurrency and URLs) and this comparison does "
            f"not measure {label}'s configuration; run it again with --no-cache"
            for label, n in zip(RUN_LABELS, cached, strict=True) if n]


def _answered(log: RunLog) -> dict[tuple[str, int], Sample]:
    return {(s.item_id, s.epoch): s for s in log.samples if s.scored}


_INFRA = frozenset(f.value for f in INFRA_FAILURES)


def infra_flips(a: RunLog, b: RunLog) -> list[InfraFlip]:
    """The samples both runs hold that the infrastructure failed in exactly one of them (`Sample.failure`)."""
    fa = {(s.item_id, s.epoch): s.failure for s in a.samples}
    fb = {(s.item_id, s.epoch): s.failure for s in b.samples}
    return [InfraFlip(item_id=i, epoch=e, failure_a=fa[i, e], failure_b=fb[i, e]) for i, e in sorted(fa.keys() & fb.keys())
            if (fa[i, e] in INFRA_FAILURES) != (fb[i, e] in INFRA_FAILURES)]


def agreement(a: RunLog, b: RunLog) -> Agreement:
    """Hold run `b` to run `a` on the samples both answered."""
    sa, sb = _answered(a), _answered(b)
    keys = sorted(sa.keys() & sb.keys())
    if not keys:
        raise ProctorError(f"runs {a.manifest.run_id[:12]} and {b.manifest.run_id[:12]} answered no item in common")
    flips = [Flip(item_id=i, epoch=e, answer_a=sa[i, e].extracted, answer_b=sb[i, e].extracted,
                  score_a=sa[i, e].score, score_b=sb[i, e].score)
             for i, e in keys if sa[i, e].extracted != sb[i, e].extracted]
    deltas = [(f"{i}#{e}", d) for i, e in keys if (d := _max_delta(sa[i, e], sb[i, e])) is not None]
    generation = all(sa[k].mode == "generate" and sb[k].mode == "generate" for k in keys)
    identical = sum(sa[k].raw_output == sb[k].raw_output for k in keys) if generation else None
    lo, hi = wilson_interval(len(flips), len(keys))
    cached = (sum(bool(sa[k].cached_requests) for k in keys), sum(bool(sb[k].cached_requests) for k in keys))
    infra = infra_flips(a, b)
    explained = {(f.item_id, f.epoch) for f in infra}
    return Agreement(
        a=run_ref(record_from_log(a)), b=run_ref(record_from_log(b)), n_paired=len(keys),
        only_in_a=len(sa.keys() - sb.keys()), only_in_b=len(sb.keys() - sa.keys()), logprob=_summary(deltas),
        n_flips=len(flips), flip_rate=len(flips) / len(keys), flip_ci_low=lo, flip_ci_high=hi,
        n_identical_outputs=identical, identical_share=identical / len(keys) if identical is not None else None,
        n_score_changes=sum(sa[k].score != sb[k].score for k in keys), flips=flips,
        infra_flips=infra, n_flips_infra=sum((f.item_id, f.epoch) in explained for f in flips),
        cached_a=cached[0], cached_b=cached[1], warnings=cache_warnings(cached, len(keys)),
    )


def read_for_agreement(ref: str | Path, store: Any = None) -> RunLog:
    """A run directory, or a recorded run id (a unique prefix will do) whose directory still exists."""
    p = Path(ref)
    if p.is_dir():
        return read_run(p)
    rec = store.find_run(str(ref)) if store is not None else None
    if rec is not None and Path(rec.path).is_dir():
        return read_run(Path(rec.path))
    raise InputError.at(str(ref), "not a run directory" + (" nor a recorded run id whose directory exists"
                                                          if store is not None else ""))


__all__ = ["RUN_LABELS", "Agreement", "Flip", "InfraFlip", "LogprobDelta", "agreement", "cache_warnings", "infra_flips",
           "read_for_agreement"]
