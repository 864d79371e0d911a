"""answer_reading: how each number read by TIGER-Lab's three levels was read, on every surface (issue 29):
results.json's block, the console line, the HTML card and the Markdown report. Samples are scored from
synthetic replies by proctor's own scorer, on synthetic rows in MMLU-Pro's schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.benchmarks.mmlu_pro import _question
from proctor.cli.summary import print_results
from proctor.data.formats.convert import question_to_item
from proctor.log.runlog import SAMPLES, Manifest, Sample, write_manifest, write_results
from proctor.metrics.results import summarize
from proctor.report import data, render_html, render_markdown
from proctor.scoring.extract import ANSWER_RULES
from proctor.scoring.scorers import score_item

RULE = ANSWER_RULES["tiger-lab-mmlu-pro"]
REPLIES = [  # (reply, options): each read at one level, right or wrong; the answer is always B
    ("so the answer is (B)", 4),  # level 1, right
    ("the answer is (C)", 4),  # level 1, wrong
    ("Answer: B", 4),  # level 2, right
    ("I would say B", 4),  # level 3, right (the lone B is last)
    ("I think so", 4),  # level 3 reads the pronoun: wrong
    ("no idea", 4),  # unread: 1/4 as a guess
    ("no clue", 2),  # unread: 1/2 as a guess
]


def leveled_samples() -> list[Sample]:
    samples = []
    for i, (reply, k) in enumerate(REPLIES):
        row = {"question_id": i, "question": f"Synthetic {i}?", "options": [f"o{j}" for j in range(k)],
               "answer": "B", "answer_index": 1, "category": "math", "src": "synthetic"}
        item = question_to_item(_question(row), "mmlu-pro")
        v = score_item(item, reply, RULE)
        samples.append(Sample(sample_id=f"{item.identifier}#0", item_id=item.identifier, dataset="mmlu-pro",
                              category="math", modality=item.modality.value, reference="B", raw_output=reply,
                              extracted=v.extracted, extraction_rule=v.extraction_rule, score=v.score,
                              outcome=v.outcome, details=v.details, ambiguous=v.ambiguous))
    return samples


def test_levels_shares_and_the_four_accuracies() -> None:
    samples = leveled_samples()
    levels = [s.details.readings.reference.level for s in samples]  # type: ignore[union-attr]
    assert levels == [1, 1, 2, 3, 3, None, None]
    a = summarize(samples, no_answer="guess").answer_reading
    assert a is not None and a.rule == "tiger-lab-mmlu-pro" and a.n == 7
    assert a.by_level == {"1": 2, "2": 1, "3": 2, "none": 2}
    assert a.accuracy == pytest.approx((1 + 0 + 1 + 1 + 0 + 1 / 4 + 1 / 2) / 7)
    assert (a.fallback_share, a.guess_share) == (pytest.approx(2 / 7), pytest.approx(2 / 7))
    assert a.strict_accuracy == pytest.approx(2 / 7)  # levels 1-2 right only
    # proctor's reader: B, C, B, then nothing it accepts (a lone letter must end the reply on its own line)
    robust = [s.details.readings.robust.score for s in samples]  # type: ignore[union-attr]
    assert a.robust_accuracy == pytest.approx(sum(r or 0.0 for r in robust) / 7)
    strict = summarize(samples, no_answer="wrong")
    assert strict.answer_reading is not None and strict.answer_reading.guess_share == 0.0
    assert strict.answer_reading.accuracy == pytest.approx(3 / 7) == strict.overall.accuracy


def test_a_rule_without_levels_has_no_block() -> None:
    item = question_to_item(_question({"question_id": 1, "question": "Q?", "options": ["a", "b"], "answer": "B",
                                       "answer_index": 1, "category": "math", "src": ""}), "mmlu-pro")
    v = score_item(item, "the answer is (B)", ANSWER_RULES["gpqa-baselines"])
    sample = Sample(sample_id="x#0", item_id="x", dataset="d", modality="choiceof2", score=v.score,
                    outcome=v.outcome, details=v.details)
    assert summarize([sample]).answer_reading is None


def _without_level(s: Sample) -> Sample:
    readings = s.details.readings  # type: ignore[union-attr]
    reference = readings.reference.model_copy(update={"level": None})
    details = s.details.model_copy(update={"readings": readings.model_copy(update={"reference": reference})})
    return s.model_copy(update={"details": details})


def test_samples_from_before_the_levels_have_no_block() -> None:
    """A run recorded before levels were (a reading with an answer but no level) is not guessed at."""
    assert summarize([_without_level(s) for s in leveled_samples()]).answer_reading is None


def _run_dir(root: Path) -> Path:
    d = root / "run"
    d.mkdir()
    samples = leveled_samples()
    write_manifest(d, Manifest(run_id="r", proctor_version="0", dataset={"name": "mmlu-pro"},
                               model={"spec": "scripted:x"}, mode="generate", prompt_kind="five_shot",
                               answer_rule=RULE.name, no_answer="guess", started_at="2026-01-01T00:00:00+00:00"))
    (d / SAMPLES).write_text("".join(s.model_dump_json() + "\n" for s in samples))
    write_results(d, summarize(samples, no_answer="guess"))
    return d


def test_results_console_html_and_markdown_show_how_it_was_read(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_dir(tmp_path)
    report = data.load([run], history=[])
    md = " ".join(render_markdown(report).split())
    assert "read by tiger-lab-mmlu-pro: authors' accuracy 53.6% (unread counted guess)" in md
    assert "28.6% read only by the lone-letter fallback, 28.6% credited as guesses" in md
    assert "strict 28.6%" in md
    html = render_html(report)
    assert "read by tiger-lab-mmlu-pro" in html and "fallback 28.6%" in html and "strict 28.6%" in html
    print_results(report.runs[0].log)
    printed = " ".join(capsys.readouterr().out.split())
    assert "read by tiger-lab-mmlu-pro: authors' accuracy 53.6%" in printed and "robust 28.6%" in printed
