"""Run in a fresh process by test_mmlu_pro_lmeval.py: lm-evaluation-harness's own `mmlu_pro_<category>` tasks,
built offline from the installed task files on local json splits, render every test row and score replies.

    python lmeval_mmlu_pro_oracle.py DATA_DIR REPLIES.json OUT.json

DATA_DIR holds test.jsonl and validation.jsonl in MMLU-Pro's schema; REPLIES.json is a list of replies. OUT
gets {"prompts": {question_id: context}, "scores": {question_id: [exact_match per reply]}}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import lm_eval
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks._yaml_loader import load_yaml

TASKS = Path(lm_eval.__file__).parent / "tasks" / "mmlu_pro"


def task_for(category: str, data: Path) -> ConfigurableTask:
    config = load_yaml(TASKS / f"mmlu_pro_{category.replace(' ', '_')}.yaml")
    config["dataset_path"] = "json"
    config["dataset_kwargs"] = {"data_files": {"test": str(data / "test.jsonl"),
                                               "validation": str(data / "validation.jsonl")}}
    return ConfigurableTask(config=config)


def filtered(task: ConfigurableTask, doc: dict, reply: str) -> str:
    """The task's own filter chain ("custom-extract": regex, take_first) on one reply."""
    (ensemble,) = task._filters
    responses: object = [[reply]]
    for f in ensemble.filters:
        responses = list(f().apply(responses, [doc]))
    return next(iter(responses))  # type: ignore[call-overload,no-any-return]


def main(data: Path, replies_file: Path, out: Path) -> None:
    replies = json.loads(replies_file.read_text())
    categories = sorted({json.loads(line)["category"] for line in (data / "test.jsonl").read_text().splitlines()})
    prompts, scores = {}, {}
    for category in categories:
        task = task_for(category, data)
        for doc in task.test_docs():
            qid = str(doc["question_id"])
            prompts[qid] = task.fewshot_context(doc, num_fewshot=task.config.num_fewshot)
            scores[qid] = [task.process_results(doc, [filtered(task, doc, r)])["exact_match"] for r in replies]
    out.write_text(json.dumps({"prompts": prompts, "scores": scores}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
