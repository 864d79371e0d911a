"""IFEval against lm-eval's ifeval task: every instruction id lm-eval registers, on synthetic rows in google/IFEval's
schema (kwargs filled the way the Hub's parquet fills them, None where unused), each answered by replies proctor
did not shape for it; proctor's verdicts and four metrics equal lm-eval's `process_results` and aggregation."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from nltk_punkt import punkt_dir

from proctor.benchmarks.registry import load_task
from proctor.cli import main
from proctor.scoring import ifeval as proctor_ifeval
from proctor.util.errors import ProctorError

REPLIES = [
    "",
    "Dear reader, THIS IS ALL CAPS AND ENDS HERE. Is there anything else I can help with?",
    "my answer is yes.\n\n***\n\nsecond paragraph, in lower case, with a comma.\nP.S. one more thing",
    '"Quoted answer: the cat sat on the mat, and the dog, too."',
    "<<A Title>>\n* first bullet\n* second bullet\n* third bullet\nSECTION 1\nPart one [address] *highlighted*",
    '```json\n{"answer": "cats", "count": 3}\n```',
    "Le chat est sur la table et il dort toute la journée parce qu'il est fatigué.",
    "Cats are great. Dogs are loyal. Birds sing. Fish swim. Mr. Smith agrees! Does he? Yes.\n\nParagraph two.",
    "My answer is no.",
    "Section 1\nThe quick brown fox jumps over the lazy dog " * 12 + "\nP.P.S done",
    "*bold start*\nA reply whose first and last lines are decoration.\n*bold end*",
    "Any other questions?",
]


@pytest.fixture
def punkt(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """nltk's data path with the stand-in punkt_tab first (set before lm-eval's checkers are imported)."""
    import nltk

    root = punkt_dir(tmp_path_factory.mktemp("nltk"))
    monkeypatch.setattr(nltk.data, "path", [str(root), *nltk.data.path])
    return root


def _instruction_rows() -> list[dict[str, Any]]:
    """One row per instruction id, then rows of several: kwargs drawn by lm-eval's own checkers
    (`build_description` with a seeded random), the prompt made from their descriptions."""
    registry = proctor_ifeval.require_checkers()
    random.seed(37)
    built: list[tuple[str, dict[str, Any], str]] = []
    for iid, cls in sorted(registry.items()):
        checker = cls(iid)
        description = checker.build_description(prompt_to_repeat="Write about cats.") if iid == "combination:repeat_prompt" \
            else checker.build_description()
        built.append((iid, dict(checker.get_instruction_args() or {}), description))
    names = sorted({k for _, kw, _ in built for k in kw})
    singles = [[b] for b in built]
    combos = [[built[i], built[(i * 7 + 3) % len(built)]] for i in range(0, len(built), 3)]
    rows = []
    for key, group in enumerate(singles + combos, start=1000):
        ids = list(dict.fromkeys(iid for iid, _, _ in group))
        kept = [g for g in group if g[0] in ids][: len(ids)]
        rows.append({"key": key, "prompt": "Write about cats. " + " ".join(d for _, _, d in kept),
                     "instruction_id_list": ids,
                     "kwargs": [{n: kw.get(n) for n in names} for _, kw, _ in kept]})
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_every_instruction_id_equals_lmeval(punkt: Path, tmp_path: Path) -> None:
    from lm_eval.tasks.ifeval import utils as lm

    rows = _instruction_rows()
    task = load_task("ifeval", data_file=_write(tmp_path / "ifeval.jsonl", rows))
    rule = task.answer_rule("zero_shot")
    assert rule is not None and rule.score_whole is not None
    ids = {i for r in rows for i in r["instruction_id_list"]}
    assert ids == set(proctor_ifeval.require_checkers())  # every id lm-eval registers
    compared = 0
    for row, item in zip(rows, task.items, strict=True):
        (message,) = task.prompts.messages(item, "zero_shot")
        assert message.content == row["prompt"]
        inp = lm.InputExample(key=row["key"], instruction_id_list=row["instruction_id_list"], prompt=row["prompt"],
                              kwargs=row["kwargs"])
        for reply in REPLIES:
            strict, loose = lm.test_instruction_following_strict(inp, reply), lm.test_instruction_following_loose(inp, reply)
            verdict = rule.score_whole(item, reply)
            checks = verdict.details.get("instructions")
            assert [c.strict for c in checks] == strict.follow_instruction_list, (row["instruction_id_list"], reply)
            assert [c.loose for c in checks] == loose.follow_instruction_list, (row["instruction_id_list"], reply)
            assert verdict.score == float(strict.follow_all_instructions)
            compared += len(checks)
    assert compared > 300


def test_a_run_reports_lmevals_four_metrics(punkt: Path, tmp_path: Path) -> None:
    from lm_eval.tasks.ifeval import utils as lm

    rows = _instruction_rows()
    replies = {r["prompt"]: REPLIES[i % len(REPLIES)] for i, r in enumerate(rows)}
    script = _write(tmp_path / "replies.jsonl", [{"prompt": p, "answer": a} for p, a in replies.items()])
    out = tmp_path / "run"
    assert main(["run", "ifeval", "--data-file", str(_write(tmp_path / "ifeval.jsonl", rows)), "--model",
                 f"scripted:file={script}", "-o", str(out), "--no-history"]) == 0
    metrics = json.loads((out / "results.json").read_text())["metrics"]
    per_doc = [lm.process_results(r, [replies[r["prompt"]]]) for r in rows]
    expected = {
        "ifeval_prompt_level_strict_acc": sum(d["prompt_level_strict_acc"] for d in per_doc) / len(rows),
        "ifeval_prompt_level_loose_acc": sum(d["prompt_level_loose_acc"] for d in per_doc) / len(rows),
        "ifeval_inst_level_strict_acc": lm.agg_inst_level_acc([d["inst_level_strict_acc"] for d in per_doc]),
        "ifeval_inst_level_loose_acc": lm.agg_inst_level_acc([d["inst_level_loose_acc"] for d in per_doc]),
    }
    assert {k: metrics[k]["value"] for k in expected} == pytest.approx(expected)
    assert 0 < expected["ifeval_inst_level_loose_acc"] < 1


def test_bad_rows_are_one_line(punkt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = _instruction_rows()[0]
    cases = {"missing": {k: v for k, v in row.items() if k != "kwargs"},
             "unknown": row | {"instruction_id_list": ["nope:not_an_instruction"]}}
    for name, bad in cases.items():
        path = _write(tmp_path / f"{name}.jsonl", [bad])
        assert main(["run", "ifeval", "--data-file", str(path), "--model", "scripted:first", "--no-history",
                     "-o", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(path) in err, err
        assert ("kwargs" in err) if name == "missing" else ("no checker" in err)


def test_without_punkt_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    with pytest.raises(ProctorError, match="punkt_tab"):
        proctor_ifeval.require_checkers()


def test_offline_hub_is_one_line(punkt: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROCTOR_OFFLINE", "1")
    assert main(["run", "ifeval", "--model", "scripted:first", "--no-history"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "google/IFEval" in err and "--data-file" in err


def test_the_run_id_covers_the_rule(punkt: Path, tmp_path: Path) -> None:
    from proctor.api import eval_spec
    from proctor.run.resolve import resolve

    data = _write(tmp_path / "ifeval.jsonl", _instruction_rows()[:3])
    spec = resolve(eval_spec("ifeval", "scripted:first", data_file=str(data)))
    assert spec.scorer.answer_rule == "lm-eval-ifeval" and spec.generation.max_tokens == 1280
    other = resolve(eval_spec("ifeval", "scripted:first", data_file=str(data), max_tokens=64))
    assert spec.run_id() != other.run_id()


def test_language_checks_are_reproducible(punkt: Path, tmp_path: Path) -> None:
    """langdetect draws at random unless seeded (lm-eval leaves it so): proctor's verdicts do not flip."""
    row = {"key": 1, "prompt": "Answer in capitals.", "instruction_id_list": ["change_case:english_capital"],
           "kwargs": [{}]}
    (item,) = load_task("ifeval", data_file=_write(tmp_path / "row.jsonl", [row])).items
    rule = load_task("ifeval", data_file=tmp_path / "row.jsonl").answer_rule("zero_shot")
    assert rule is not None and rule.score_whole is not None
    verdicts = {rule.score_whole(item, "ALL CAPS REPLY, WITH A COMMA.").score for _ in range(30)}
    assert len(verdicts) == 1


LETTER_ROWS = [  # google/IFEval's schema; the first two ask for a non-letter, as rows 1122 and 1129 upstream
    {"key": 1122, "prompt": "Use the character # at least 4 times.", "instruction_id_list": ["keywords:letter_frequency"],
     "kwargs": [{"letter": "#", "let_frequency": 4, "let_relation": "at least"}]},
    {"key": 1129, "prompt": "Use ! less than 2 times. Answer in lower case.",
     "instruction_id_list": ["keywords:letter_frequency", "change_case:english_lowercase"],
     "kwargs": [{"letter": "!", "let_frequency": 2, "let_relation": "less than"}, {}]},
    {"key": 7, "prompt": "Use the letter q at least 2 times.", "instruction_id_list": ["keywords:letter_frequency"],
     "kwargs": [{"letter": "q", "let_frequency": 2, "let_relation": "at least"}]},
]
LETTER_REPLIES = ["#### done", "wow! great!", "quite a quiz", "abcdefghijklm " * 3, "NOPQRSTUVWXYZ " * 2]


def _four(rule: Any, items: list[Any]) -> tuple[float, ...]:
    """The four IFEval metrics of every item answered with every reply (lm-eval's aggregation)."""
    checks = [rule.score_whole(it, reply).details.get("instructions") for it in items for reply in LETTER_REPLIES]
    return (sum(all(c.strict for c in cs) for cs in checks) / len(checks),
            sum(all(c.loose for c in cs) for cs in checks) / len(checks),
            sum(c.strict for cs in checks for c in cs) / sum(map(len, checks)),
            sum(c.loose for cs in checks for c in cs) / sum(map(len, checks)))


def test_letter_draws_are_seeded_so_the_four_metrics_repeat(punkt: Path, tmp_path: Path) -> None:
    """lm-eval checks a random letter for `#` (unseeded `random.choice`); proctor seeds the draw per instruction:
    the four metrics are identical across 10 runs whatever the global random state, and rows without a draw
    equal lm-eval's own checker."""
    from lm_eval.tasks.ifeval import utils as lm

    task = load_task("ifeval", data_file=_write(tmp_path / "rows.jsonl", LETTER_ROWS))
    rule = task.answer_rule("zero_shot")
    runs = set()
    for i in range(10):
        random.seed(i)
        runs.add(_four(rule, task.items))
    assert len(runs) == 1
    upstream = set()
    for i in range(40):  # lm-eval's own verdict on the `#` row moves with the global random state
        random.seed(i)
        inp = lm.InputExample(key=1122, instruction_id_list=["keywords:letter_frequency"], prompt="p",
                              kwargs=LETTER_ROWS[0]["kwargs"])
        upstream.add(lm.test_instruction_following_strict(inp, "aaaa bbbb cccc dddd eeee").follow_all_instructions)
    assert upstream == {True, False}
    deterministic = task.items[2]
    for reply in LETTER_REPLIES:
        expected = lm.process_results(LETTER_ROWS[2], [reply])
        checks = rule.score_whole(deterministic, reply).details.get("instructions")
        assert [c.strict for c in checks] == expected["inst_level_strict_acc"]
        assert [c.loose for c in checks] == expected["inst_level_loose_acc"]
        assert checks[0].counted_strict is None  # a letter asked for: one reading


def test_the_character_asked_for_is_counted_beside(punkt: Path, tmp_path: Path) -> None:
    task = load_task("ifeval", data_file=_write(tmp_path / "rows.jsonl", LETTER_ROWS))
    rule = task.answer_rule("zero_shot")
    hashes, bangs = task.items[0], task.items[1]
    (check,) = rule.score_whole(hashes, "#### done").details.get("instructions")
    assert (check.counted_strict, check.counted_loose) == (True, True)
    (check,) = rule.score_whole(hashes, "## only two").details.get("instructions")
    assert check.counted_strict is False
    first, second = rule.score_whole(bangs, "wow! great!").details.get("instructions")
    assert first.counted_strict is False and second.counted_strict is None


def test_a_truncated_reply_is_graded_on_its_text_unless_excluded(punkt: Path, tmp_path: Path) -> None:
    """lm-eval grades the text it received; `--truncated-as excluded` keeps proctor's exclusion (in the run id)."""
    import asyncio

    from proctor.api import eval_spec
    from proctor.core.model import GenerateRequest, Generation
    from proctor.log.runlog import Outcome
    from proctor.run.resolve import resolve
    from proctor.run.runner import build_scorer
    from proctor.scoring.base import Answered

    data = str(_write(tmp_path / "rows.jsonl", LETTER_ROWS))
    task = load_task("ifeval", data_file=data)
    item = task.items[2]
    answered = Answered(item, 0, [GenerateRequest(task.prompts.messages(item, "zero_shot"))],
                        [Generation(text="quite a quiz, cut off", finish_reason="length")])
    graded, excluded = (resolve(eval_spec("ifeval", "scripted:first", data_file=data, truncated_as=t))
                        for t in ("wrong", "excluded"))
    assert graded.run_id() != excluded.run_id()
    (verdict,) = asyncio.run(build_scorer(task, graded).score(task, [answered]))
    assert verdict.outcome is Outcome.CORRECT and verdict.usage.finish_reason == "length"
    (verdict,) = asyncio.run(build_scorer(task, excluded).score(task, [answered]))
    assert verdict.outcome is Outcome.TRUNCATED and verdict.details.get("instructions") is None
