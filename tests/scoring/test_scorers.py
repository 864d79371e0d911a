"""A scorer for every Item modality."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.data.records import GradedAnswer, Item, Modality
from proctor.log.runlog import Outcome
from proctor.scoring.base import Scored
from proctor.scoring.extract import ANSWER_RULES
from proctor.scoring.scorers import is_numeric_item, outcome_for, reference_of, score_item


def item(modality: str, response: Any, prompt: str = "Question?", **kw: Any) -> Item:
    return Item(identifier="t.1", modality=modality, prompt=prompt, response=response, **kw)


def check(s: Scored, outcome: Outcome, score: float | None, extracted: str | None = None) -> None:
    assert s.outcome is outcome
    assert s.score == score
    if extracted is not None:
        assert s.extracted == extracted


@pytest.mark.parametrize(
    ("response", "text", "outcome"),
    [
        ("True", "true.", Outcome.CORRECT),
        ("True", "Yes!", Outcome.CORRECT),
        ("False", "NO", Outcome.CORRECT),
        ("False", "True", Outcome.WRONG),
        (True, "TRUE", Outcome.CORRECT),  # JSON true in the item
        ("True", "It depends.", Outcome.NO_ANSWER),
    ],
)
def test_boolean(response: Any, text: str, outcome: Outcome) -> None:
    s = score_item(item("boolean", response), text)
    assert s.outcome is outcome
    assert s.score == (1.0 if outcome is Outcome.CORRECT else 0.0)


@pytest.mark.parametrize(
    ("response", "text", "outcome"),
    [
        ("I don't know", "Unknown", Outcome.CORRECT),
        ("Unknown", "I don't know.", Outcome.CORRECT),  # CommonEval code spelling in the item
        ("I don't know", "not sure", Outcome.CORRECT),
        ("True", "I don't know", Outcome.WRONG),
        ("False", "false", Outcome.CORRECT),
        ("False", "maybe", Outcome.NO_ANSWER),
    ],
)
def test_ternary(response: str, text: str, outcome: Outcome) -> None:
    assert score_item(item("ternary", response), text).outcome is outcome


def test_choice_ten_options_and_rejection() -> None:
    it = item("choiceof10", "J", choices={k: f"opt {k}" for k in "ABCDEFGHIJ"})
    check(score_item(it, "The answer is (J)"), Outcome.CORRECT, 1.0, "J")
    check(score_item(it, "The answer is (C)"), Outcome.WRONG, 0.0, "C")
    s = score_item(it, "The answer is (K)")
    check(s, Outcome.NO_ANSWER, 0.0)
    assert s.extracted is None and s.extraction_rule == "none" and s.details.rejected == "K"


def test_choice_four_records_rule() -> None:
    s = score_item(item("choiceof4", "B"), "**Answer: B**")
    check(s, Outcome.CORRECT, 1.0, "B")
    assert s.extraction_rule == "answer_label"
    assert s.details.accepted == ["B"]


def test_choice_graded_credit() -> None:
    graded = [GradedAnswer(answer="A", credit=1.0), GradedAnswer(answer="B", credit=0.5)]
    it = item("choiceof3", graded)
    check(score_item(it, "Answer: A"), Outcome.CORRECT, 1.0)
    check(score_item(it, "Answer: B"), Outcome.PARTIAL, 0.5)
    check(score_item(it, "Answer: C"), Outcome.WRONG, 0.0)


@pytest.mark.parametrize(
    ("text", "outcome", "score"),
    [
        ("Faith", Outcome.CORRECT, 1.0),
        ('Answer: "faith."', Outcome.CORRECT, 1.0),
        ("belief", Outcome.PARTIAL, 0.5),  # graded
        ("trust", Outcome.WRONG, 0.0),  # explicitly zero credit
        ("hope", Outcome.WRONG, 0.0),
        ("", Outcome.NO_ANSWER, 0.0),
    ],
)
def test_cloze_graded(text: str, outcome: Outcome, score: float) -> None:
    graded = [
        GradedAnswer(answer="faith", credit=1.0),
        GradedAnswer(answer="belief", credit=0.5),
        GradedAnswer(answer="trust", credit=0.0),
    ]
    it = item("cloze", graded, prompt="Three virtues are ___, hope, and love.")
    check(score_item(it, text), outcome, score)


def test_cloze_best_matching_credit_wins() -> None:
    graded = [GradedAnswer(answer="Paris", credit=0.5), GradedAnswer(answer="paris.", credit=1.0)]
    check(score_item(item("cloze", graded, prompt="Capital: ___"), "PARIS"), Outcome.CORRECT, 1.0)


def test_single_value_matches_any_accepted_response() -> None:
    graded = [GradedAnswer(answer="Peter"), GradedAnswer(answer="Simon Peter")]
    it = item("single-value", graded)
    assert score_item(it, "Simon Peter.").correct
    assert score_item(it, "The answer is: peter").correct
    assert not score_item(it, "Andrew").correct


@pytest.mark.parametrize(
    ("text", "outcome", "extracted"),
    [
        (r"... so \boxed{011}", Outcome.CORRECT, "11"),
        (r"\boxed{11}", Outcome.CORRECT, "11"),
        (r"\boxed{711}", Outcome.WRONG, "711"),
        ("The answer is 11.", Outcome.CORRECT, "11"),
        (r"first \boxed{11} then \boxed{12}", Outcome.WRONG, "12"),
        ("no digits here", Outcome.NO_ANSWER, None),
    ],
)
def test_aime_numeric(text: str, outcome: Outcome, extracted: str | None) -> None:
    it = item("single-value", "11")
    assert is_numeric_item(it)
    s = score_item(it, text)
    assert s.outcome is outcome and s.extracted == extracted
    assert s.details.compare == "numeric"


def test_numeric_with_leading_zero_reference() -> None:
    assert score_item(item("single-value", "011"), "The answer is 11").correct


def test_text_item_is_not_numeric() -> None:
    assert not is_numeric_item(item("single-value", "Jerusalem"))


@pytest.mark.parametrize("modality", ["short-prose", "long-prose"])
def test_prose_needs_judge(modality: str) -> None:
    it = item(modality, "Love is patient and kind.")
    s = score_item(it, "Love is kind and patient.")
    assert s.needs_judge and s.outcome is Outcome.UNSCORED and s.score is None
    assert s.details.token_f1 == pytest.approx(1.0)
    assert 0 < s.details.rouge2 < 1
    empty = score_item(it, "   ")
    assert empty.outcome is Outcome.NO_ANSWER and not empty.needs_judge


def test_every_modality_has_a_scorer() -> None:
    for m in Modality:
        if m.is_choice:
            it = item(m.value, "A")
        elif m in (Modality.BOOLEAN, Modality.TERNARY):
            it = item(m.value, "True")
        elif m is Modality.CLOZE:
            it = item(m.value, "x", prompt="fill ___")
        else:
            it = item(m.value, "x")
        s = score_item(
            it, "A" if m.is_choice else "True" if m in (Modality.BOOLEAN, Modality.TERNARY) else "x"
        )
        assert s.outcome in (Outcome.CORRECT, Outcome.UNSCORED), m


def test_outcome_for_and_reference() -> None:
    assert [outcome_for(c) for c in (1.0, 0.3, 0.0)] == [Outcome.CORRECT, Outcome.PARTIAL, Outcome.WRONG]
    assert reference_of(item("choiceof2", "B")) == "B"
    graded = [GradedAnswer(answer="A", credit=1.0), GradedAnswer(answer="B", credit=0.5)]
    assert reference_of(item("choiceof2", graded)) == [
        {"answer": "A", "credit": 1.0},
        {"answer": "B", "credit": 0.5},
    ]


# ---------------------------------------------------------------- reference rule beside proctor's reader

TIGER = ANSWER_RULES["tiger-lab-mmlu-pro"]
RAMBLE = "The answer is (C).\n\nQuestion: next?\nAnswer: Let's think step by step. The answer is (B)."


def _choices(n: int) -> dict[str, str]:
    return {letter: f"option {letter}" for letter in "ABCDEFGHIJ"[:n]}


def test_reference_rule_scores_by_default_and_keeps_both_readings() -> None:
    it = item("choiceof10", "C", choices=_choices(10))
    s = score_item(it, RAMBLE, TIGER)
    check(s, Outcome.CORRECT, 1.0, "C")
    assert s.extraction_rule == "answer_is_first" and s.ambiguous is True
    readings = s.details.readings
    assert readings is not None and readings.scored_by == "reference"
    assert (readings.reference.reader, readings.reference.answer) == ("tiger-lab-mmlu-pro", "C")
    assert (readings.robust.reader, readings.robust.answer, readings.robust.rule) == ("proctor", "B", "answer_is")


def test_extract_robust_scores_by_proctors_reader() -> None:
    it = item("choiceof10", "C", choices=_choices(10))
    s = score_item(it, RAMBLE, TIGER, extract="robust")
    check(s, Outcome.WRONG, 0.0, "B")
    assert s.ambiguous is True and s.details.readings.scored_by == "robust"


def test_readings_that_agree_are_not_ambiguous_and_no_rule_means_one_reader() -> None:
    it = item("choiceof4", "A", choices=_choices(4))
    assert score_item(it, "The answer is (A)", TIGER).ambiguous is False
    assert score_item(it, "nothing here", TIGER).ambiguous is False  # neither found one
    plain = score_item(it, RAMBLE)
    assert plain.ambiguous is None and plain.details.readings is None


def test_reference_letter_outside_the_options_is_wrong_as_upstream_scores_it() -> None:
    """TIGER-Lab's regex takes A-J whatever the option count; a 1-option item answered (J) is wrong."""
    it = item("choiceof1", "A", choices={"A": "the only option"})
    s = score_item(it, "The answer is (J)", TIGER)
    check(s, Outcome.WRONG, 0.0, "J")
    assert s.ambiguous is True  # proctor's reader refuses J for a 1-option item


def test_number_rule_reads_only_numeric_items() -> None:
    aime = ANSWER_RULES["matharena-aime"]
    it = item("single-value", "11")
    s = score_item(it, "so \\boxed{11.0}", aime)
    check(s, Outcome.WRONG, 0.0, "11.0")  # llm-wc: not a digit string, so wrong
    assert s.ambiguous is True  # the same number, scored otherwise
    assert score_item(it, "so \\boxed{11.0}", aime, extract="robust").correct
    assert score_item(it, "so \\boxed{011}", aime).ambiguous is False
    text_item = item("single-value", "Paris")
    assert score_item(text_item, "Paris", aime).ambiguous is None
    assert score_item(item("choiceof4", "A", choices=_choices(4)), "(A)", aime).ambiguous is None
