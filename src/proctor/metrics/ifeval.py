"""IFEval's four numbers, as lm-eval aggregates them (lm_eval/tasks/ifeval/utils.py, ifeval.yaml).

Prompt level (`prompt_level_strict_acc`, `prompt_level_loose_acc`): the mean over samples of "every instruction
followed"; instruction level (`inst_level_*`): `agg_inst_level_acc`, every instruction of every sample pooled.
Read from each sample's `details.instructions` (`proctor.scoring.ifeval`); None for runs without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..core.results import MetricValue
from ..log.runlog import InstructionCheck, Sample
from .base import RunContext, Tallied


def _checks(s: Sample) -> list[InstructionCheck] | None:
    found = getattr(s.details, "instructions", None)
    return found if isinstance(found, list) and found else None


class IFEvalMetric(Tallied):
    """One of the four: `level` prompt or inst(ruction), `mode` strict or loose."""

    needs = frozenset({"details"})

    def __init__(self, level: Literal["prompt", "inst"], mode: Literal["strict", "loose"]) -> None:
        self.level, self.mode = level, mode
        self.name = f"ifeval_{level}_level_{mode}_acc"
        self.label = f"IFEval {'prompt' if level == 'prompt' else 'instruction'}-level {mode}"

    def tally(self, context: RunContext) -> IFEvalTally:
        return IFEvalTally(self.level, self.mode)


@dataclass
class IFEvalTally:
    """`IFEvalMetric` gathered one sample at a time: hits and their number."""

    level: Literal["prompt", "inst"]
    mode: Literal["strict", "loose"]
    hits: int = 0
    n: int = 0

    def add(self, s: Sample) -> None:
        checks = _checks(s)
        if checks is None:
            return
        if self.level == "prompt":
            self.hits += all(getattr(c, self.mode) for c in checks)
            self.n += 1
        else:
            self.hits += sum(bool(getattr(c, self.mode)) for c in checks)
            self.n += len(checks)

    def result(self) -> MetricValue | None:
        return MetricValue(value=self.hits / self.n, n=self.n, method="mean") if self.n else None


METRICS = tuple(IFEvalMetric(level, mode) for level in ("prompt", "inst") for mode in ("strict", "loose"))
