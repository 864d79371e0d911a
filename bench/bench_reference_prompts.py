"""Side by side: proctor's reference prompts against the upstream code itself, run on the same rows.

From local clones of TIGER-AI-Lab/MMLU-Pro and iamsikun/llm-wc (nothing is downloaded; their code is read
from the clone and its prompt functions alone are executed, without their model or dataset imports), for
each row of a data file in the upstream schema: the prompt the upstream function builds and the one
proctor sends, compared byte for byte. Prints, per benchmark and kind, how many of the rows are identical.

    PYTHONPATH=src python bench/bench_reference_prompts.py --mmlu-pro-repo ~/src/MMLU-Pro \
        --llmwc-repo ~/src/llm-wc [--mmlu-pro-data examples/upstream/mmlu_pro] \
        [--aime-data tests/fixtures/upstream/aime_2025/train.jsonl]
        [--gpqa-data DIR_WITH_gpqa_main.csv_AND_chain_of_thought_examples.json]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import random
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from proctor.benchmarks import load_task
from proctor.benchmarks.hub import HubSource, fetch
from proctor.data.records import Item


def functions(repo: Path, path: str, names: set[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """The named top-level functions of `repo`/`path` at HEAD, executed into `namespace` (imports skipped)."""
    source = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True,
                            text=True).stdout
    tree = ast.parse(source)
    kept = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    exec(compile(ast.Module(body=kept, type_ignores=[]), path, "exec"), namespace)  # noqa: S102 - the user's clone
    return namespace


def head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


@contextlib.contextmanager
def cwd(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def text(task: Any, item: Item, kind: str) -> str:
    (message,) = task.prompts.messages(item, kind)
    return str(message.content)


def mmlu_pro(repo: Path, data: Path) -> list[tuple[str, int, int]]:
    """evaluate_from_api.py's and evaluate_from_local.py's prompts vs five_shot and tiger-local."""
    task = load_task("mmlu-pro", data_file=data)
    test = fetch(HubSource("TIGER-Lab/MMLU-Pro", split="test"), _split_file(data, "test")).rows
    val = fetch(HubSource("TIGER-Lab/MMLU-Pro", split="validation"), _split_file(data, "validation")).rows
    api = functions(repo, "evaluate_from_api.py", {"preprocess", "format_example"}, {})
    local = functions(repo, "evaluate_from_local.py", {"format_cot_example", "generate_cot_prompt",
                                                      "select_by_category"}, {"choices": list("ABCDEFGHIJKLMNOP")})
    by_cat = api["preprocess"]([dict(r, options=list(r["options"])) for r in val])
    val_list = [dict(r, options=[o for o in r["options"] if o != "N/A"]) for r in val]
    items = {str(it.metadata["question.original_id"]): it for it in task.items}
    api_same = local_same = 0
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "cot_prompt_lib").mkdir()
        (Path(tmp) / "cot_prompt_lib" / "initial_prompt.txt").write_bytes(subprocess.run(
            ["git", "-C", str(repo), "show", "HEAD:cot_prompt_lib/initial_prompt.txt"], check=True,
            capture_output=True).stdout)
        for raw in test:
            row = dict(raw, options=[o for o in raw["options"] if o != "N/A"])
            item = items[str(row["question_id"])]
            prompt = ("The following are multiple choice questions (with answers) about {}. Think step by"
                      " step and then output the answer in the format of \"The answer is (X)\" at the end.\n\n"
                      ).format(row["category"])  # single_request's instruction, as written there
            for each in by_cat.get(row["category"], []):
                prompt += api["format_example"](each["question"], each["options"], each["cot_content"])
            api_same += prompt + api["format_example"](row["question"], row["options"]) == text(
                task, item, "five_shot")
            with cwd(Path(tmp)):
                upstream_local = local["generate_cot_prompt"](val_list, row, 5)
            local_same += upstream_local == text(task, item, "tiger-local")
    return [("mmlu-pro five_shot (evaluate_from_api.py)", api_same, len(test)),
            ("mmlu-pro tiger-local (evaluate_from_local.py, k=5)", local_same, len(test))]


def _split_file(data: Path, split: str) -> Path:
    found = sorted(p for p in (data.glob(f"{split}*") if data.is_dir() else [data]) if p.is_file())
    return found[0]


def aime(repo: Path, data: Path) -> list[tuple[str, int, int]]:
    ns = functions(repo, "src/llm_wc/aime_2025.py", {"prompt_aime_2025"}, {"AIME_2025_PROMPT": (
        "Please reason step by step, and put your final answer within \\boxed{}.\n"
        "The answer is an integer between 0 and 999 inclusive.")})
    task = load_task("aime-2025", data_file=data)
    rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    items = {str(it.metadata["question.original_id"]): it for it in task.items}
    same = 0
    for row in rows:
        bench = SimpleNamespace(prompts={"default": ns["AIME_2025_PROMPT"]})
        upstream = ns["prompt_aime_2025"](bench, SimpleNamespace(question=str(row["problem"])), "default")
        same += upstream == text(task, items[str(row["problem_idx"])], "chain_of_thought")
    return [("aime-2025 chain_of_thought (llm-wc prompt_aime_2025)", same, len(rows))]


def gpqa(repo: Path, folder: Path) -> list[tuple[str, int, int]]:
    ns = functions(repo, "src/llm_wc/gpqa.py", {"_format_choices", "_base_prompt", "_resolve_resource_path",
                                                "_load_cot_examples", "_render_cot_examples", "prompt_gpqa"},
                   {"GPQA_CHOICES": ["A", "B", "C", "D"], "GPQA_DEFAULT_PROMPT_TYPE": "zero_shot",
                    "GPQA_DEFAULT_COT_EXAMPLES": "", "Path": Path, "json": json, "random": random})
    task = load_task("gpqa-main", data_file=folder / "gpqa_main.csv")
    examples = str(folder / "chain_of_thought_examples.json")
    out = []
    for upstream_kind, kind in (("zero_shot", "zero_shot"), ("chain_of_thought", "chain_of_thought"),
                                ("5_shot", "five_shot")):
        same = 0
        for item in task.items:
            raw = item.metadata.get("choices_raw") or item.choices or {}
            question = SimpleNamespace(question=item.metadata.get("question_raw") or item.prompt, choices=dict(raw))
            bench = SimpleNamespace(metadata={})
            upstream = ns["prompt_gpqa"](bench, question, upstream_kind, cot_examples_path=examples)
            same += upstream == text(task, item, kind)
        out.append((f"gpqa-main {kind} (llm-wc prompt_gpqa {upstream_kind})", same, len(task.items)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mmlu-pro-repo", type=Path, required=True)
    parser.add_argument("--llmwc-repo", type=Path, required=True)
    parser.add_argument("--mmlu-pro-data", type=Path, default=Path("examples/upstream/mmlu_pro"))
    parser.add_argument("--aime-data", type=Path, default=Path("tests/fixtures/upstream/aime_2025/train.jsonl"))
    parser.add_argument("--gpqa-data", type=Path, default=None)
    args = parser.parse_args()
    print(f"TIGER-AI-Lab/MMLU-Pro @ {head(args.mmlu_pro_repo)}; iamsikun/llm-wc @ {head(args.llmwc_repo)}")
    rows = mmlu_pro(args.mmlu_pro_repo, args.mmlu_pro_data) + aime(args.llmwc_repo, args.aime_data)
    if args.gpqa_data is not None:
        rows += gpqa(args.llmwc_repo, args.gpqa_data)
    for name, same, total in rows:
        print(f"{name}: {same}/{total} byte-identical")


if __name__ == "__main__":
    main()
