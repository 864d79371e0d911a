"""The `lm-eval` prompt kind and answer rule against lm-evaluation-harness's own `mmlu_pro` tasks (issue 29):
lm-eval builds its tasks offline from its installed task files on synthetic rows in MMLU-Pro's exact schema;
proctor's prompt must equal its context byte for byte, and proctor's score its exact_match after its filter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from import_sources import needs

from proctor.benchmarks import load_task
from proctor.benchmarks.mmlu_pro import LMEVAL
from proctor.scoring.extract import ANSWER_RULES, LMEVAL_VERSION
from proctor.scoring.scorers import score_item

HERE = Path(__file__).parent
REPLIES = [
    "Let's see. the answer is (B).", "The answer is B", "so the answer is (b)", "Answer: C", "the answer is (Z)",
    "", "first the answer is (A), then the answer is (C)", "I think so", "answer is (J)", "the answer is  (B)",
    "the answer is (D)",
]


def _row(qid: int, category: str, options: list[str], index: int, cot: str = "") -> dict[str, Any]:
    return {"question_id": qid, "question": f" Synthetic {category} question {qid}?\n", "options": options,
            "answer": "ABCDEFGHIJ"[index], "answer_index": index, "cot_content": cot, "category": category,
            "src": "synthetic"}


def _data(folder: Path) -> Path:
    folder.mkdir()
    test = [
        _row(1, "math", [" a ", "b", "c", "N/A", "N/A"], 1),  # options padded and spaced, as some real rows
        _row(2, "math", [f"opt {i}" for i in range(10)], 9),
        _row(3, "computer science", ["x", "y"], 0),
        _row(4, "law", ["only"], 0),
        _row(5, "math", ["a", "N/A", "c", "d"], 3),  # "N/A" mid-list: lm-eval's D is proctor's C
    ]
    val = [_row(10 + i, cat, ["p", "q", "N/A"] if i == 1 else ["p", "q"], 1,
                f"A: Let's think step by step. Step {i} of {cat}. The answer is (B).")
           for cat, n in (("math", 6), ("computer science", 6), ("law", 5)) for i in range(n)]  # lm-eval takes 5
    for name, rows in (("test", test), ("validation", val)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    needs("lm_eval")
    root = tmp_path_factory.mktemp("lmeval_mmlu_pro")
    data = _data(root / "data")
    (replies := root / "replies.json").write_text(json.dumps(REPLIES))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(root / "hf")}
    done = subprocess.run([sys.executable, str(HERE / "lmeval_mmlu_pro_oracle.py"), str(data), str(replies),
                           str(root / "out.json")], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return data, json.loads((root / "out.json").read_text())


def test_prompt_bytes_equal_lm_evals(oracle: tuple[Path, dict[str, Any]]) -> None:
    data, out = oracle
    task = load_task("mmlu-pro", data_file=data)
    assert LMEVAL in task.prompts.kinds
    rendered = {it.identifier.split(".")[-1]: task.prompts.messages(it, LMEVAL)[-1].content for it in task.items}
    assert set(rendered) == set(out["prompts"]) == {"1", "2", "3", "4", "5"}
    for qid, theirs in out["prompts"].items():
        assert rendered[qid] == theirs, qid
    assert "C. c\nD. N/A\n" in rendered["1"] and rendered["1"].count("Question:") == 6  # five examples + the question


def test_scores_equal_lm_evals_filter_and_exact_match(oracle: tuple[Path, dict[str, Any]]) -> None:
    data, out = oracle
    task = load_task("mmlu-pro", data_file=data)
    rule = task.answer_rule(LMEVAL)
    assert rule is ANSWER_RULES["lm-eval-mmlu-pro"] and rule.no_answer == "wrong" and LMEVAL_VERSION in rule.source
    for item in task.items:
        theirs = out["scores"][item.identifier.split(".")[-1]]
        mine = [score_item(item, reply, rule).score for reply in REPLIES]
        assert mine == theirs, item.identifier
    padded = next(it for it in task.items if it.identifier.endswith(".5"))
    assert padded.response == "C" and score_item(padded, "the answer is (D)", rule).score == 1.0
    assert score_item(padded, "the answer is (B)", rule).extracted == "N/A"  # the padding itself: wrong


def test_lm_eval_kind_stops_and_budgets_as_lm_eval(oracle: tuple[Path, dict[str, Any]]) -> None:
    data, _ = oracle
    defaults = load_task("mmlu-pro", data_file=data).prompts.request_defaults(LMEVAL)  # type: ignore[attr-defined]
    assert (defaults.stop, defaults.max_tokens) == (("Question:",), 2048)


def test_installed_lm_eval_is_the_pinned_version() -> None:
    needs("lm_eval")
    from importlib.metadata import version

    assert version("lm_eval") == LMEVAL_VERSION
