"""BBH against lm-eval's own task objects, built offline from its installed YAMLs on synthetic rows in the upstream
schema (input, target): every task of both variants, the prompt bytes lm-eval builds and its filter + exact_match
on replies proctor did not shape (each item answered in several ways, right and wrong, read and unreadable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lmeval_oracle import lmeval_task, write_jsonl

from proctor.benchmarks import bbh
from proctor.benchmarks.registry import load_task

TARGETS = ("(A)", "(C)", "True", "False", "valid", "Yes", "no", "17", "-3", "apple banana cherry", "] ) }")


def rows(task: str) -> list[dict[str, Any]]:
    """Synthetic rows: braces (`{{target}}`, `{{…}}`, `{x}`, `%s`: sent as they are), quotes and a trailing newline
    in the input, targets of every BBH shape."""
    return [{"input": f"Synthetic {task} #{i}: is \"{{x}}\" {{{{target}}}} {{{{ input }}}} {{{{…}}}} %s (A) or (B)?"
                      "\nOptions:\n(A) yes\n(B) no\nList: pear apple" + ("\n" if i % 2 else ""),
             "target": TARGETS[(i + len(task)) % len(TARGETS)]} for i in range(3)]


def replies(target: str) -> list[str]:
    return [f"Step one. So the answer is {target}.", f"So the answer is {target}", f"The answer is {target.lower()}.",
            f"the answer is {target}.\nQ", "I cannot tell.", f"The final answer: \"{target}\",.", "",
            f"So the answer is {target}. Then the answer is (B).", f"so the answer is  {target}!"]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bbh")
    for task in bbh.TASKS:
        write_jsonl(folder / f"{task}.jsonl", rows(task))
    return folder


@pytest.mark.parametrize("kind", [bbh.COT_FEWSHOT, bbh.COT_ZEROSHOT])
def test_every_task_equals_lmeval(data: Path, kind: str) -> None:
    task = load_task("bbh", data_file=data)
    rule = task.answer_rule(kind)
    assert rule is not None and rule.score_whole is not None
    folder, filter_name = bbh.VARIANTS[kind]
    compared = 0
    for name in bbh.TASKS:
        oracle = lmeval_task(f"bbh/{folder}/{name}.yaml", {"test": data / f"{name}.jsonl"})
        oracle.build_all_requests()
        items = [it for it in task.items if it.category == name]
        assert len(oracle.instances) == len(items) == 3
        for inst, item in zip(oracle.instances, items, strict=True):
            context, gen_kwargs = inst.arguments
            (message,) = task.prompts.messages(item, kind)
            assert message.content == context, (name, kind)
            assert tuple(gen_kwargs["until"]) == task.prompts.request_defaults(kind).stop  # type: ignore[attr-defined]
        for reply in replies(items[0].metadata["target"]) + replies(items[1].metadata["target"]):
            for inst in oracle.instances:
                inst.resps = [reply]
            oracle._instances = oracle.instances
            oracle.apply_filters()
            for inst, item in zip(oracle.instances, items, strict=True):
                filtered = inst.filtered_resps[filter_name]
                expected = oracle.process_results(inst.doc, [filtered])["exact_match"]
                verdict = rule.score_whole(item, reply)
                assert verdict.score == float(expected), (name, kind, reply, filtered)
                assert (verdict.extracted or "[invalid]") == filtered
                compared += 1
    assert compared == 27 * 3 * 18
