"""answer_reading: how each number of a run read by a rule with levels was read (TIGER-Lab's MMLU-Pro chain).

Beside the authors' accuracy (their levels, an unread reply counted as `no_answer` says) it gives the share
read only by the last fallback (the lone letter), the share credited as guesses, the strict accuracy (the
levels before the last; the last level and unread replies wrong) and proctor's robust reader's accuracy.
Samples without both readings (a truncated answer) count at their own score in every accuracy.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..core.results import AnswerReading
from ..log.runlog import Readings, Sample
from ..scoring.extract import ANSWER_RULES
from ..stats.intervals import guess_credit
from .base import RunContext, Tallied


def _readings(s: Sample) -> Readings | None:
    return getattr(s.details, "readings", None)


class AnswerReadingMetric(Tallied):
    name = "answer_reading"
    label = "answer reading (levels)"
    needs = frozenset({"details", "score", "outcome", "modality"})

    def tally(self, context: RunContext) -> ReadingTally:
        return ReadingTally(no_answer=context.no_answer)


def _lasts() -> dict[int, float]:
    """The last level of every rule with levels, each with a strict sum of 0 (which rule read a run is known at
    its end: the strict sum is kept for each)."""
    return {max(rule.levels.values()): 0.0 for rule in ANSWER_RULES.values() if rule.levels}


@dataclass
class ReadingTally:
    """`AnswerReadingMetric` gathered one sample at a time: the rule found so far, the levels counted and the
    sums of each accuracy (the strict one for every rule's last level, as the rule is known only at the end)."""

    no_answer: str  # the run's --no-answer
    rule: str | None = None
    unleveled: bool = False  # an answer read without a level (a run from before levels were recorded)
    levels: Counter[str] = field(default_factory=Counter)
    n: int = 0
    authors: float = 0.0
    robust: float = 0.0
    strict: dict[int, float] = field(default_factory=_lasts)

    def add(self, s: Sample) -> None:
        r = _readings(s)
        if r is not None and (rule := ANSWER_RULES.get(r.reference.reader)) is not None and rule.levels:
            self.unleveled = self.unleveled or (r.reference.answer is not None and r.reference.level is None)
            self.rule = rule.name
        if not (s.scored and s.score is not None):  # `counted`
            return
        self.n += 1
        if r is None:  # not read by rule (truncated): its own score everywhere
            score = s.score or 0.0
            self.authors, self.robust = self.authors + score, self.robust + score
            self.strict = {last: v + score for last, v in self.strict.items()}
            return
        level = r.reference.level
        self.levels[str(level) if level is not None else "none"] += 1
        unread = r.reference.answer is None
        self.authors += guess_credit(s.modality) if unread and self.no_answer == "guess" else \
            r.reference.score or 0.0
        self.strict = {last: v + ((r.reference.score or 0.0) if level is not None and level < last else 0.0)
                       for last, v in self.strict.items()}
        self.robust += r.robust.score or 0.0

    def result(self) -> AnswerReading | None:
        if self.rule is None or self.unleveled:
            return None
        last = max(ANSWER_RULES[self.rule].levels.values())
        n, levels, guess = self.n, self.levels, self.no_answer == "guess"
        return AnswerReading(
            rule=self.rule, no_answer=self.no_answer, n=n, by_level=dict(sorted(levels.items())),
            accuracy=self.authors / n if n else None,
            fallback_share=levels[str(last)] / n if n else None,
            guess_share=levels["none"] / n if n and guess else (0.0 if n else None),
            strict_accuracy=self.strict[last] / n if n else None, robust_accuracy=self.robust / n if n else None,
        )


def levels_line(a: AnswerReading) -> str:
    """The authors' accuracy and how it was read: the fallback and guess shares, the strict and robust figures."""
    def pct(x: float | None) -> str:
        return f"{x:.1%}" if x is not None else "n/a"

    return (f"read by {a.rule}: authors' accuracy {pct(a.accuracy)} (unread counted {a.no_answer}); "
            f"{pct(a.fallback_share)} read only by the lone-letter fallback, {pct(a.guess_share)} credited as "
            f"guesses; strict {pct(a.strict_accuracy)} (before the fallback, unread wrong), robust "
            f"{pct(a.robust_accuracy)} (proctor's reader)")
