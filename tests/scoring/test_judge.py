"""LLM-as-judge with a scripted fake model, grade parsing, agreement with exact match, text metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from proctor.core.model import (
    Capability,
    GenerateRequest,
    Generation,
    Model,
    ModelBase,
)
from proctor.data.records import Item
from proctor.log.runlog import JudgeDetails, Outcome
from proctor.scoring.base import Scored
from proctor.scoring.judge import (
    RUBRIC,
    cohens_kappa,
    judge_agreement,
    judge_items,
    judge_prompt,
    parse_grade,
)
from proctor.scoring.text_metrics import bleu, overlap_metrics, rouge_l, rouge_n, token_f1


class ScriptedJudge(ModelBase):
    """A tiny Model: answers each generate request with the next scripted reply."""

    name = "scripted:judge"
    capabilities = frozenset({Capability.GENERATE})

    def __init__(self, replies: Sequence[str | Generation]) -> None:
        self.replies = list(replies)
        self.requests: list[GenerateRequest] = []
        self.calls = 0

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.calls += 1
        self.requests.extend(requests)
        out = []
        for _ in requests:
            r = self.replies.pop(0)
            out.append(r if isinstance(r, Generation) else Generation(text=r))
        return out

    def describe(self) -> dict[str, Any]:
        return {"spec": self.name}


def prose(answer: str = "Love is patient and kind.", **kw: Any) -> Item:
    return Item(
        identifier="p.1", modality="short-prose", prompt="What is love, per 1 Cor 13?", response=answer, **kw
    )


def test_scripted_judge_satisfies_protocol() -> None:
    assert isinstance(ScriptedJudge([]), Model)


@pytest.mark.parametrize(
    ("text", "grade"),
    [
        ("Matches the reference.\nGRADE: CORRECT", "CORRECT"),
        ("Half right.\nGRADE: PARTIALLY_CORRECT\n", "PARTIALLY_CORRECT"),
        ("Wrong.\n**GRADE: INCORRECT**", "INCORRECT"),
        ("grade: correct", "CORRECT"),
        ("GRADE: partially correct", "PARTIALLY_CORRECT"),
        ("First GRADE: INCORRECT\nthen reconsidered\nGRADE: CORRECT", "CORRECT"),
        ("The answer is correct.", None),  # no GRADE line
        ("GRADE: MOSTLY_CORRECT", None),  # unknown grade
        ("GRADE: CORRECT\nActually I am not sure.", None),  # text after the grade
        ("GRADE: CORRECT or INCORRECT", None),
        ("", None),
    ],
)
def test_parse_grade_is_strict(text: str, grade: str | None) -> None:
    assert parse_grade(text) == grade


def test_prompt_has_question_reference_support_candidate_and_rubric() -> None:
    p = judge_prompt(prose(support=["1 Cor 13:4", "1 Cor 13:7"]), "It is kind.")
    for part in (
        "What is love",
        "Love is patient and kind.",
        "1 Cor 13:4",
        "It is kind.",
        RUBRIC.strip()[:40],
    ):
        assert part in p
    assert p.rstrip().endswith("GRADE: INCORRECT")
    assert "Support" not in judge_prompt(prose(), "x")


async def test_judge_items_batched_grades_and_errors() -> None:
    judge = ScriptedJudge(
        [
            "Same meaning.\nGRADE: CORRECT",
            "Omits kindness.\nGRADE: PARTIALLY_CORRECT",
            "Contradicts.\nGRADE: INCORRECT",
            "I think this is fine.",  # unparseable
            Generation(error="HTTP 500 after 5 retries"),
        ]
    )
    it = prose()
    pairs = [
        (it, "Love is kind and patient"),
        (it, "Love is patient"),
        (it, "Love is jealous"),
        (it, "x"),
        (it, "y"),
        (it, "  "),
    ]
    scores = await judge_items(judge, pairs)
    assert judge.calls == 1 and len(judge.requests) == 5  # one batch; the empty answer is not sent
    assert [s.outcome for s in scores] == [
        Outcome.CORRECT,
        Outcome.PARTIAL,
        Outcome.WRONG,
        Outcome.ERROR,
        Outcome.ERROR,
        Outcome.NO_ANSWER,
    ]
    assert [s.score for s in scores] == [1.0, 0.5, 0.0, None, None, 0.0]
    assert scores[0].details.judge_reasoning == "Same meaning."
    assert scores[0].details.judge_grade == "CORRECT"
    assert scores[0].details.token_f1 == pytest.approx(1.0)
    assert scores[3].details.judge_error.endswith("replied without a parseable GRADE line")
    assert scores[3].details.judge_raw == "I think this is fine."
    assert "500" in scores[4].details.judge_error
    assert all(s.extraction_rule == "judge" for s in scores[:5])
    assert judge.requests[0].messages[0].role == "system"
    assert judge.requests[0].settings.temperature == 0.0


async def test_judge_items_empty_batch_makes_no_call() -> None:
    judge = ScriptedJudge([])
    assert await judge_items(judge, []) == []
    assert judge.calls == 0


def test_judge_agreement_rate_and_kappa() -> None:
    c, w = Outcome.CORRECT, Outcome.WRONG
    judge = [c, c, w, w, c, w, c, w, Outcome.ERROR]
    exact = [c, c, w, w, w, w, c, c, c]
    res = judge_agreement(zip(judge, exact))
    assert res.n == 8 and res.n_skipped == 1
    assert res.agreement == pytest.approx(6 / 8)
    # p_o = .75, p_e = (4*4 + 4*4)/64 = .5 → kappa = .5
    assert res.kappa == pytest.approx(0.5)
    assert res.confusion == {
        "correct/correct": 3,
        "correct/wrong": 1,
        "wrong/correct": 1,
        "wrong/wrong": 3,
    }


def test_judge_agreement_accepts_scores_and_bools() -> None:
    s_ok = Scored(Outcome.CORRECT, JudgeDetails(), score=1.0, extracted="A", extraction_rule="judge")
    s_no = Scored(Outcome.NO_ANSWER, JudgeDetails(), score=0.0, extraction_rule="none")
    res = judge_agreement([(s_ok, True), (s_no, False), (s_ok, False)])
    assert res.n == 3 and res.agreement == pytest.approx(2 / 3)


def test_kappa_edge_cases() -> None:
    assert cohens_kappa([], []) is None
    assert cohens_kappa(["a", "a"], ["a", "a"]) is None  # chance agreement is 1
    assert cohens_kappa(["a", "b"], ["a", "b"]) == pytest.approx(1.0)


def test_text_metrics_known_values() -> None:
    assert token_f1("the cat sat", "cat sat down") == pytest.approx(0.8)  # p=1, r=2/3
    assert token_f1("", "") == 1.0
    assert rouge_n("w x y z", "w x y q", 2) == pytest.approx(2 / 3)
    assert rouge_l("x m y n", "m n") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert bleu("one two three four", "one two three four") == pytest.approx(1.0)
    assert bleu("zzz", "one two") == 0.0
    m = overlap_metrics("cat sat", ["dog", "cat sat"])
    assert m["token_f1"] == 1.0 and set(m) == {"token_f1", "rouge1", "rouge2", "rougeL", "bleu"}


def test_a_judge_whose_context_is_too_short_says_so(tiny_model_dir: Any, tmp_path: Any, capsys: Any) -> None:
    """A real local judge (the tiny model, 2,048-token context) given an answer longer than its context: each
    sample is an error naming the judge and the context length, and the console prints that message."""
    import json

    from proctor.cli import main

    long_question = " ".join(["Love is patient and love is kind and it does not envy."] * 400)
    items = tmp_path / "prose.jsonl"
    items.write_text(json.dumps({"identifier": "p.1", "modality": "short-prose", "prompt": long_question,
                                 "response": "Love is patient and kind."}) + "\n", encoding="utf-8")
    code = main(["run", str(items), "--model", "scripted:echo", "--judge", f"hf:{tiny_model_dir}",  # answer = question
                 "-o", str(tmp_path / "run"), "--store", str(tmp_path / "store.sqlite"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1, err  # nothing was scored
    sample = json.loads((tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8"))
    assert sample["outcome"] == "error"
    assert sample["error"].startswith(f"judge hf:{tiny_model_dir} could not grade the answer: prompt has ")
    assert "max_length is 2048" in sample["error"]
    flat = " ".join(err.split())
    assert "1 errored sample (" in flat  # #32.32: one sample, singular and "could not grade the answer" in flat
    assert "1 × judge" in flat and "prompt longer than the model's context, longest" in flat and "> 2,048" in flat  # grouped kind
