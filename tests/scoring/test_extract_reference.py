"""The benchmarks' reference answer rules, on replies shaped like the failure modes the authors' rules
and proctor's reader disagree on (issue 20): each reproduces its upstream parser, flags included."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.scoring.extract import (
    ANSWER_RULES,
    LLMWC_MCQA,
    TIGER_L2,
    _tiger_level2,
    extract_choice,
    llmwc_mcqa,
    read_aime,
    read_gpqa,
    read_llmwc_mcqa,
    read_mmlu_pro,
    same_integer,
)

BASE_MODEL_RAMBLES = (  # a base model answers, then keeps writing new questions with their own answers
    "Let's think step by step. Photosynthesis happens in chloroplasts. The answer is (C).\n\n"
    "Question: Which organ pumps blood?\nOptions: A. lung\nB. heart\n"
    "Answer: Let's think step by step. The heart pumps blood. The answer is (B).\n\n"
    "Question: What is 2+2?\nAnswer: The answer is (D)."
)
CHAT_SUMMARIZES = (  # a chat model appends a summary of every few-shot answer
    "The force is mass times acceleration, so the answer is (F).\n\n"
    "Let's summarize all answers: The answer is (H)."
)
REASONER_REPEATS = (  # a reasoning model repeats the few-shot answers before its own
    "Example 1: the answer is (A). Example 2: the answer is (J). My own analysis: ... the answer is (E)."
)


def test_mmlu_pro_first_answer_is_wins_where_proctor_reads_the_last() -> None:
    assert (read_mmlu_pro(BASE_MODEL_RAMBLES).answer, read_mmlu_pro(BASE_MODEL_RAMBLES).rule) == ("C", "answer_is_first")
    assert extract_choice(BASE_MODEL_RAMBLES, "ABCDEFGHIJ").answer == "D"
    assert read_mmlu_pro(CHAT_SUMMARIZES).answer == "F"
    assert extract_choice(CHAT_SUMMARIZES, "ABCDEFGHIJ").answer == "H"
    assert read_mmlu_pro(REASONER_REPEATS).answer == "A"  # the first rule is wrong here: hence `ambiguous`
    assert extract_choice(REASONER_REPEATS, "ABCDEFGHIJ").answer == "E"


@pytest.mark.parametrize(
    ("text", "answer", "rule"),
    [
        ("so the answer is F", "F", "answer_is_first"),
        ("so the answer is (J) and not (A)", "J", "answer_is_first"),
        ("The Answer is (B)", "B", "last_lone_letter"),  # level 1 is case-sensitive: level 3 reads it
        ("the answer is (K)", None, "none"),  # only A-J, at every level
        ("answer is  (B)", "B", "last_lone_letter"),  # level 1 wants exactly one space
        ("Answer: B then Answer: C\nlater answer: D", "C", "answer_label"),  # level 2: the first such line, its last match
        ("work\nanswer:\n  G", "G", "answer_label"),  # \s* crosses lines
        ("I pick B.", "B", "last_lone_letter"),  # level 3: the last lone capital A-J anywhere
        ("I think so.", "I", "last_lone_letter"),  # the pronoun is a lone capital I: the authors read it
        ("The answer is $\\boxed{D}$", "D", "last_lone_letter"),
        ("no capital letter at all", None, "none"),
        ("**The answer is (C)**", "C", "answer_is_first"),
        ("The answer is **(C)**", "C", "answer_is_first"),  # the API script removes "**" first
    ],
)
def test_mmlu_pro_three_levels_exactly(text: str, answer: str | None, rule: str) -> None:
    got = read_mmlu_pro(text)
    assert (got.answer, got.rule) == (answer, rule)


_PIECES = st.sampled_from(["answer:", "Answer:", "Answer: ", "ANSWER:", "\n", " ", "\t", "A", "J", "K", "b", "x",
                           "Answer:\n", "answer is (C)"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_level_two_reads_what_the_upstream_regex_does(text: str) -> None:
    r"""The linear-time level 2 equals upstream's `re.search(r".*[aA]nswer:\s*([A-J])", text)`."""
    m = re.search(TIGER_L2, text)
    assert _tiger_level2(text) == (m.group(1) if m else None)


@pytest.mark.parametrize(
    ("text", "answer", "rule"),
    [
        ("Reasoning... The correct answer is (B). Earlier (A)", "B", "answer_is"),
        ("The correct answer is (E). Answer: (C)", "C", "Answer_label"),  # E is not A-D: the next pattern
        ("final answer (D)", "D", "answer_paren"),
        ("Options (A) and (C) differ", "A", "paren"),  # the first parenthesised letter
        ("The correct answer is B", None, "none"),  # the baselines need the parentheses
    ],
)
def test_gpqa_baselines_patterns_in_order(text: str, answer: str | None, rule: str) -> None:
    got = read_gpqa(text)
    assert (got.answer, got.rule) == (answer, rule)
    if text.startswith("The correct answer is (E)"):
        assert got.rejected == "E"


@pytest.mark.parametrize(
    ("text", "answer", "rule"),
    [
        ("so \\boxed{70} ... finally \\boxed{**588**}", "588", "boxed"),
        ("\\boxed{\\boxed{011}}", "11", "boxed"),
        ("\\fbox{12}", "12", "boxed"),
        ("The answer is 3/4, i.e. \\boxed{\\frac{3}{4}}", "\\frac{3}{4}", "boxed"),
        ("no box: 17 apples, then 204", "204", "last_integer"),
        ("nothing numeric", None, "none"),
        ("   ", None, "none"),
    ],
)
def test_aime_matharena_rule(text: str, answer: str | None, rule: str) -> None:
    got = read_aime(text)
    assert (got.answer, got.rule) == (answer, rule)


def test_aime_comparison_is_integer_only() -> None:
    assert same_integer("11", "011") and not same_integer("11.0", "11") and not same_integer("x", "11")
    assert not same_integer("²", "2")  # a unicode digit is not an integer answer


def test_every_rule_names_its_upstream_source() -> None:
    assert set(ANSWER_RULES) == {"tiger-lab-mmlu-pro", "tiger-lab-mmlu-pro-local", "gpqa-baselines",
                                 "matharena-aime", "lm-eval-mmlu-pro", "lm-eval-gsm8k-strict-match",
                                 "lm-eval-gsm8k-flexible-extract", "simple-evals-mcq", "math-verify", "matharena"}
    assert all(r.source and r.name == name for name, r in ANSWER_RULES.items())


# ---------------------------------------------------------------- llm-wc's multiple-choice rule

AJ, AD = "ABCDEFGHIJ", "ABCD"


def upstream_extract_choice_answer(text: str, choices: str) -> str | None:
    """llm-wc@ef7cb496 src/llm_wc/core/mcqa.py `extract_choice_answer` as written (its quadratic fallback
    included): the oracle proctor's linear-time reader must equal."""
    valid = sorted(set(choices))
    for pattern in (r"answer is \(?([A-Z])\)?", r"correct answer is \(?([A-Z])\)?", r"Answer: \(?([A-Z])\)?",
                    r"answer: \(?([A-Z])\)?", r"answer \(?([A-Z])\)?", r"\(([A-Z])\)"):
        match = re.search(pattern, text, re.IGNORECASE)
        if match and match.group(1).upper() in valid:
            return match.group(1).upper()
    alts = "|".join(map(re.escape, valid))
    match = re.search(r"\b(" + alts + r")\b(?!.*\b(" + alts + r")\b)", text, re.IGNORECASE | re.DOTALL)
    return match.group(1).upper() if match else None


@pytest.mark.parametrize(("text", "choices", "answer", "rule"), [
    ("The answer is (C). Later: the answer is (D).", AJ, "C", "answer_is"),  # the first match of a pattern
    ("so THE ANSWER IS (b)", AJ, "B", "answer_is"),  # case-insensitive, the letter uppercased
    ("the answer is the shoot tip.\nThe answer is (B)", AJ, "I", "answer_letter"),  # T refused; "answer i(s)"
    ("The correct answer is a lower rate", AJ, "A", "answer_is"),  # upstream reads the article as a letter
    ("The answer is (E). Between B and E", AD, "B", "fallback_last_choice"),  # E is no GPQA choice
    ("The answer is (K).\nFinal Answer: C", AJ, "C", "Answer_label"),  # K invalid: the next pattern's match
    ("Answer: (K)\nanswer: (C)", AJ, "C", "fallback_last_choice"),  # each pattern sees only its first match
    ("I pick (G), not (A)", AJ, "G", "paren"),  # the first parenthesised letter
    ("Options A and B fit; I'd go with d", AD, "D", "fallback_last_choice"),  # the last lone letter, any case
    ("**The answer is (H)**", AJ, "H", "answer_is"),  # llm-wc removes ** before parsing
    ("No letter here at all.", AJ, None, "none"),
])
def test_llmwc_mcqa_reads_as_upstream(text: str, choices: str, answer: str | None, rule: str) -> None:
    got = read_llmwc_mcqa(text, choices)
    assert (got.answer, got.rule) == (answer, rule)
    assert got.answer == upstream_extract_choice_answer(text, choices)


def test_llmwc_mcqa_records_the_refused_letter() -> None:
    got = read_llmwc_mcqa("The answer is (E), or (B)", AD)
    assert (got.answer, got.rule, got.rejected) == ("B", "fallback_last_choice", "E")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*"abcdeijkABCDEIJK ().:*\n", "answer is ", "Answer: ", "correct ", "answer "]),
                max_size=30).map("".join),
       st.sampled_from([AJ, AD]))
def test_llmwc_mcqa_equals_upstream_on_any_text(text: str, choices: str) -> None:
    assert read_llmwc_mcqa(text, choices).answer == upstream_extract_choice_answer(text.replace("**", ""), choices)


def test_llmwc_fallback_is_linear_on_long_replies() -> None:
    import time

    text = "x a " * 50_000 + "B."
    start = time.perf_counter()
    assert read_llmwc_mcqa(text, AJ).answer == "B"
    assert time.perf_counter() - start < 1.0


def test_llmwc_rule_carries_its_choices_and_source() -> None:
    rule = llmwc_mcqa(AD)
    assert rule.name == LLMWC_MCQA == "llm-wc-mcqa" and rule.kind == "choice"
    assert "llm-wc src/llm_wc/core/mcqa.py@ef7cb496" in rule.source and "ABCD" in rule.source
    assert rule.read("The answer is (E). Between B and E").answer == "B"
    assert llmwc_mcqa(AJ).read("The answer is (E).").answer == "E"
