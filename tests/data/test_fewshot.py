"""Few-shot for any item data: `--prompt five_shot` / `--shots K` on an items file, examples from the file
itself (never the item asked) or from `--fewshot-from`, sent as chat turns or one completion text."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.benchmarks.registry import Prompting, load_task
from proctor.data.fewshot import FewShotPrompts
from proctor.util.errors import ProctorError

EXAMPLES = Path(__file__).parents[2] / "examples" / "items"
MC = EXAMPLES / "multiple-choice.jsonl"


def _builder(**kwargs: object) -> tuple[FewShotPrompts, list]:
    task = load_task(str(MC), prompting=Prompting(**kwargs))  # type: ignore[arg-type]
    assert isinstance(task.prompts, FewShotPrompts)
    return task.prompts, task.items


def test_five_shot_on_an_items_file_shows_five_other_items_as_turns() -> None:
    prompts, items = _builder(prompt_kind="five_shot")
    assert "five_shot" in prompts.kinds
    asked = items[0]
    msgs = prompts.messages(asked, "five_shot")
    assert [m.role for m in msgs] == ["user", "assistant"] * 5 + ["user"]
    shown = prompts.examples(asked, "five_shot")
    assert asked.identifier not in {ex.identifier for ex in shown}
    assert [m.content for m in msgs[1::2][:5]] == [ex.best_answer for ex in shown]  # the letter, or True/False
    assert msgs[-1] == prompts.base.messages(asked, "zero_shot")[-1]  # the item itself, as without examples
    assert prompts.messages(asked, "zero_shot") == prompts.base.messages(asked, "zero_shot")  # 0 shots


def test_shots_from_another_file_in_completion_format(tmp_path: Path) -> None:
    pool_file = tmp_path / "pool.jsonl"
    pool_file.write_text("".join(MC.read_text().splitlines(keepends=True)[-3:]))
    prompts, items = _builder(shots=2, fmt="completion", fewshot_from=str(pool_file))
    assert prompts.completion and [p.identifier for p in prompts.examples(items[0], "zero_shot")] == \
        [p.identifier for p in prompts.pool[:2]]
    (msg,) = prompts.messages(items[0], "zero_shot")
    assert msg.content.count("\nAnswer: ") == 2 and msg.content.endswith(prompts.base.messages(items[0],
                                                                                                "zero_shot")[-1].content)
    context = prompts.logprob_context(items[0])
    first = prompts.pool[0]
    assert context.startswith(prompts.base.body(first) + "\nAnswer: ")
    assert context.endswith(prompts.base.body(items[0]) + "\nAnswer:")
    assert prompts.identity()["shots"] == 2 and prompts.identity()["format"] == "completion"


def test_builtins_keep_their_own_prompt_kinds(tmp_path: Path) -> None:
    with pytest.raises(ProctorError, match="--prompt"):
        load_task("mmlu-pro", prompting=Prompting(shots=3))
