"""TIGER-Lab's MMLU-Pro rule, all three levels, against upstream's own regexes (issue 29).

The oracle below is evaluate_from_api.py / evaluate_from_local.py@f418b116's `extract_answer` →
`extract_again` → `extract_final` as written there (re.search with upstream's patterns and flags); proctor's
reader is a linear-time rewrite of levels 2 and 3, so the property test feeds both adversarial text: the
pronoun "I", `\\boxed{X}`, "Answer:" on several lines, letters glued to words, markdown bold.
"""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.scoring.extract import (
    ANSWER_RULES,
    TIGER_L2,
    TIGER_L3,
    TIGER_LEVELS,
    read_mmlu_pro,
    read_mmlu_pro_local,
)


def upstream_chain(text: str) -> str | None:
    """The scripts' three levels, verbatim: the oracle."""
    match = re.search(r"answer is \(?([A-J])\)?", text)
    if match:
        return match.group(1)
    match = re.search(TIGER_L2, text)
    if match:
        return match.group(1)
    match = re.search(TIGER_L3, text, re.DOTALL)
    return match.group(0) if match else None


def test_the_oracle_uses_upstreams_patterns_verbatim() -> None:
    assert TIGER_L2 == r".*[aA]nswer:\s*([A-J])"
    assert TIGER_L3 == r"\b[A-J]\b(?!.*\b[A-J]\b)"


_PIECES = st.sampled_from([
    "answer is (", "answer is ", "The answer is", "answer:", "Answer:", "Answer: ", "ANSWER:", "\n", " ", "\t",
    "A", "B", "I", "J", "K", "a", "x", "I think", "\\boxed{", "}", "$", "**", "(", ")", ".", "_", "é", "1",
    "Answer:\n", "answer is (C)", "AB", "I'm", "\\boxed{D}",
])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_three_levels_read_what_upstream_reads(text: str) -> None:
    local = read_mmlu_pro_local(text)
    assert local.answer == upstream_chain(text)
    assert (local.answer is None) == (local.rule == "none")
    assert read_mmlu_pro(text).answer == upstream_chain(text.replace("**", ""))  # the API script's replace first


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Z", "S")), max_size=80))
def test_any_unicode_text_reads_as_upstream(text: str) -> None:
    r"""`\b` is Unicode-aware in both: a letter beside "é" or a digit is not lone."""
    assert read_mmlu_pro_local(text).answer == upstream_chain(text)


def test_levels_are_named() -> None:
    assert [read_mmlu_pro_local(t).rule for t in ("the answer is (B)", "Answer: C", "so B", "none")] == [
        "answer_is_first", "answer_label", "last_lone_letter", "none"]
    assert TIGER_LEVELS == {"answer_is_first": 1, "answer_label": 2, "last_lone_letter": 3}
    rule = ANSWER_RULES["tiger-lab-mmlu-pro"]
    assert (rule.no_answer, rule.level("last_lone_letter"), rule.level("none")) == ("guess", 3, None)
    assert ANSWER_RULES["tiger-lab-mmlu-pro-local"].no_answer == "guess"
    assert ANSWER_RULES["gpqa-baselines"].no_answer == "wrong"


def test_long_replies_are_read_in_linear_time() -> None:
    """Upstream's `.*` patterns backtrack quadratically; proctor's rewrite reads 400k characters at once."""
    lone = "A " * 200_000
    labels = "Answer: x " * 40_000 + "\n" + "answer:B"
    start = time.perf_counter()
    assert read_mmlu_pro_local(lone).answer == "A"
    assert read_mmlu_pro_local(labels).answer == "B"
    assert time.perf_counter() - start < 2.0
