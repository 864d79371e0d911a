"""GPQA (Idavidrein/gpqa, gated): graduate-level questions in biology, physics and chemistry.

Configs gpqa_main (448), gpqa_diamond (198), gpqa_extended (546) and gpqa_experts, all in a `train`
split with columns Question, Correct Answer, Incorrect Answer 1-3, Explanation, Record ID,
High-level domain, Subdomain, Writer's Difficulty Estimate and many more (validator notes, which
are ignored).

Upstream stores the correct answer first, so the four options are shuffled: each question gets its
own RNG seeded from (seed, Record ID), so its order depends only on the seed and the question, not on
row order or on which other questions were loaded. The order used (which upstream column each letter
holds) and the seed are kept in the question's metadata.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..data.formats.convert import question_to_item
from ..data.formats.problems import validation_problems
from ..data.prompts import (
    CHAIN_OF_THOUGHT,
    FIVE_SHOT,
    ZERO_SHOT,
    KindDefaults,
    PoolShotPrompts,
    check_kind,
    choice_lines,
    pick_shots,
    pool_digest,
)
from ..data.records import LETTERS, Dataset, Item, Question
from ..data.tasks import text_hash
from ..util.errors import InputError, Problem, ProctorError
from ..util.textio import read_text
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, fetch, file_sha256, reason, require_columns

REPO = "Idavidrein/gpqa"
CONFIGS = {
    "gpqa-main": "gpqa_main",
    "gpqa-diamond": "gpqa_diamond",
    "gpqa-extended": "gpqa_extended",
    "gpqa-experts": "gpqa_experts",
}
SIZES = {"gpqa-main": 448, "gpqa-diamond": 198, "gpqa-extended": 546, "gpqa-experts": 60}
CORRECT = "Correct Answer"
INCORRECT = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
COLUMNS = ("Question", CORRECT, *INCORRECT)


def source(name: str) -> HubSource:
    return HubSource(REPO, split="train", config=CONFIGS[name], gated=True)



# --------------------------------------------------------------------------- GPQA

# The authors' baselines (idavidrein/gpqa baselines/utils.py: zero_shot_prompt, chain_of_thought_prompt,
# five_shot_prompt, generate_prompt_from_examples), as llm-wc reproduces them in src/llm_wc/gpqa.py at
# iamsikun/llm-wc@ef7cb496cd62f394fc1ab2ec24e5951b609f3053 (`prompt_gpqa`).
LLMWC_COMMIT = "ef7cb496cd62f394fc1ab2ec24e5951b609f3053"
COT_EXAMPLES_FILE = "chain_of_thought_examples.json"
ZERO_SHOT_COT, FIVE_SHOT_POOL = "zero_shot_cot", "five_shot_pool"  # proctor's own variants
# openai/simple-evals@ee3b0318d8d1d9d72755a4120879be65f7c07e9e common.py QUERY_TEMPLATE_MULTICHOICE (gpqa_eval.py):
# the template model cards report GPQA-Diamond with; read by its ANSWER_PATTERN_MULTICHOICE (`simple-evals-mcq`)
SIMPLE_EVALS = "simple-evals"
SIMPLE_EVALS_COMMIT = "ee3b0318d8d1d9d72755a4120879be65f7c07e9e"
# simple-evals' samplers (sampler/o_chat_completion_sampler.py, sampler/chat_completion_sampler.py; their model
# table in simple_evals.py): the o-series sends the messages alone (no system message, no temperature, no token
# limit); every other chat model is a ChatCompletionSampler with OPENAI_SYSTEM_MESSAGE_API, temperature 0.5 (its
# default) and max_tokens=2048
O_SERIES, CHAT = "o-series", "chat"
SAMPLERS = (O_SERIES, CHAT)
SIMPLE_EVALS_CHAT = KindDefaults(max_tokens=2048, system="You are a helpful assistant.", temperature=0.5)
SIMPLE_EVALS_O_SERIES = KindDefaults(sends_temperature=False, sends_max_tokens=False)  # no temperature, no limit
SIMPLE_EVALS_TEMPLATE = (
    "Answer the following multiple choice question. The last line of your response should be of the following "
    "format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by step before answering."
    "\n\n{question}\n\n{choices}"
)
GPQA_BASE = "What is the correct answer to this question: {question}\n\nChoices:\n{choices}"
COT_HEAD = ("Here are some example questions from experts. An explanation is given before the final answer. "
            "Answer the final question yourself, giving your reasoning beforehand.\n")
FIVE_HEAD = ("Here are some example questions from experts. Answer the final question yourself, following the "
             "format of the previous questions exactly.\n")
COT_TAIL = ("\nGive step by step reasoning before you answer, and when you're ready to answer, please use the "
            'format "The correct answer is (insert answer here)":\n')
FIVE_TAIL = '\nWhen you\'re ready to answer, please use the format "The correct answer is (insert answer here).'
REFERENCE_TEMPLATES: dict[str, str] = {
    ZERO_SHOT: GPQA_BASE + '\n\nFormat your response as follows: "The correct answer is (insert answer here)"',
    CHAIN_OF_THOUGHT: COT_HEAD + "{examples}Question: {question}\nChoices:\n{choices}" + COT_TAIL,
    FIVE_SHOT: FIVE_HEAD + "{examples}Question: {question}\nChoices:\n{choices}" + FIVE_TAIL,
    SIMPLE_EVALS: SIMPLE_EVALS_TEMPLATE,
}
OWN_TEMPLATES: dict[str, str] = {
    ZERO_SHOT_COT: GPQA_BASE
    + "\n\nGive step by step reasoning before you answer, and when you're ready to answer, please use the "
    'format "The correct answer is (insert answer here)".\nLet\'s think step by step:',
    FIVE_SHOT_POOL: FIVE_HEAD + "{examples}Question: {question}\nChoices:\n{choices}\n"
    'When you\'re ready to answer, please use the format "The correct answer is (insert answer here)".',
}
GPQA_TEMPLATES: dict[str, str] = {**REFERENCE_TEMPLATES, **OWN_TEMPLATES}
POOL_EXAMPLE = "Question: {question}\nChoices:\n{choices}\nThe correct answer is ({answer})\n"


class CotExample(BaseModel):
    """One entry of the authors' chain_of_thought_examples.json (`{"questions": [...]}`)."""

    model_config = ConfigDict(extra="allow")

    question: str
    choices: dict[str, str]
    explanation: str
    correct_answer: str


class CotExamples(BaseModel):
    model_config = ConfigDict(extra="allow")

    questions: list[CotExample]


def read_cot_examples(path: str | Path) -> list[CotExample]:
    """The examples file; a malformed one is `path: field: what is wrong`."""
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise InputError.at(path, f"malformed JSON: {e.msg}", e.lineno) from None
    try:
        return CotExamples.model_validate(data).questions
    except ValidationError as e:
        raise InputError(validation_problems(e, path, None)) from None


def render_examples(examples: Sequence[CotExample], *, with_explanations: bool) -> str:
    """`generate_prompt_from_examples`: each example's choices in the file's order, its explanation after
    "Let's think step by step: " (chain of thought only), then its answer."""
    out = ""
    for q in examples:
        out += f"Question: {q.question}\nChoices:\n" + "".join(f"({k}) {v}\n" for k, v in q.choices.items())
        if with_explanations:
            out += f"Let's think step by step: \n{q.explanation}\n"
        out += f"The correct answer is ({q.correct_answer})\n"
    return out


@dataclass
class GpqaPrompts(PoolShotPrompts):
    """GPQA's baseline prompts over the seeded shuffled choices.

    Reference kinds (idavidrein/gpqa baselines/utils.py, via llm-wc@ef7cb496 src/llm_wc/gpqa.py):
    `zero_shot`; with the authors' chain_of_thought_examples.json, `chain_of_thought` (the examples with
    their explanations) and `five_shot` (upstream `5_shot`: the same examples, answers only); `simple-evals`:
    openai/simple-evals' multiple-choice template (model cards' GPQA-Diamond; its own shuffle is not kept).
    proctor's own: `zero_shot_cot` (the base prompt asking for reasoning) and `five_shot_pool` (five other
    questions of the set, picked from the seed)."""

    cot_examples: list[CotExample] | None = None
    kinds: tuple[str, ...] = field(init=False)

    benchmark = "gpqa"
    TEMPLATES = GPQA_TEMPLATES
    EXAMPLE = POOL_EXAMPLE

    def __post_init__(self) -> None:
        with_file = (CHAIN_OF_THOUGHT, FIVE_SHOT) if self.cot_examples is not None else ()
        self.kinds = (ZERO_SHOT, *with_file, SIMPLE_EVALS, ZERO_SHOT_COT, FIVE_SHOT_POOL)

    @property
    def templates(self) -> dict[str, str]:
        return {k: self.TEMPLATES[k] for k in self.kinds}

    def _fields(self, item: Item, style: str = "({letter}) {text}") -> dict[str, str]:
        choices = item.metadata.get("choices_raw") or item.choices or {}
        question = item.metadata.get("question_raw") or item.prompt
        return {"question": str(question), "choices": choice_lines(dict(choices), style)}

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, self.benchmark)
        examples = ""
        if kind in (CHAIN_OF_THOUGHT, FIVE_SHOT):
            examples = render_examples(self.cot_examples or [], with_explanations=kind == CHAIN_OF_THOUGHT)
        elif kind == FIVE_SHOT_POOL:
            examples = "".join(self.EXAMPLE.format(**self._fields(ex), answer=ex.best_answer)
                               for ex in pick_shots(self.pool, item.identifier, self.seed))
        elif kind == SIMPLE_EVALS:  # simple-evals lists the options as `A) text`
            return self.TEMPLATES[kind].format(**self._fields(item, "{letter}) {text}"))
        return self.TEMPLATES[kind].format(**self._fields(item), examples=examples)

    def fewshot_texts(self, item: Item, kind: str) -> list[str]:
        """The examples shown before `item` under `kind`: the authors' file as the kind renders it (chain of
        thought with the explanations, five-shot without), or five_shot_pool's picks from the set."""
        if kind in (CHAIN_OF_THOUGHT, FIVE_SHOT):
            return [render_examples(self.cot_examples or [], with_explanations=kind == CHAIN_OF_THOUGHT)]
        if kind == FIVE_SHOT_POOL:
            return [self.EXAMPLE.format(**self._fields(ex), answer=ex.best_answer)
                    for ex in pick_shots(self.pool, item.identifier, self.seed)]
        return []

    def model_family(self, kind: str, given: str | None, model: str, sends_system: bool = True) -> str | None:
        """simple-evals' sampler for `kind` (None for the other kinds): `given`, else `o-series` for OpenAI's
        o-models (o1, o3-mini, o4-mini…: the model name starts with `o` and a digit) and for a backend that cannot
        send a system message (`scripted:`), else `chat`."""
        if kind != SIMPLE_EVALS:
            return None
        if given is not None:
            if given not in SAMPLERS:
                raise ProctorError(f"sampler: expected one of {', '.join(SAMPLERS)}, got {given!r}")
            return given
        name = model.partition(":")[2].rsplit("/", 1)[-1].lower()
        return O_SERIES if re.match(r"o\d", name) or not sends_system else CHAT

    def request_defaults(self, kind: str, family: str | None = None) -> KindDefaults:
        """simple-evals' samplers: the chat sampler's system message, temperature and budget for `chat`; no
        temperature for `o-series`; nothing for the other kinds (or without a family: proctor's defaults)."""
        if kind != SIMPLE_EVALS or family is None:
            return KindDefaults()
        return SIMPLE_EVALS_CHAT if family == CHAT else SIMPLE_EVALS_O_SERIES

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, self.benchmark)
        parts = [kind, self.TEMPLATES[kind]]
        if kind in (CHAIN_OF_THOUGHT, FIVE_SHOT):
            parts.append(render_examples(self.cot_examples or [], with_explanations=True))
        if kind == FIVE_SHOT_POOL:
            parts += [self.EXAMPLE, f"seed={self.seed}", pool_digest(self.pool)]
        return text_hash(*parts)

    def logprob_context(self, item: Item) -> str:
        choices = choice_lines(item.choices or {}, "({letter}) {text}")
        return GPQA_BASE.format(question=item.prompt, choices=choices) + "\nAnswer:"


def load(name: str, data_file: str | Path | None = None, seed: int = 0,
         cot_examples: str | Path | None = None, sampler: str | None = None) -> Loaded:
    """One GPQA config as a seed-001 Dataset with choices shuffled from `seed`; the authors' examples file
    from `cot_examples`, else a chain_of_thought_examples.json beside the data file (or in its prompts/);
    `sampler` (simple-evals' model family) changes no prompt: resolve reads it (`GpqaPrompts.model_family`)."""
    if sampler is not None and sampler not in SAMPLERS:
        raise ProctorError(f"sampler: expected one of {', '.join(SAMPLERS)}, got {sampler!r}")
    rows = fetch(source(name), data_file)
    questions = to_questions(rows, name, seed)
    pool = [question_to_item(q, name) for q in questions]  # five-shot examples: other questions of the set
    examples_path = Path(cot_examples) if cot_examples is not None else _beside(data_file)
    examples = read_cot_examples(examples_path) if examples_path is not None else None
    prompts = GpqaPrompts(pool=pool, seed=seed, cot_examples=examples)
    dataset = Dataset(
        name=name,
        description=f"GPQA {CONFIGS[name].removeprefix('gpqa_')} set: Google-proof graduate-level questions.",
        questions=questions,
        prompts=prompts.templates,
        metadata={
            "source": REPO,
            "config": CONFIGS[name],
            "split": "train",
            "revision": rows.provenance.get("revision"),
            "choice_order_seed": seed,
        },
    )
    provenance = dict(rows.provenance)
    if examples_path is not None:
        provenance["cot_examples"] = {"path": str(examples_path.resolve()), "sha256": file_sha256(examples_path)}
    return Loaded(dataset=dataset, prompts=prompts, provenance=provenance, choice_order_seed=seed)


def _beside(data_file: str | Path | None) -> Path | None:
    """chain_of_thought_examples.json in the data file's folder (or the data folder), or in its prompts/."""
    if data_file is None:
        return None
    folder = Path(data_file) if Path(data_file).is_dir() else Path(data_file).parent
    return next((p for p in (folder / COT_EXAMPLES_FILE, folder / "prompts" / COT_EXAMPLES_FILE) if p.is_file()),
                None)


def choice_order(seed: int, record_id: str) -> list[str]:
    """The upstream column each letter A-D shows, shuffled by an RNG private to this question."""
    digest = hashlib.sha256(f"gpqa-choices:{seed}:{record_id}".encode()).digest()
    order = [CORRECT, *INCORRECT]
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def to_questions(rows: Rows, name: str, seed: int) -> list[Question]:
    require_columns(rows, COLUMNS)
    problems: list[Problem] = []
    out: list[Question] = []
    for i, row in enumerate(rows.rows):
        texts = {c: _text(row.get(c)) for c in COLUMNS}
        empty = [c for c, t in texts.items() if not t]
        if empty:
            problems.append(rows.error(i, "empty", empty[0]))
            continue
        record_id = _text(row.get("Record ID")) or f"row-{i}"
        order = choice_order(seed, record_id)
        try:
            out.append(
                Question(
                    id=i,
                    original_id=record_id,
                    question=texts["Question"],
                    choices={LETTERS[k]: texts[col] for k, col in enumerate(order)},
                    answer=LETTERS[order.index(CORRECT)],
                    category=_text(row.get("High-level domain")) or None,
                    subcategory=_text(row.get("Subdomain")) or None,
                    difficulty=_text(row.get("Writer's Difficulty Estimate")) or None,
                    metadata={
                        "choice_order": order,
                        "choice_order_seed": seed,
                        **_raw_texts(row, order),
                        **({"explanation": e} if (e := _text(row.get("Explanation"))) else {}),
                    },
                )
            )
        except ValueError as e:
            problems.append(rows.error(i, reason(e)))
    if problems:
        raise InputError(problems)
    return out


def _raw_texts(row: dict[str, Any], order: list[str]) -> dict[str, Any]:
    """The question and choices as the CSV holds them, when stripping changed them (the authors' scripts
    send them as read)."""
    question, choices = str(row["Question"]), {LETTERS[k]: str(row[col]) for k, col in enumerate(order)}
    out: dict[str, Any] = {}
    if question != question.strip():
        out["question_raw"] = question
    if any(v != v.strip() for v in choices.values()):
        out["choices_raw"] = choices
    return out


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def _builtin(name: str, blurb: str) -> Builtin:
    # the GPQA authors publish no budget; 32,768 is what reasoning-model reports use for GPQA diamond
    return Builtin(name, partial(load, name), source(name), SIZES[name], blurb, max_tokens=32_768,
                   answer_rules=ANSWER_RULES_BY_KIND)


# the authors' baselines read their own prompts; proctor's variants are read by proctor's reader
ANSWER_RULES_BY_KIND: dict[str, str | None] = {ZERO_SHOT: "gpqa-baselines", CHAIN_OF_THOUGHT: "gpqa-baselines",
                                               FIVE_SHOT: "gpqa-baselines", SIMPLE_EVALS: "simple-evals-mcq",
                                               ZERO_SHOT_COT: None,
                                               FIVE_SHOT_POOL: None}


BENCHMARKS = (
    _builtin("gpqa-main", "GPQA main set (gated)"),
    _builtin("gpqa-diamond", "GPQA diamond: the highest-quality subset (gated)"),
    _builtin("gpqa-extended", "GPQA extended set (gated)"),
    _builtin("gpqa-experts", "GPQA experts config (gated)"),
)
