"""BBH's graders: lm-eval's answer filter, then its `exact_match`, each as the task's own YAML configures it.

The settings are read, per task, from the installed lm_eval's task YAMLs (`proctor.benchmarks.bbh_lmeval`):
the filter named for the variant (`bbh_cot_fewshot`: `get-answer`; `bbh_cot_zeroshot`: `strict-match`), which
must be lm-eval's plain `regex` (+ `take_first`) — `RegexFilter` as `proctor.scoring.lmeval_rules.regex_filter`
reproduces it — and the `exact_match` metric's options (`regexes_to_ignore`, `ignore_case`,
`ignore_punctuation`: api/metrics.py `exact_match_hf_evaluate`, reproduced with numpy as lm-eval computes it).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.records import Item
from ..log.runlog import GenerationDetails, Outcome
from .base import Scored
from .extract import NONE, AnswerRule, Extraction
from .lmeval_rules import FALLBACK, regex_filter


@dataclass(frozen=True)
class ExactMatch:
    """lm-eval's `exact_match` options, as a task's `metric_list` gives them."""

    regexes_to_ignore: tuple[str, ...] = ()
    ignore_case: bool = False
    ignore_punctuation: bool = False
    ignore_numbers: bool = False

    def same(self, prediction: str, reference: str) -> bool:
        """`exact_match_hf_evaluate` on one (prediction, reference) pair, as lm-eval scores each doc."""
        preds, refs = np.asarray([prediction]), np.asarray([reference])
        for pattern in self.regexes_to_ignore:
            preds = np.array([re.sub(pattern, "", x) for x in preds])
            refs = np.array([re.sub(pattern, "", x) for x in refs])
        if self.ignore_case:
            preds, refs = np.char.lower(preds), np.char.lower(refs)
        for flag, chars in ((self.ignore_punctuation, string.punctuation), (self.ignore_numbers, string.digits)):
            if flag:
                table: Any = chars.maketrans("", "", chars)  # a dict, as lm-eval passes it (numpy's stubs say str)
                preds, refs = np.char.translate(preds, table=table), np.char.translate(refs, table=table)
        return bool((preds == refs)[0])


@dataclass(frozen=True)
class Filter:
    """A plain lm-eval filter: `regex` (pattern, group_select, fallback) then `take_first`."""

    name: str
    pattern: str
    group_select: int = 0
    fallback: str = FALLBACK

    def apply(self, text: str) -> str:
        """What lm-eval's filter keeps of one reply (the fallback when nothing matches)."""
        got = regex_filter(text, re.compile(self.pattern), self.group_select)
        return self.fallback if got == FALLBACK else got


@dataclass(frozen=True)
class TaskGrader:
    """One BBH task's filter and metric, for one variant."""

    filter: Filter
    metric: ExactMatch

    def grade(self, item: Item, text: str) -> Scored:
        """The filtered reply compared to the target: correct or wrong (lm-eval scores "[invalid]" like any
        other string: wrong unless the target is that string)."""
        filtered = self.filter.apply(text)
        target = item.accepted[0].answer if item.accepted else ""
        target = str(item.metadata.get("target", target))
        ok = self.metric.same(filtered, target)
        found = filtered != self.filter.fallback
        details = GenerationDetails(accepted=[target], compare="lm-eval exact_match")
        return Scored(Outcome.CORRECT if ok else Outcome.WRONG if found else Outcome.NO_ANSWER, details,
                      score=1.0 if ok else 0.0, extracted=filtered if found else None,
                      extraction_rule=self.filter.name if found else NONE)


def no_answer_read(text: str) -> Extraction:
    """A grader rule scores the whole reply with the item's own task settings (`grade`)."""
    return Extraction(None, NONE)


def grader_rule(name: str, source: str, graders: dict[str, TaskGrader]) -> AnswerRule:
    """An AnswerRule scoring each item by its task's (its category's) grader."""

    def grade(item: Item, text: str) -> Scored:
        return graders[str(item.category)].grade(item, text)

    return AnswerRule(name, "grader", source, read=no_answer_read, score_whole=grade)


def check_graders(graders: dict[str, TaskGrader], tasks: Sequence[str]) -> list[str]:
    """The tasks among `tasks` without a grader."""
    return [t for t in tasks if t not in graders]
