"""SimpleQA Verified: rows in google/simpleqa-verified's schema run end to end with a scripted model and a
scripted judge, graded by simple-evals' grader template and its `(A|B|C)` reading, with its five metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_replay import run, script
from hostile import chat_body, hostile_server

from proctor.benchmarks import load_task
from proctor.benchmarks.registry import BUILTINS
from proctor.cli import main
from proctor.scoring.simpleqa import GRADER_SYSTEM, JUDGE, TEMPLATE_SHA256, grade_letter

ROWS = [  # (problem, answer, topic, answer_type, multi_step)
    ("Who received the Zeta Medal in 1911?", "Ada Quill", "Science and technology", "Person", False),
    ("In which year was the Vireo Bridge opened?", "1887", "History", "Date", True),
    ("What is the name of the river through Lestrel?", "Mora", "Geography", "Place", False),
    ("How many moons does planet Kessa have?", "12", "Science and technology", "Number", False),
    ("Which painter founded the Ostrava circle?", "Ida Venn", "Art", "Person", False),
]
REPLIES = {"simpleqa-verified.10": "Ada Quill.", "simpleqa-verified.11": "It opened in 1890.",
           "simpleqa-verified.12": "I don't know.", "simpleqa-verified.13": "Twelve, I think.",
           "simpleqa-verified.14": ""}
JUDGED = {  # the scripted judge's reply to each item's grader prompt, and simple-evals' reading of it
    "simpleqa-verified.10": ("A", "A"),
    "simpleqa-verified.11": ("B", "B"),
    "simpleqa-verified.12": ("the grade: C", "C"),
    "simpleqa-verified.13": ("Answer: A", "A"),  # the first capital A, B or C anywhere
    "simpleqa-verified.14": ("no letter at all", "C"),  # none: C (not attempted)
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "simpleqa_verified.jsonl"
    path.write_text("".join(json.dumps({"original_index": 10 + i, "problem": p, "answer": a, "topic": t,
                                        "answer_type": at, "multi_step": ms, "requires_reasoning": False,
                                        "urls": "https://example.org/a,https://example.org/b"}) + "\n"
                            for i, (p, a, t, at, ms) in enumerate(ROWS)))
    return path


def judge_script(path: Path, data: Path) -> Path:
    task = load_task("simpleqa-verified", data_file=data)
    lines = [json.dumps({"prompt": JUDGE.prompt(it, REPLIES[it.identifier]), "answer": JUDGED[it.identifier][0]})
             for it in task.items]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rows_map_topic_answer_type_and_the_problem_is_the_message(data: Path) -> None:
    task = load_task("simpleqa-verified", data_file=data)
    assert [it.identifier for it in task.items] == list(REPLIES)
    assert [(it.category, it.subcategory) for it in task.items] == [(r[2], r[3]) for r in ROWS]
    assert task.items[1].tags == ["multi step"]
    (message,) = task.prompts.messages(task.items[0], "zero_shot")
    assert (message.role, message.content) == ("user", ROWS[0][0])
    assert BUILTINS["simpleqa-verified"].as_dict()["answer_rules"] == {"zero_shot": "simple-evals-simpleqa"}


def test_grader_prompt_is_simple_evals_template_filled(data: Path) -> None:
    import hashlib

    assert hashlib.sha256(JUDGE.template.encode()).hexdigest() == TEMPLATE_SHA256
    item = load_task("simpleqa-verified", data_file=data).items[0]
    text = JUDGE.prompt(item, "Ada Quill.")
    assert text.startswith("Your job is to look at a question, a gold target, and a predicted answer")
    assert f"Question: {ROWS[0][0]}\nGold target: Ada Quill\nPredicted answer: Ada Quill.\n```" in text
    assert text.endswith('Just return the letters "A", "B", or "C", with no text around it.')
    assert JUDGE.system == GRADER_SYSTEM == "You are a helpful assistant."


@pytest.mark.parametrize(("reply", "letter"), [("A", "A"), ("B\n", "B"), ("  C", "C"), ("", "C"),
                                               ("Based on this: A", "B"), ("correct", "C"), ("grade a", "C")])
def test_grade_letter_is_the_first_capital_a_b_or_c(reply: str, letter: str) -> None:
    assert grade_letter(reply) == letter


def test_end_to_end_verdicts_and_simple_evals_metrics(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      data: Path) -> None:
    model = f"scripted:file={script(tmp_path / 'replies.jsonl', 'simpleqa-verified', data, 'zero_shot', REPLIES)}"
    judge = f"scripted:file={judge_script(tmp_path / 'judge.jsonl', data)}"
    ran = run(capsys, tmp_path, "simpleqa-verified", data, model, "run", "--judge", judge)
    assert ran.code == 0, ran.err
    samples = ran.samples
    assert {k: s["details"]["judge_grade"] for k, s in samples.items()} == {k: v[1] for k, v in JUDGED.items()}
    assert {k: s["outcome"] for k, s in samples.items()} == {k: "correct" if v[1] == "A" else "wrong"
                                                             for k, v in JUDGED.items()}
    assert samples["simpleqa-verified.10"]["details"]["judge_version"] == "simple-evals-simpleqa"
    results = json.loads((ran.run_dir / "results.json").read_text())["metrics"]
    # 2 A, 1 B, 2 C of 5 (simple-evals' sums over the results)
    assert results["simpleqa_is_correct"]["value"] == pytest.approx(2 / 5)
    assert results["simpleqa_is_incorrect"]["value"] == pytest.approx(1 / 5)
    assert results["simpleqa_is_not_attempted"]["value"] == pytest.approx(2 / 5)
    given = (2 / 5) / (3 / 5)
    assert results["simpleqa_accuracy_given_attempted"]["value"] == pytest.approx(given)
    assert results["simpleqa_f1"]["value"] == pytest.approx(2 * given * 0.4 / (given + 0.4))
    spec = ran.manifest["spec"]
    assert spec["scorer"]["answer_rule"] == "simple-evals-simpleqa"
    # simple-evals' grading sampler: temperature 0.5 (ChatCompletionSampler's default), max_tokens 2048
    assert (spec["judge"]["settings"]["temperature"], spec["judge"]["settings"]["max_tokens"]) == (0.5, 2048)
    assert ran.manifest["scorer"]["judge_settings"]["temperature"] == 0.5


def test_the_users_judge_settings_win_over_the_graders(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       data: Path) -> None:
    model = f"scripted:file={script(tmp_path / 'replies.jsonl', 'simpleqa-verified', data, 'zero_shot', REPLIES)}"
    judge = f"scripted:file={judge_script(tmp_path / 'judge.jsonl', data)}"
    ran = run(capsys, tmp_path, "simpleqa-verified", data, model, "run", "--judge", judge, "--judge-temperature", "0",
              "--judge-max-tokens", "512")
    assert ran.code == 0, ran.err
    settings = ran.manifest["spec"]["judge"]["settings"]
    assert (settings["temperature"], settings["max_tokens"]) == (0.0, 512)


@pytest.mark.parametrize(("given", "sent"), [((), (0.5, 2048)), (("--judge-max-tokens", "512"), (0.5, 512)),
                                              (("--judge-temperature", "0"), (0.0, 2048))])
def test_the_judge_requests_carry_the_graders_sampling(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       data: Path, monkeypatch: pytest.MonkeyPatch,
                                                       given: tuple[str, ...], sent: tuple[float, int]) -> None:
    """What reaches the judge's server: simple-evals' grading sampler (temperature 0.5, max_tokens 2048, its
    system message) unless the user sets a field, which wins for that field alone."""
    monkeypatch.setenv("JUDGE_KEY", "k")
    model = f"scripted:file={script(tmp_path / 'replies.jsonl', 'simpleqa-verified', data, 'zero_shot', REPLIES)}"
    with hostile_server() as judge:
        judge.body = chat_body("A")
        ran = run(capsys, tmp_path, "simpleqa-verified", data, model, "run", "--judge", "openai:grader",
                  "--judge-base-url", judge.base_url, "--judge-api-key-env", "JUDGE_KEY", "--no-cache", *given)
        bodies = [json.loads(b) for b in judge.seen_bodies]
    assert ran.code == 0, ran.err
    assert len(bodies) == len(ROWS)
    assert {(b["temperature"], b["max_tokens"]) for b in bodies} == {sent}
    assert {b["messages"][0]["content"] for b in bodies} == {GRADER_SYSTEM}
    assert {s["outcome"] for s in ran.samples.values()} == {"correct"}


def test_without_a_judge_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Path) -> None:
    ran = run(capsys, tmp_path, "simpleqa-verified", data, "scripted:first", "nojudge")
    assert ran.code == 2 and "--judge MODEL" in ran.err and len(ran.err.strip().splitlines()) == 1
    assert not (ran.run_dir / "samples.jsonl").exists()


@pytest.mark.parametrize("drop", ["answer", "topic"])
def test_a_missing_column_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Path,
                                            drop: str) -> None:
    rows = [{k: v for k, v in json.loads(line).items() if k != drop} for line in data.read_text().splitlines()]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ran = run(capsys, tmp_path, "simpleqa-verified", bad, "scripted:first", "bad", "--judge", "scripted:fixed=A")
    assert ran.code == 2 and f"missing upstream column(s) '{drop}'" in ran.err
    assert len(ran.err.strip().splitlines()) == 1 and "Traceback" not in ran.err


def test_offline_without_a_file_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_OFFLINE", "1")
    capsys.readouterr()
    code = main(["run", "simpleqa-verified", "--model", "scripted:first", "--judge", "scripted:fixed=A", "-o",
                 str(tmp_path / "o"), "--no-progress", "--no-history"])
    err = capsys.readouterr().err
    assert code == 2 and "google/simpleqa-verified" in err and "--data-file" in err and "Traceback" not in err
