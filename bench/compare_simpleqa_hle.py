"""proctor's SimpleQA and HLE judges against the authors' own code, reply by reply.

The references, read from their repositories at the pinned commits (never copied into proctor) and run here:

* openai/simple-evals `simpleqa_eval.py` (ee3b0318): `SimpleQAEval.grade_sample` (the grader prompt it sends and
  its `(A|B|C)` reading) with a scripted grader, and `SimpleQAEval.__call__` (its aggregate metrics, read from its
  own locals) with a scripted model and grader. proctor: `grade_to_score` with the SimpleQA judge (what
  `JudgeScorer` calls per reply) and `proctor.metrics.simpleqa.simpleqa_metrics`.
* centerforaisafety/hle `hle_eval/run_judge_results.py` (67b32511): `JUDGE_PROMPT` filled as `extract_answer`
  fills it, the verdict the structured-output model `ExtractedAnswer` accepts (pydantic `model_validate_json`,
  what `client.beta.chat.completions.parse` does with the reply), and `calib_err` (beta=100) on random confidence
  sets. proctor: the HLE judge's prompt and `parse`, and `proctor.metrics.hle.calib_err`.

    PYTHONPATH=src python bench/compare_simpleqa_hle.py \\
        --simple-evals /work/.mirror/openai+simple-evals/repo --hle /work/.mirror/kflu+hle/repo

Each path is a git directory (the `fetch` tool's mirror; the files are read at the pinned commit) or a checkout.
kflu/hle is a fork whose history holds the authors' commits; 67b32511 is theirs. Nothing here is run by the tests.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import io
import json
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ValidationError

from proctor.data.formats.convert import question_to_item
from proctor.data.records import Item, Question
from proctor.metrics.hle import calib_err
from proctor.metrics.simpleqa import simpleqa_metrics
from proctor.scoring import hle as hle_judge
from proctor.scoring import simpleqa
from proctor.scoring.judge import grade_to_score

SIMPLE_EVALS_COMMIT = "ee3b0318d8d1d9d72755a4120879be65f7c07e9e"
HLE_COMMIT = hle_judge.COMMIT


def read(repo: Path, commit: str, path: str) -> str:
    """A file of `repo` at `commit` (a git directory), or from the checkout."""
    if (repo / path).is_file():
        return (repo / path).read_text()
    return subprocess.run(["git", "--git-dir", str(repo), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


# ---------------------------------------------------------------- SimpleQA

FORMS = ["{L}", "{L}\n", " {L} ", "**{L}**", "Grade: {L}", "The grade is {L}.", "{L}: {S}", "{S}", "I think {L}",
         "", "none of these", "Based on the criteria, {L}", "a", "{l}", "NOT ATTEMPTED", "ABC", "C then A",
         "Answer: {L}", "{L}) {S}", "`{L}`"]
STRINGS = dict(zip("ABC", ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")))


def simpleqa_cases(n: int) -> list[tuple[Item, str, str]]:
    """(item, the model's reply, the grader's reply) for n invented questions."""
    out = []
    for i in range(n):
        letter = "ABC"[(i // len(FORMS)) % 3]
        q = Question(id=i, original_id=str(i), question=f"Which invented prize did person {i} win in {1900 + i}?",
                     choices={}, answer=f"The Zeta{i} Medal")
        reply = ["The Zeta{i} Medal.", "I am not sure.", "It was the Omega{i} Prize.", ""][i % 4].format(i=i)
        grader = FORMS[i % len(FORMS)].format(L=letter, l=letter.lower(), S=STRINGS[letter])
        out.append((question_to_item(q, "simpleqa-verified"), reply, grader))
    return out


def simple_evals_module(repo: Path) -> Any:
    """simple-evals' simpleqa_eval as a package module (with its common.py and types.py)."""
    root = Path(tempfile.mkdtemp(prefix="simple_evals_"))
    pkg = root / "simple_evals"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("simpleqa_eval.py", "common.py", "types.py"):
        (pkg / name).write_text(read(repo, SIMPLE_EVALS_COMMIT, name))
    sys.path.insert(0, str(root))
    import importlib

    return importlib.import_module("simple_evals.simpleqa_eval")


class Scripted:
    """A simple-evals sampler answering from a table (the last user message → reply); records what it was sent."""

    def __init__(self, table: dict[str, str], key: Any = None) -> None:
        self.table, self.key, self.sent = table, key or (lambda text: text), []  # type: ignore[var-annotated]

    def _pack_message(self, content: str, role: str) -> dict[str, str]:
        return {"role": role, "content": content}

    def __call__(self, messages: list[dict[str, str]]) -> Any:
        from simple_evals.types import SamplerResponse

        text = messages[-1]["content"]
        self.sent.append(text)
        return SamplerResponse(self.table[self.key(text)], messages, {})


def grader_key(prompt: str) -> str:
    """The question a grader prompt is about (its last `Question:` line)."""
    return prompt.rsplit("\nQuestion: ", 1)[1].split("\nGold target: ", 1)[0]


def compare_simpleqa(repo: Path, n: int) -> dict[str, Any]:
    module = simple_evals_module(repo)
    template_ok = module.GRADER_TEMPLATE == simpleqa.GRADER_TEMPLATE
    cases = simpleqa_cases(n)
    grader = Scripted({it.prompt: g for it, _, g in cases}, grader_key)
    evaluator = module.SimpleQAEval.__new__(module.SimpleQAEval)  # its __init__ downloads OpenAI's csv
    evaluator.grader_model = grader
    same_prompt = same_letter = 0
    differ: list[str] = []
    grades: list[str] = []
    for item, reply, grader_reply in cases:
        theirs = evaluator.grade_sample(item.prompt, item.best_answer, reply)
        sent = grader.sent[-1]
        mine = grade_to_score(item, reply, grader_reply, None, "scripted", simpleqa.JUDGE)
        letter = str(mine.details.get("judge_grade"))
        grades.append(letter)
        same_prompt += sent == simpleqa.JUDGE.prompt(item, reply)
        ok = letter == theirs and (mine.score == 1.0) == (theirs == "A")
        same_letter += ok
        if not ok:
            differ.append(f"{grader_reply!r}: simple-evals {theirs}, proctor {letter}")
    # the aggregate: simple-evals' own __call__ over the same rows (model and grader scripted)
    evaluator.examples = [{"problem": it.prompt, "answer": it.best_answer} for it, _, _ in cases]
    model = Scripted({it.prompt: r for it, r, _ in cases})
    captured: dict[str, Any] = {}

    def spy(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code.co_name == "__call__" and "output_d" in frame.f_locals:
            captured.update(frame.f_locals["aggregate_metrics"], **frame.f_locals["output_d"])

    sys.setprofile(spy)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            module.SimpleQAEval.__call__(evaluator, model)
    finally:
        sys.setprofile(None)
    mine_metrics = simpleqa_metrics(grades)
    metric_diff = {k: (captured.get(k), v) for k, v in mine_metrics.items() if captured.get(k) != v}
    return {"cases": n, "template_identical": template_ok, "grader_prompt_identical": same_prompt,
            "verdicts_equal": same_letter, "differences": differ[:10], "metrics_upstream": captured,
            "metrics_proctor": mine_metrics, "metrics_differ": metric_diff}


# ---------------------------------------------------------------- HLE


def hle_reference(repo: Path) -> dict[str, Any]:
    """JUDGE_PROMPT, ExtractedAnswer and calib_err from the authors' file, run as they are (its API client and
    dataset code left out: the module-level names are executed one by one)."""
    source = read(repo, HLE_COMMIT, "hle_eval/run_judge_results.py")
    namespace: dict[str, Any] = {"np": np, "BaseModel": BaseModel, "Literal": Literal}
    wanted = {"JUDGE_PROMPT", "ExtractedAnswer", "calib_err"}
    for node in ast.parse(source).body:
        name = node.targets[0].id if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
            else getattr(node, "name", None)
        if name in wanted:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(ast.Module([node], []), "run_judge_results.py", "exec", dont_inherit=True), namespace)  # noqa: S102
    system = ast.literal_eval(next(n.value for n in ast.parse(read(repo, HLE_COMMIT,
                                                                      "hle_eval/run_model_predictions.py")).body
                                   if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "SYSTEM_PROMPT"))
    return {**{k: namespace[k] for k in wanted}, "SYSTEM_PROMPT": system}


def hle_replies(rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    """(kind, judge reply): schema-valid structured outputs, then off-schema ones."""
    out = []
    answers = ["7", "None", "B", "x^2 + 1", "Ω ≈ 3.2 kΩ", "line one\nline two", ""]
    for i in range(n):
        fields = {"extracted_final_answer": answers[i % len(answers)], "reasoning": f"Reason {i}: \"quoted\".",
                  "correct": ["yes", "no"][int(rng.integers(2))], "confidence": int(rng.integers(0, 101)),
                  "strict": True}
        out.append(("valid", json.dumps(fields, ensure_ascii=bool(i % 2))))
    base = {"extracted_final_answer": "7", "reasoning": "r", "correct": "yes", "confidence": 80, "strict": True}
    off = {"Yes": {**base, "correct": "Yes"}, "no strict": {k: v for k, v in base.items() if k != "strict"},
           "confidence 150": {**base, "confidence": 150}, "confidence '80'": {**base, "confidence": "80"},
           "confidence 80.5": {**base, "confidence": 80.5}, "correct maybe": {**base, "correct": "maybe"},
           "no confidence": {k: v for k, v in base.items() if k != "confidence"}}
    out += [(kind, json.dumps(fields)) for kind, fields in off.items()]
    out.append(("prose", "extracted_final_answer: 7\nreasoning: r\ncorrect: yes\nconfidence: 80"))
    return out


def theirs_verdict(model: Any, reply: str) -> tuple[bool, float, str] | None:
    """What the authors' script keeps from a reply: None when the structured output is refused."""
    try:
        parsed = model.model_validate_json(reply)
    except ValidationError:
        return None
    return "yes" in parsed.correct, parsed.confidence / 100, parsed.extracted_final_answer


def compare_hle(repo: Path, n: int, seed: int) -> dict[str, Any]:
    ref = hle_reference(repo)
    rng = np.random.default_rng(seed)
    item = question_to_item(Question(id=0, original_id="0", question="What is 3 + 4?", choices={}, answer="7"), "hle")
    prompt_ok = ref["JUDGE_PROMPT"].format(question=item.prompt, correct_answer="7", response="Answer: 7") \
        == hle_judge.JUDGE.prompt(item, "Answer: 7")
    counts: dict[str, list[int]] = {}
    differ: list[str] = []
    for kind, reply in hle_replies(rng, n):
        theirs = theirs_verdict(ref["ExtractedAnswer"], reply)
        reading = hle_judge.parse(reply)
        mine = None if reading is None else (reading.grade == "yes", reading.p_correct, reading.answer)
        same = theirs == mine if kind == "valid" else (theirs is None) == (mine is None) and theirs == mine
        tally = counts.setdefault("valid" if kind == "valid" else "off-schema", [0, 0])
        tally[0] += 1
        tally[1] += bool(same)
        if not same:
            differ.append(f"{kind}: authors {theirs}, proctor {mine}")
    calib_same = calib_n = 0
    worst = 0.0
    for size in (100, 101, 150, 199, 200, 250, 999, 1000, 1234, 2158, 2500):
        for _ in range(20):
            confidence = rng.integers(0, 101, size) / 100
            correct = rng.random(size) < confidence * rng.random()
            theirs_value = float(ref["calib_err"](confidence.copy(), correct.copy(), p="2", beta=100))
            mine_value = calib_err(list(confidence), list(correct))
            calib_n += 1
            assert mine_value is not None
            worst = max(worst, abs(theirs_value - mine_value))
            calib_same += theirs_value == mine_value
    small_fails = 0
    for size in (1, 2, 50, 99):
        confidence = rng.integers(0, 101, size) / 100
        try:
            ref["calib_err"](confidence, confidence > 0.5, p="2", beta=100)
        except IndexError:
            small_fails += calib_err(list(confidence), list(confidence > 0.5)) is None
    return {"judge_prompt_identical": prompt_ok,
            "judge_prompt_sha256": hashlib.sha256(ref["JUDGE_PROMPT"].encode()).hexdigest(),
            "system_prompt_identical": ref["SYSTEM_PROMPT"] == hle_judge.SYSTEM_PROMPT,
            "verdicts (cases, equal)": counts, "differences": differ,
            "calib_err (sets, bit-identical, max abs diff)": (calib_n, calib_same, worst),
            "calib_err under 100 (authors raise, proctor None)": (4, small_fails)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--simple-evals", type=Path, required=True, help="openai/simple-evals git dir or checkout")
    parser.add_argument("--hle", type=Path, required=True, help="centerforaisafety/hle (or a fork) git dir or checkout")
    parser.add_argument("--cases", type=int, default=600, help="replies per benchmark (default: 600)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the HLE cases (default: 0)")
    args = parser.parse_args(argv)
    report = {"simpleqa": compare_simpleqa(args.simple_evals, args.cases),
              "hle": compare_hle(args.hle, args.cases, args.seed)}
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
