"""The per-benchmark judge hook: a benchmark's own prompt and parser replace the generic judge's, only for it."""

from __future__ import annotations

import asyncio

from proctor.core.model import Generation
from proctor.data.records import Item
from proctor.log.runlog import Outcome
from proctor.scoring import hle, simpleqa
from proctor.scoring.judge import JUDGE_SYSTEM, benchmark_judge, judge_items, judged_rule
from scoring.test_judge import ScriptedJudge


def item() -> Item:
    return Item(identifier="s.1", modality="single-value", prompt="Who won the Zeta Medal?", response="Ada Quill")


def test_the_benchmark_judge_asks_its_own_prompt_and_reads_its_own_verdict() -> None:
    judge = ScriptedJudge(["B", "GRADE: CORRECT"])
    (mine,) = asyncio.run(judge_items(judge, [(item(), "Ida Venn")], bench=simpleqa.JUDGE))
    (generic,) = asyncio.run(judge_items(judge, [(item(), "Ida Venn")]))
    first, second = judge.requests
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.messages[0].content == simpleqa.GRADER_SYSTEM and first.messages[1].content == \
        simpleqa.JUDGE.prompt(item(), "Ida Venn")
    assert second.messages[0].content == JUDGE_SYSTEM  # the generic judge is untouched
    assert (mine.outcome, mine.details.get("judge_grade"), mine.details.get("judge_version")) == \
        (Outcome.WRONG, "B", "simple-evals-simpleqa")
    assert generic.outcome is Outcome.CORRECT and generic.details.get("judge_version") == "proctor-judge/1"


def test_an_empty_reply_is_judged_by_the_benchmark_judge_only() -> None:
    judge = ScriptedJudge(["C"])
    (mine,) = asyncio.run(judge_items(judge, [(item(), "  ")], bench=simpleqa.JUDGE))
    assert judge.calls == 1 and mine.outcome is Outcome.WRONG and mine.details.get("judge_grade") == "C"
    (generic,) = asyncio.run(judge_items(judge, [(item(), "  ")]))
    assert judge.calls == 1 and generic.outcome is Outcome.NO_ANSWER


def test_a_failed_or_unreadable_judgement_is_an_error() -> None:
    judge = ScriptedJudge([Generation(error="HTTP 500"), "no verdict here"])
    failed, unreadable = asyncio.run(judge_items(judge, [(item(), "x"), (item(), "y")], bench=hle.JUDGE))
    assert failed.outcome is Outcome.ERROR and "HTTP 500" in (failed.error or "")
    assert unreadable.outcome is Outcome.ERROR and "hle-judge" in (unreadable.error or "")


def test_the_rule_carries_the_judge_and_its_identity_hashes_the_template() -> None:
    rule = judged_rule(hle.JUDGE)
    assert benchmark_judge(rule) is hle.JUDGE and benchmark_judge(None) is None
    assert rule.name == "hle-judge" and rule.score_whole is not None
    pending = rule.score_whole(item(), "Answer: Ada")
    assert pending.needs_judge and pending.outcome is Outcome.UNSCORED
    assert hle.JUDGE.identity()["judge_template"] == "sha256:" + hle.JUDGE_PROMPT_SHA256
    assert simpleqa.JUDGE.identity()["judge_template"] == "sha256:" + simpleqa.TEMPLATE_SHA256
