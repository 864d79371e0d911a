"""lm-evaluation-harness as the oracle of the spec benchmarks: its own task YAMLs, read from the installed
lm_eval, pointed at local files in the exact upstream schema (`dataset_path: json` + `data_files`), so its
prompts and scores are built by its own code, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lm_eval
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks._yaml_loader import load_yaml

TASKS = Path(lm_eval.__file__).parent / "tasks"


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def lmeval_task(yaml_rel: str, data_files: dict[str, Path], num_fewshot: int | None = None) -> ConfigurableTask:
    """lm-eval's task from its YAML with the data swapped for local JSON Lines files (one per split)."""
    cfg = load_yaml(TASKS / yaml_rel, resolve_func=True)
    for key in ("tag", "group"):
        cfg.pop(key, None)
    cfg.update(dataset_path="json", dataset_name=None,
               dataset_kwargs={"data_files": {split: str(p) for split, p in data_files.items()}})
    if num_fewshot is not None:
        cfg["num_fewshot"] = num_fewshot
    task = ConfigurableTask(config=cfg)
    task.set_fewshot_seed(1234)  # simple_evaluate's default fewshot_random_seed
    return task


def lmeval_requests(task: ConfigurableTask) -> list[tuple[int, tuple[Any, ...]]]:
    """(doc_id, arguments) of every request lm-eval builds, in its order."""
    task.build_all_requests()
    return [(inst.doc_id, inst.arguments) for inst in task.instances]


# ------------------------------------------------------------------ synthetic rows, upstream schemas


def arc_rows(n: int, tag: str) -> list[dict[str, Any]]:
    """allenai/ai2_arc: id, question, choices {text, label}, answerKey (labels A-E or 1-4)."""
    out = []
    for i in range(n):
        labels = ["A", "B", "C", "D"] if i % 3 else ["1", "2", "3"]
        out.append({"id": f"Mercury_{tag}_{i}", "question": f"Which {tag} property does sample {i} of the rock show?",
                    "choices": {"text": [f"it is {w} {i}" for w in ("hard", "soft", "shiny", "dull")[:len(labels)]],
                                "label": labels},
                    "answerKey": labels[(i * 7) % len(labels)]})
    return out


def hellaswag_rows(n: int, tag: str) -> list[dict[str, Any]]:
    """Rowan/hellaswag: ind, activity_label, ctx_a, ctx_b, ctx, endings, source_id, split, split_type, label
    (a string), with WikiHow's bracket artefacts and double spaces to exercise the preprocessing."""
    out = []
    for i in range(n):
        wiki = i % 2 == 0
        ctx_a = (f"[header] How to fold {tag} item {i} [title] Lay it flat.  Smooth it" if wiki
                 else f"A man rides {tag} bike {i}.")  # the split in the text: real splits share no question
        ctx_b = "THEN he" if i % 3 else ""
        out.append({"ind": i, "activity_label": "Home and Garden" if wiki else "Riding bikes", "ctx_a": ctx_a,
                    "ctx_b": ctx_b, "ctx": f"{ctx_a} {ctx_b}",
                    "endings": [f" folds it [step] now  {j} " if wiki else f"rides away {j}." for j in range(4)],
                    "source_id": f"src~{i}", "split": tag, "split_type": "indomain", "label": str((i * 5) % 4)})
    return out


MMLU_SUBJECTS = ("abstract_algebra", "high_school_world_history", "virology")


def mmlu_rows(per_subject: int, tag: str) -> list[dict[str, Any]]:
    """cais/mmlu ("all" config): question, subject, choices (four), answer (an index)."""
    return [{"question": f" {tag} question {i} on {s}?\n", "subject": s,
             "choices": [f"{s[:4]} option {j}/{i}" for j in range(4)], "answer": (i * 3 + len(s)) % 4}
            for s in MMLU_SUBJECTS for i in range(per_subject)]


def gsm8k_rows(n: int, tag: str) -> list[dict[str, Any]]:
    """openai/gsm8k (main): question, answer (a worked solution ending `#### N`)."""
    return [{"question": f"{tag}: Ann has {i + 2} apples and buys {3 * i} more. How many now?",
             "answer": f"She has {i + 2} + {3 * i} = <<{i + 2}+{3 * i}={4 * i + 2}>>{4 * i + 2}.\n"
                       f"#### {4 * i + 2:,}"}
            for i in range(n)]


def winogrande_rows(n: int, tag: str) -> list[dict[str, Any]]:
    """allenai/winogrande: sentence (one `_`), option1, option2, answer ("1" or "2")."""
    return [{"sentence": f"{tag} {i}: Ann gave Bea the book because _ had finished reading it {i} times.",
             "option1": "Ann", "option2": "Bea", "answer": "12"[(i * 5) % 2 if i % 3 else 1]}
            for i in range(n)]
