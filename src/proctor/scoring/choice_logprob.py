"""Multiple choice by log-likelihood, with lm-evaluation-harness's conventions.

Each option is scored as the continuation `" " + option text` after the rendered question (`context`).
`acc` picks the option with the highest summed log-prob; `acc_norm` the highest log-prob per character of
the option text (the leading space not counted). A tie at the maximum is reported and never counted
correct; an errored request makes the item unscored (None), never wrong.

A choice item written to the spec (options lettered inside its prompt, no `choices`) is scored on its
letters (`" A"`, `" B"`, … : what the prompt asks for) for `acc`; when the prompt letters its options
parseably (`records.spec_choice_options`), `acc_norm` scores the option texts, else the letters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.model import Capability, Loglikelihood, LoglikelihoodRequest
from ..data.records import DONT_KNOW, FALSE, TRUE, Item, Modality, spec_choice_options
from ..data.tasks import text_hash
from ..log.runlog import ChoiceDetails, Outcome
from ..util.errors import ProctorError
from .base import Answered, Request, Scored, usage_of
from .logprob import Norm, argmax_ties, normalize, softmax, token_boundary

if TYPE_CHECKING:
    from ..data.tasks import Task

_CLOSED_SETS = {Modality.BOOLEAN: (TRUE, FALSE), Modality.TERNARY: (TRUE, FALSE, DONT_KNOW)}


def logprob_options(item: Item) -> dict[str, str] | None:
    """The options scored by log-likelihood: a choice item's choices, or the closed answer set of a
    boolean / ternary item (label = option text); None when the item has no closed set."""
    if item.choices:
        return item.choices
    spec = spec_choice_options(item)
    if spec is not None:
        return spec[0]
    labels = _CLOSED_SETS.get(item.modality)
    return {label: label for label in labels} if labels else None


def _options(item: Item) -> dict[str, str]:
    options = logprob_options(item)
    if not options:
        raise ValueError(f"item {item.identifier} has no closed set of options to score by log-likelihood")
    return options


def _norm_texts(item: Item) -> list[str] | None:
    """The option texts `acc_norm` scores apart from the `acc` continuations (spec-style items only)."""
    spec = spec_choice_options(item)
    return list(spec[1].values()) if spec is not None and spec[1] is not None else None


def choice_requests(item: Item, context: str) -> list[LoglikelihoodRequest]:
    """One request per option, in letter order: continuation = " " + option text (then, for a spec-style
    item whose prompt letters its options, one per option text for acc_norm)."""
    texts = list(_options(item).values()) + (_norm_texts(item) or [])
    return [LoglikelihoodRequest(context, " " + text) for text in texts]


def score_choices(
    item: Item, results: Sequence[Loglikelihood], lengths_of: Sequence[str] | None = None
) -> tuple[str | None, bool | None, bool | None, dict[str, Any]]:
    """(predicted letter, acc correct, acc_norm correct, details) for one item's option results; acc_norm
    divides by the characters of each option's text, or of `lengths_of` (a spec benchmark's continuations
    without their delimiter, as lm-eval divides)."""
    options = _options(item)
    letters = list(options)
    norm_texts = _norm_texts(item) if lengths_of is None else None
    if len(results) != len(letters) * (2 if norm_texts else 1):
        raise ValueError(f"item {item.identifier}: {len(letters)} options but {len(results)} results")
    results, norm_results = (results[:len(letters)], results[len(letters):]) if norm_texts else (results, results)
    gold = item.best_answer.strip().upper()
    errors = [r.error for r in (*results, *norm_results) if r.error]
    details: dict[str, Any] = {"gold": gold, "letters": letters}
    if errors:
        details["error"] = errors[0]
        return None, None, None, details
    sums = [r.logprob for r in results]
    per_char = [normalize(r.logprob, Norm.CHAR, n_tokens=r.n_tokens, text=t)
                for r, t in zip(norm_results, lengths_of or norm_texts or options.values())]
    top, top_norm = argmax_ties(sums), argmax_ties(per_char)
    details.update({
        "logprobs": dict(zip(letters, sums)),
        "logprobs_norm": dict(zip(letters, per_char)),
        "n_tokens": dict(zip(letters, (r.n_tokens for r in results))),
        "is_greedy": dict(zip(letters, (r.is_greedy for r in results))),
        "distribution": dict(zip(letters, softmax(sums))),
        "predicted_norm": letters[top_norm[0]],
        "tie": len(top) > 1, "tie_norm": len(top_norm) > 1,
    })
    predicted = letters[top[0]]
    acc = len(top) == 1 and predicted.upper() == gold
    acc_norm = len(top_norm) == 1 and letters[top_norm[0]].upper() == gold
    return predicted, acc, acc_norm, details


# ---------------------------------------------------------------- the Scorer (proctor.run.runner)


@dataclass(frozen=True)
class ChoiceScorer:
    """Score each option's log-likelihood after the task's log-prob context: acc (sum) and acc_norm (per char).

    An item without a reference answer is UNSCORED (its distribution kept), never counted wrong."""

    kind: str = "choice"
    mode: str = "logprob"
    capability: Capability = Capability.LOGLIKELIHOOD

    def check(self, task: Task) -> None:
        bad = [it.identifier for it in task.items if not logprob_options(it)]
        if bad:
            raise ProctorError(
                f"--mode logprob needs closed-set items (choiceofN, boolean, ternary); {len(bad)} are not,"
                f" e.g. {bad[0]}: use --mode generate"
            )

    def identity(self) -> dict[str, Any]:
        return {"scorer": self.kind}

    def template_hash(self, task: Task) -> str:
        return text_hash("logprob", *(task.prompts.logprob_context(item) for item in task.items))

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        pairs = getattr(task.prompts, "choice_pairs", None)  # a spec benchmark's own (context, continuation)s
        if callable(pairs):
            rule = getattr(task.prompts, "boundary", "proctor")
            return [LoglikelihoodRequest(*token_boundary(context, continuation, rule))
                    for context, continuation in pairs(item)]
        return list(choice_requests(item, task.prompts.logprob_context(item)))

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        own = getattr(task.prompts, "norm_texts", None)
        return [self._score_one(a, own(a.item) if callable(own) else None) for a in batch]

    def _score_one(self, answered: Answered, lengths_of: Sequence[str] | None = None) -> Scored:
        first = answered.requests[0] if answered.requests else None
        prompt = first.context if isinstance(first, LoglikelihoodRequest) else ""
        usage = usage_of(answered.answers)
        if answered.error is not None:
            return Scored(Outcome.ERROR, ChoiceDetails(), error=answered.error, prompt=prompt, usage=usage)
        results = [a for a in answered.answers if isinstance(a, Loglikelihood)]
        predicted, correct, norm_correct, raw = score_choices(answered.item, results, lengths_of)
        details = ChoiceDetails.model_validate(raw)
        if not answered.item.is_scored:
            return Scored(Outcome.UNSCORED, details, extracted=predicted, extraction_rule="argmax-logprob",
                          prompt=prompt, usage=usage)
        return Scored(
            Outcome.CORRECT if correct else Outcome.WRONG, details.model_copy(update={"acc_norm_correct": norm_correct}),
            score=1.0 if correct else 0.0, extracted=predicted, extraction_rule="argmax-logprob",
            prompt=prompt, usage=usage,
        )
