"""Choice items written to the spec (options lettered in the prompt, no `choices`) in log-likelihood mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.core.model import Loglikelihood
from proctor.data.records import Item, Modality, parse_lettered_options
from proctor.scoring.choice_logprob import choice_requests, logprob_options, score_choices

PROMPT = "Which is a continent?\nA) Greenland\nB) Australia\nC) Borneo\nAnswer with the letter only."


def _ll(logprob: float, text: str) -> Loglikelihood:
    return Loglikelihood(logprob=logprob, n_tokens=1, is_greedy=False)


@pytest.mark.parametrize(("prompt", "expected"), [
    (PROMPT, {"A": "Greenland", "B": "Australia", "C": "Borneo"}),
    ("Pick: (A) red (B) blue (C) green", {"A": "red", "B": "blue", "C": "green"}),
    ("Pick one.\nA. red\nB. blue\nC: green\n", {"A": "red", "B": "blue", "C": "green"}),
    ("A) only two\nB) here", None),  # three letters expected
    ("No options at all", None),
])
def test_parse_lettered_options(prompt: str, expected: dict[str, str] | None) -> None:
    assert parse_lettered_options(prompt, "ABC") == expected


def test_letters_are_scored_for_acc_and_option_texts_for_acc_norm() -> None:
    item = Item(identifier="q", modality=Modality.CHOICE3, prompt=PROMPT, response="B")
    assert logprob_options(item) == {"A": "A", "B": "B", "C": "C"}
    requests = choice_requests(item, "ctx")
    assert [r.continuation for r in requests] == [" A", " B", " C", " Greenland", " Australia", " Borneo"]
    # letters: A wins (acc wrong); texts per character: Australia wins (acc_norm right)
    results = [_ll(-1.0, "A"), _ll(-2.0, "B"), _ll(-3.0, "C"), _ll(-90.0, ""), _ll(-9.0, ""), _ll(-60.0, "")]
    predicted, acc, acc_norm, details = score_choices(item, results)
    assert (predicted, acc, acc_norm) == ("A", False, True) and details["predicted_norm"] == "B"


def test_without_lettered_options_both_metrics_use_the_letters() -> None:
    item = Item(identifier="q", modality=Modality.CHOICE2, prompt="Left or right? Say A or B.", response="A")
    assert [r.continuation for r in choice_requests(item, "ctx")] == [" A", " B"]
    predicted, acc, acc_norm, _ = score_choices(item, [_ll(-1.0, ""), _ll(-2.0, "")])
    assert (predicted, acc, acc_norm) == ("A", True, True)


def test_an_error_on_an_option_text_leaves_the_item_unscored() -> None:
    item = Item(identifier="q", modality=Modality.CHOICE3, prompt=PROMPT, response="B")
    results = [_ll(-1.0, ""), _ll(-2.0, ""), _ll(-3.0, ""), _ll(-1.0, ""),
               Loglikelihood(logprob=0.0, n_tokens=0, is_greedy=False, error="timeout"), _ll(-1.0, "")]
    assert score_choices(item, results)[:3] == (None, None, None)


def test_spec_style_items_run_in_logprob_mode(tiny_model_dir: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """They were refused: `needs closed-set items … 4 are not`."""
    items = tmp_path / "spec.jsonl"
    rows = [{"identifier": f"q{i}", "modality": "choiceof3", "prompt": PROMPT, "response": "ABC"[i % 3]}
            for i in range(3)]
    rows.append({"identifier": "q9", "modality": "choiceof2", "prompt": "Is 2 even? Say A for yes, B for no.",
                 "response": "A"})
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    code = main(["run", str(items), "--model", f"hf:{tiny_model_dir}", "--mode", "logprob", "-o", str(out),
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    run_dir = out  # one dataset: -o is the run directory
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 4 and all(s["extracted"] in ("A", "B", "C") for s in samples)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["overall"]["n_scored"] == 4
