"""A release gate: may a candidate ship, given a baseline and the largest drop in accuracy allowed?

The candidate and the baseline are paired on their shared items (`proctor.stats.comparison`: Tango's score interval
for 0/1 scores, a paired bootstrap for graded ones). With Δ = candidate − baseline and its interval [lo, hi]:

* GO — lo > −max_drop: the candidate is no worse than the allowed drop (a non-inferiority test at one-sided
  2.5%, the 95% interval's lower end);
* NO-GO — hi < −max_drop: the candidate is worse by more than the allowed drop;
* INCONCLUSIVE — the interval holds −max_drop: the items cannot tell (more items, or a looser drop).

With `per_category`, every category is gated too, at the Bonferroni level 1 − 0.05/k over its k categories (one
family, so k chances to see a spurious drop do not add up); the gate is NO-GO when any check is, GO when all are.

A candidate run by `run --stop-when-decided` against this baseline is gated by what its confidence sequence
recorded (`proctor.stats.sequential`): items asked until a decision are not a fixed sample, and the interval above
would not hold for them; the sequence's bounds hold at whatever item it stopped. That decision is the overall one
only: no category is gated, and the result's `note` says so (`SEQUENTIAL_NOTE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..log.sequential import SequentialRecord
from ..run.store import RunScores
from ..stats.comparison import LEVEL, RunRef, graded_interval, tango_interval
from ..stats.intervals import normal_quantile
from ..util.errors import ProctorError
from .comparable import first_reason
from .compare import partial_warnings, provenance_warnings, run_ref, same_run_warning


class Decision(StrEnum):
    GO = "GO"
    NO_GO = "NO-GO"
    INCONCLUSIVE = "INCONCLUSIVE"


EXIT_CODES = {Decision.GO: 0, Decision.NO_GO: 1, Decision.INCONCLUSIVE: 3}


class GateCheck(BaseModel):
    """One group's check: candidate − baseline on its shared items, the interval and what it decides."""

    model_config = ConfigDict(frozen=True)

    group: str
    n: int
    diff: float
    ci_low: float
    ci_high: float
    level: float
    decision: Decision

    def text(self, max_drop: float) -> str:
        return (f"{self.group}: candidate − baseline {100 * self.diff:+.1f} points, {100 * self.level:.4g}% interval "
                f"[{100 * self.ci_low:+.1f}, {100 * self.ci_high:+.1f}] vs the allowed drop −{100 * max_drop:.1f} "
                f"on {self.n:,} shared item(s): {self.decision.value}")


class GateResult(BaseModel):
    """The gate's decision, the check that decided it, and every check."""

    model_config = ConfigDict(frozen=True)

    decision: Decision
    max_drop: float  # a proportion (points / 100)
    candidate: RunRef
    baseline: RunRef
    deciding: GateCheck
    checks: list[GateCheck]
    warnings: list[str]
    sequential: SequentialRecord | None = None  # the candidate's `run --stop-when-decided` record, when it decided
    note: str | None = None  # what the decision covers, when that is not every check asked for (a stopped run)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]


SEQUENTIAL_NOTE = ("the overall decision only, read from the candidate's --stop-when-decided record: no category is "
                   "gated (the sequence watched overall accuracy; the items it asked are no fixed sample to test a "
                   "category on)")


def decide(lo: float, hi: float, max_drop: float) -> Decision:
    """GO when the whole interval is above −max_drop, NO-GO when it is below, else INCONCLUSIVE."""
    if lo > -max_drop:
        return Decision.GO
    if hi < -max_drop:
        return Decision.NO_GO
    return Decision.INCONCLUSIVE


def _check(group: str, cand: np.ndarray, base: np.ndarray, max_drop: float, level: float,
           n_boot: int, seed: int) -> GateCheck:
    if np.isin(cand, (0.0, 1.0)).all() and np.isin(base, (0.0, 1.0)).all():
        b10, b01 = int(np.sum((cand == 1) & (base == 0))), int(np.sum((cand == 0) & (base == 1)))
        lo, hi = tango_interval(b10, b01, cand.size, z=normal_quantile(0.5 + level / 2))
    else:
        lo, hi = graded_interval(cand - base, n_boot, seed, level)
    return GateCheck(group=group, n=int(cand.size), diff=float(cand.mean() - base.mean()), ci_low=lo, ci_high=hi,
                     level=level, decision=decide(lo, hi, max_drop))


def _groups(cand: RunScores, base: RunScores, per_category: bool) -> list[tuple[str, list[str]]]:
    shared = sorted(cand.items.keys() & base.items.keys())
    if not shared:
        raise ProctorError(f"runs {cand.run.run_id[:12]} and {base.run.run_id[:12]} share no scored items")
    out = [("overall", shared)]
    if per_category:
        cats: dict[str, list[str]] = {}
        for i in shared:
            cats.setdefault(cand.items[i].category or base.items[i].category or "(none)", []).append(i)
        out += sorted(cats.items()) if len(cats) > 1 else []
    return out


def _deciding(checks: Sequence[GateCheck]) -> tuple[Decision, GateCheck]:
    for decision in (Decision.NO_GO, Decision.INCONCLUSIVE):
        for c in checks:
            if c.decision is decision:
                return decision, c
    return Decision.GO, checks[0]


def _sequence_check(record: SequentialRecord, cand: RunScores, base: RunScores, max_drop: float) -> GateCheck:
    """The check a stopped candidate's confidence sequence recorded (decided anew at another `max_drop`)."""
    shared = sorted(cand.items.keys() & base.items.keys())
    diff = float(np.mean([cand.items[i].score - base.items[i].score for i in shared])) if shared else 0.0
    how = (f"stopped after {record.items_asked:,} of {record.items_total:,} items" if record.stopped
           else f"all {record.items_total:,} items asked")
    same = abs(record.max_drop - max_drop) < 1e-12
    decision = Decision(record.decision) if same else decide(record.ci_low, record.ci_high, max_drop)
    return GateCheck(group=f"overall (--stop-when-decided, {how}; anytime-valid confidence sequence)",
                     n=record.items_paired, diff=diff, ci_low=record.ci_low, ci_high=record.ci_high,
                     level=1 - record.alpha, decision=decision)


def gate(candidate: RunScores, baseline: RunScores, max_drop: float, per_category: bool = False,
         mix_settings: bool = False, n_boot: int = 2000, seed: int = 0,
         sequential: SequentialRecord | None = None) -> GateResult:
    """Gate `candidate` against `baseline`: `max_drop` is the largest drop in accuracy allowed (a proportion).
    `sequential`: the candidate's `run --stop-when-decided` record (its manifest's), which decides when it was
    made against this baseline."""
    if not 0 <= max_drop < 1:
        raise ProctorError(f"--max-drop must be between 0 and 100 points, got {100 * max_drop:g}")
    why = first_reason([candidate.run, baseline.run], mix_settings)
    if why is not None:
        raise ProctorError(f"not comparable: {why}")
    warnings = provenance_warnings([candidate.run, baseline.run])
    if (same := same_run_warning(candidate.run, baseline.run)) is not None:
        warnings.append(f"{same}: a gate of a run against itself decides nothing")
    warnings += partial_warnings([("the baseline", baseline.run)]
                                 + ([("the candidate", candidate.run)] if sequential is None else []))
    if sequential is not None and sequential.baseline_run_id == baseline.run.run_id:
        check = _sequence_check(sequential, candidate, baseline, max_drop)
        if baseline.run.n_errors and check.decision is Decision.GO:  # the sequence bounds the candidate's only
            check = check.model_copy(update={"decision": Decision.INCONCLUSIVE})
            warnings.append(f"{baseline.run.n_errors:,} of the baseline's samples errored: a GO on the rest leaves "
                            "them out; resume the baseline and gate again")
        if per_category:
            warnings.append("--per-category: a run stopped by its confidence sequence is gated overall only")
        return GateResult(decision=check.decision, max_drop=max_drop, candidate=run_ref(candidate.run),
                          baseline=run_ref(baseline.run), deciding=check, checks=[check], warnings=warnings,
                          sequential=sequential, note=SEQUENTIAL_NOTE)
    if sequential is not None and sequential.stopped:
        warnings.append(f"the candidate stopped when its confidence sequence against another baseline "
                        f"({sequential.baseline_run_id[:12]}) decided: this interval on its "
                        f"{sequential.items_asked:,} items is not valid after such a stop")
    groups = _groups(candidate, baseline, per_category)
    n_cats = len(groups) - 1
    checks = []
    for name, ids in groups:
        level = LEVEL if name == "overall" else 1 - (1 - LEVEL) / n_cats
        cand = np.array([candidate.items[i].score for i in ids])
        base = np.array([baseline.items[i].score for i in ids])
        checks.append(_check(name, cand, base, max_drop, level, n_boot, seed))
    decision, deciding = _deciding(checks)
    note = _errored_note(candidate, baseline) if decision is Decision.GO else None
    if note is not None:  # GO over the samples that answered: every errored one could be a wrong answer
        decision = Decision.INCONCLUSIVE
        checks = [c.model_copy(update={"decision": decision}) if c is deciding else c for c in checks]
        deciding = checks[[c.group for c in checks].index(deciding.group)]
    return GateResult(decision=decision, max_drop=max_drop, candidate=run_ref(candidate.run),
                      baseline=run_ref(baseline.run), deciding=deciding, checks=checks, warnings=warnings, note=note)


def _errored_note(candidate: RunScores, baseline: RunScores) -> str | None:
    """Why a GO does not hold when samples errored (left out of the shared items); None when none did."""
    sides = [f"{r.n_errors:,} of the {side}'s" for side, r in (("candidate", candidate.run), ("baseline", baseline.run))
             if r.n_errors]
    if not sides:
        return None
    return (f"{' and '.join(sides)} samples errored: a GO on the rest leaves them out (each could be a wrong "
            "answer); ask them again (the same run command) and gate again")


__all__ = ["EXIT_CODES", "Decision", "GateCheck", "GateResult", "decide", "gate"]
