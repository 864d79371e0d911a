"""IFEval (google/IFEval): 541 prompts, each with verifiable instructions ("answer in under 100 words").

Upstream columns (train split): key (int), prompt (str), instruction_id_list (list of str), kwargs (list of
dicts, one per instruction; the Hub's parquet fills every kwarg name, None where unused). As lm-eval's `ifeval`
task asks it (lm_eval/tasks/ifeval/ifeval.yaml: `doc_to_text: prompt`, zero-shot, greedy, `max_gen_toks:
1280`): the prompt, as the row holds it, is the one user message. Scored by lm-eval's own checkers
(`proctor.scoring.ifeval`): a sample is correct when every instruction is followed strictly; results.json adds
the four IFEval metrics (`proctor.metrics.ifeval`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.formats.convert import question_to_item
from ..data.prompts import ZERO_SHOT, RenderedPrompts, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.ifeval import IFEVAL_RULE, POLICY, kwargs_problem, require_checkers
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, fetch, parse_list_cell

NAME = "ifeval"
# the Hub's google/IFEval as of 2024-04 (lm-eval reads its current commit; the run records the one it read)
SOURCE = HubSource("google/IFEval", split="train")
SIZE = 541
COLUMNS = ("key", "prompt", "instruction_id_list", "kwargs")
TEMPLATE = "{prompt}"  # lm-eval's doc_to_text: the row's prompt, nothing added


@dataclass
class IFEvalPrompts(RenderedPrompts):
    """The row's prompt, verbatim, as the one user message (lm-eval's `doc_to_text: prompt`)."""

    kinds: tuple[str, ...] = (ZERO_SHOT,)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        return str(item.metadata["prompt"])

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        return text_hash(NAME, kind, TEMPLATE, IFEVAL_RULE.source, POLICY)

    def logprob_context(self, item: Item) -> str:
        return str(item.metadata["prompt"])


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The prompts, each with its instructions; refused (one line) when lm-eval's checkers cannot run here."""
    registry = require_checkers()
    rows = fetch(SOURCE, data_file)
    questions = convert_rows(rows, COLUMNS, lambda row: _question(row, registry))
    dataset = Dataset(name=NAME, description="IFEval: prompts with verifiable instructions (google/IFEval).",
                      questions=questions, prompts={ZERO_SHOT: TEMPLATE},
                      metadata={"source": SOURCE.repo, "split": SOURCE.split,
                                "revision": rows.provenance.get("revision")})
    return Loaded(dataset=dataset, prompts=IFEvalPrompts(), provenance=dict(rows.provenance))


def to_items(rows: Rows) -> list[Item]:
    """The rows as items (tests and bench scripts)."""
    registry = require_checkers()
    return [question_to_item(q, NAME) for q in convert_rows(rows, COLUMNS, lambda row: _question(row, registry))]


def _question(row: dict[str, Any], registry: dict[str, Any]) -> Question:
    ids = _list(row["instruction_id_list"], "instruction_id_list")
    kwargs = _list(row["kwargs"], "kwargs")
    if not ids or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"instruction_id_list: expected a non-empty list of ids, got {ids!r}")
    unknown = [i for i in ids if i not in registry]
    if unknown:
        raise ValueError(f"instruction_id_list: lm-eval has no checker for {', '.join(map(repr, unknown))}")
    if len(kwargs) != len(ids) or not all(isinstance(k, dict) for k in kwargs):
        raise ValueError(f"kwargs: expected {len(ids)} dicts (one per instruction), got {kwargs!r:.80}")
    prompt = row["prompt"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("prompt: empty")
    if (why := kwargs_problem(registry, ids, kwargs, prompt)) is not None:
        raise ValueError(why)
    key = row["key"]
    if isinstance(key, bool) or not str(key).strip().lstrip("-").isdigit():
        raise ValueError(f"key: expected an integer, got {key!r}")
    return Question(id=int(str(key)), original_id=str(key), question=prompt.strip(), choices={},
                    answer="; ".join(ids), tags=list(ids),
                    metadata={"key": int(str(key)), "prompt": prompt, "instruction_id_list": list(ids),
                              "kwargs": [dict(k) for k in kwargs]})


def _list(value: Any, field: str) -> list[Any]:
    """A list column (a JSON/Python list literal in csv copies)."""
    if isinstance(value, str):
        value = parse_list_cell(value.strip(), field)
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{field}: expected a list, got {value!r:.60}")
    return list(value)


BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "IFEval: verifiable instructions, lm-eval's checkers (strict/loose)",
                      max_tokens=1280, answer_rules={ZERO_SHOT: IFEVAL_RULE}),)
