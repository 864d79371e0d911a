"""Real lm-eval and Inspect output for the importer tests (fixtures and helpers), made by those harnesses themselves on a tiny synthetic item file.

lm-eval: `simple_evaluate` with its offline `dummy` model (random log-likelihoods) on a local custom task
reading the items file, saved with its own `EvaluationTracker`. Inspect: `inspect_ai.eval` with the offline
`mockllm/model` (scripted replies) on a dataset read by Inspect's own `json_dataset` from the same file.
Nothing is downloaded. Both are in the dev extra; without them the tests skip, except under CI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

import pytest

HERE = Path(__file__).resolve().parent
LETTERS = "ABCD"
N_ITEMS = 8


def items() -> list[dict[str, Any]]:
    """Synthetic CommonEval choice items: proctor runs them, lm-eval and Inspect read the same file."""
    return [{"identifier": f"demo.{i}", "modality": "choiceof4", "prompt": f"Which number is {i} plus one?",
             "response": LETTERS[i % 4], "category": "alpha" if i < N_ITEMS // 2 else "beta",
             "choices": {L: str(i + 1 + (k - i % 4)) for k, L in enumerate(LETTERS)}}
            for i in range(N_ITEMS)]


def needs(module: str) -> None:
    if importlib.util.find_spec(module) is None and not os.environ.get("CI"):
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]'); under CI this test must run")


LOCAL_DATA_YAML = """dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
  cache_dir: {cache}
test_split: test
doc_to_text: "{{{{prompt}}}}\\nAnswer:"
"""
"""The items file as an lm-eval task's local JSON dataset (the `{data}` file, cached under `{cache}`)."""

TASK_YAML = "task: demo_mc\noutput_type: multiple_choice\n" + LOCAL_DATA_YAML + """\
doc_to_choice: "{{{{[choices.A, choices.B, choices.C, choices.D]}}}}"
doc_to_target: "{{{{['A', 'B', 'C', 'D'].index(response)}}}}"
metric_list:
  - metric: acc
  - metric: acc_norm
"""


def inspect_log(items_file: Path, log_dir: Path, wrong: Collection[str], fail: Collection[str] = (),
                epochs: int = 2, log_format: Literal["eval", "json"] = "eval") -> Path:
    """An Inspect log of `mockllm/model` answering every item right, but those in `wrong` (B or C) and those
    in `fail` (the model raises: Inspect records the sample's error)."""
    needs("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as run_eval
    from inspect_ai.dataset import FieldSpec, json_dataset
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    by_prompt = {row["prompt"]: row for row in items()}

    def reply(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        row = by_prompt[messages[-1].text]
        if row["identifier"] in fail:
            raise RuntimeError(f"scripted failure on {row['identifier']}")
        answer = row["response"] if row["identifier"] not in wrong else ("C" if row["response"] == "B" else "B")
        out = ModelOutput.from_content(model="mockllm/model", content=answer)
        out.usage = ModelUsage(input_tokens=7, output_tokens=1, total_tokens=8)  # else mockllm counts with tiktoken
        return out

    dataset = json_dataset(str(items_file), FieldSpec(id="identifier", input="prompt", target="response",
                                                      metadata=["category"]))
    task = Task(dataset=dataset, solver=generate(), scorer=includes(), name="demo_mc")
    (log,) = run_eval(task, model=get_model("mockllm/model", custom_outputs=reply), log_dir=str(log_dir),
                  display="none", epochs=epochs, fail_on_error=False, log_format=log_format)
    assert log.location
    return Path(log.location)


@pytest.fixture(scope="session")
def items_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("items") / "demo.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in items()))
    return path


GEN_TASK_YAML = "task: demo_gen\noutput_type: generate_until\n" + LOCAL_DATA_YAML + """\
doc_to_target: "{{{{'lol' if identifier[-1] in '02468' else response}}}}"
generation_kwargs:
  until: ["\\n"]
metric_list:
  - metric: exact_match
filter_list:
  - name: strict
    filter:
      - function: regex
        regex_pattern: "([A-D])"
      - function: take_first
  - name: first
    filter:
      - function: take_first
"""
"""A generation task with two filters: lm-eval's dummy model always says "lol", the target of even items is
"lol" (an exact match under the `first` filter), and the `strict` filter finds no letter in it (no match)."""


def write_lmeval_results(items_file: str, root: str) -> None:
    """Run lm-eval's `dummy` model on the items, each task saved as lm-eval does under `root/<task>/`."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    tasks = Path(root) / "tasks"
    tasks.mkdir()
    for name, yaml in (("demo_mc", TASK_YAML), ("demo_gen", GEN_TASK_YAML)):
        (tasks / f"{name}.yaml").write_text(yaml.format(data=items_file, cache=Path(root) / "hf-cache"))
    manager = TaskManager(include_path=str(tasks), include_defaults=False)
    for name in ("demo_mc", "demo_gen"):
        results = simple_evaluate(model="dummy", tasks=[name], log_samples=True, random_seed=0, task_manager=manager)
        assert results is not None
        samples = results.pop("samples")
        tracker = EvaluationTracker(output_path=str(Path(root) / name))
        tracker.save_results_aggregated(results=results, samples=samples)
        tracker.save_results_samples(task_name=name, samples=samples[name])


@pytest.fixture(scope="session")
def lmeval_root(items_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm-eval's output for two tasks, each `<task>/<model>/results_<date>.json` with its samples file beside it.

    Made in a fresh process: the hub's offline switches are read when `huggingface_hub` is first imported,
    and lm-eval seeds the global random generators."""
    needs("lm_eval")
    root = tmp_path_factory.mktemp("lmeval")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(root / "hf-home"),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    code = f"from import_sources import write_lmeval_results; write_lmeval_results({str(items_file)!r}, {str(root)!r})"
    done = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return root


@pytest.fixture(scope="session")
def lmeval_results(lmeval_root: Path) -> Path:
    """A multiple-choice task's `results_<date>.json` (acc, acc_norm), its `samples_demo_mc_<date>.jsonl` beside it."""
    (found,) = (lmeval_root / "demo_mc").rglob("results_*.json")
    return found


@pytest.fixture(scope="session")
def lmeval_gen_results(lmeval_root: Path) -> Path:
    """A generation task's `results_<date>.json` (exact_match under two filters) and its samples."""
    (found,) = (lmeval_root / "demo_gen").rglob("results_*.json")
    return found


@pytest.fixture(scope="session")
def inspect_eval(items_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Inspect `.eval` log: two epochs, items demo.1 and demo.6 answered wrongly."""
    return inspect_log(items_file, tmp_path_factory.mktemp("inspect"), wrong={"demo.1", "demo.6"})
