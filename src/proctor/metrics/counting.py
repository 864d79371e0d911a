"""How a run's results count truncated and unanswered samples, before any metric reads them (`--truncated-as`,
`--no-answer`): `proctor.metrics.results.summarize` applies them to every sample (results.json; errors are never
accuracy), and so do the exports and the first-attempt metric."""

from __future__ import annotations

from collections.abc import Sequence

from ..log.runlog import Outcome, Sample
from ..stats.intervals import guess_credit


def apply_truncated_as(samples: Sequence[Sample], truncated_as: str) -> list[Sample]:
    """`excluded`: truncated samples keep their outcome but leave accuracy (score None); `wrong`: they stay 0."""
    if truncated_as == "wrong":
        return list(samples)
    check_truncated_as(truncated_as)
    return [truncated_as_counted(s, truncated_as) for s in samples]


def check_truncated_as(truncated_as: str) -> None:
    if truncated_as not in ("wrong", "excluded"):
        raise ValueError(f"truncated_as must be wrong or excluded, not {truncated_as!r}")


def truncated_as_counted(s: Sample, truncated_as: str) -> Sample:
    """One sample as `apply_truncated_as` counts it."""
    if truncated_as == "excluded" and s.outcome is Outcome.TRUNCATED:
        return s.model_copy(update={"score": None})
    return s


NO_ANSWER_POLICIES = ("wrong", "guess")


def apply_no_answer(samples: Sequence[Sample], no_answer: str) -> list[Sample]:
    """`guess`: an answer no rule found earns the expected value of a guess, 1/k for k options (never a random
    draw: TIGER-Lab's scripts draw one); `wrong` (the default): it stays 0."""
    if no_answer == "wrong":
        return list(samples)
    check_no_answer(no_answer)
    return [no_answer_counted(s, no_answer) for s in samples]


def check_no_answer(no_answer: str) -> None:
    if no_answer not in NO_ANSWER_POLICIES:
        raise ValueError(f"no_answer must be wrong or guess, not {no_answer!r}")


def no_answer_counted(s: Sample, no_answer: str) -> Sample:
    """One sample as `apply_no_answer` counts it."""
    if no_answer == "guess" and s.outcome is Outcome.NO_ANSWER:
        return s.model_copy(update={"score": guess_credit(s.modality)})
    return s
