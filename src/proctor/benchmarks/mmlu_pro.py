"""MMLU-Pro (TIGER-Lab/MMLU-Pro): 12,032 test questions with up to ten options, 14 categories.

Upstream columns: question_id, question, options (list; "N/A" pads short lists), answer (letter),
answer_index, cot_content, category, src. The test split is evaluated; the validation split (70 rows,
five per category) supplies the five-shot chain-of-thought examples of the question's category.

Offline, `data_file` is the test split (parquet, csv or jsonl) or a directory holding `test*` and
`validation*` files; next to a test file, a file named like it with `test` → `validation` is used for
five-shot when present.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.prompts import (
    CHAIN_OF_THOUGHT,
    FIVE_SHOT,
    N_SHOTS,
    ZERO_SHOT,
    KindDefaults,
    RenderedPrompts,
    check_kind,
    choice_lines,
)
from ..data.records import LETTERS, Dataset, Item, Question
from ..data.tasks import text_hash
from ..util.errors import InputError
from .builtin import Builtin
from .hub import (
    FILE_SUFFIXES,
    HubSource,
    Loaded,
    Rows,
    convert_rows_skipping,
    fetch,
    parse_list_cell,
    require_columns,
)

NAME = "mmlu-pro"
SOURCE = HubSource("TIGER-Lab/MMLU-Pro", split="test")
VALIDATION = HubSource("TIGER-Lab/MMLU-Pro", split="validation")
SIZE = 12_032
COLUMNS = ("question_id", "question", "options", "answer", "answer_index", "category")
NA = "N/A"
log = logging.getLogger("proctor.benchmarks.mmlu_pro")



# --------------------------------------------------------------------------- MMLU-Pro

# TIGER-AI-Lab/MMLU-Pro, read at commit f418b116db00b065c2aea046518d8fcf74d39872 (files last changed there by
# 26d41d02c9f6e1794e74a2740ed378cb0562faea): the two scripts' prompts, byte for byte.
TIGER_COMMIT = "f418b116db00b065c2aea046518d8fcf74d39872"
TIGER_API, TIGER_LOCAL = "tiger-api", "tiger-local"
API_HEADER = (
    "The following are multiple choice questions (with answers) about {category}. Think step by step and then "
    'output the answer in the format of "The answer is (X)" at the end.\n\n'
)
DIRECT_HEADER = (
    "The following are multiple choice questions (with answers) about {category}. "
    'Output the answer in the format of "The answer is (X)" at the end.\n\n'
)
# cot_prompt_lib/initial_prompt.txt (its three trailing newlines included), `{$}` standing for the category
LOCAL_INITIAL_PROMPT = (
    "The following are multiple choice questions (with answers) about {$}. Think step by step and then finish "
    'your answer with "the answer is (X)" where X is the correct letter choice.\n\n\n'
)
LOCAL_STOP = ("Question:",)
LOCAL_MAX_MODEL_LENGTH, LOCAL_MAX_NEW_TOKENS = 4096, 2048  # evaluate_from_local.py's constants
API_MAX_TOKENS = 4000  # evaluate_from_api.py's max_tokens

# lm-evaluation-harness 0.4.13, lm_eval/tasks/mmlu_pro/ (task version 3.1): `description` of each category's
# yaml, utils.py's `format_cot_example` / `format_cot_target`, _default_template_yaml's five first validation
# examples of the category (`first_n`), target delimiter " ", few-shot delimiter "\n\n", stop "Question:"
LMEVAL = "lm-eval"
LMEVAL_DESCRIPTION = (
    "The following are multiple choice questions (with answers) about {category}. Think step by step and then "
    'finish your answer with "the answer is (X)" where X is the correct letter choice.\n'
)
LMEVAL_ASKED = "Answer: Let's think step by step."
LMEVAL_SHOTS, LMEVAL_MAX_TOKENS, LMEVAL_STOP = 5, 2048, ("Question:",)


def api_block(question: str, options: Sequence[str]) -> str:
    """evaluate_from_api.py's `format_example` up to "Answer:": `Options: A. …` on the Options line, every
    option followed by a newline."""
    return f"Question: {question}\nOptions: " + "".join(f"{k}. {opt}\n" for k, opt in zip(LETTERS, options))


def api_example(question: str, options: Sequence[str], cot_content: str = "") -> str:
    """evaluate_from_api.py's `format_example`, quirks included: "A: " cut from the worked answer, the question
    asked answered "Let's think step by step.", a blank line after each answer."""
    if cot_content == "":
        cot_content = "Let's think step by step."
    cot_content = cot_content.removeprefix("A: ")
    return api_block(question, options) + "Answer: " + cot_content + "\n\n"


def local_example(question: str, options: Sequence[str], cot_content: str | None) -> str:
    """evaluate_from_local.py's `format_cot_example`: `Question:\n…\nOptions:\n…`; an example's worked answer
    with "A: Let's think step by step." turned into "Answer: Let's think step by step."; the question asked
    ends "Answer: Let's think step by step." (`cot_content` None)."""
    text = f"Question:\n{question}\nOptions:\n"
    text += "".join(f"{letter}. {opt}\n" for letter, opt in zip(LETTERS, options))
    if cot_content is None:
        return text + "Answer: Let's think step by step."
    return text + cot_content.replace("A: Let's think step by step.", "Answer: Let's think step by step.") + "\n\n"


def lmeval_example(question: str, options: Sequence[str], cot_content: str | None) -> str:
    """lm-eval's `format_cot_example` (options stripped, "N/A" kept, ten at most) ending "Answer: Let's think
    step by step."; a few-shot example then gets " " + its `cot_content` without "A: Let's think step by step. "
    + "\n\n" (`format_cot_target` and the delimiters)."""
    text = f"Question:\n{question}\nOptions:\n"
    text += "".join(f"{letter}. {opt.strip()}\n" for letter, opt in zip(LETTERS[:10], options))
    text += LMEVAL_ASKED
    if cot_content is None:
        return text
    return text + " " + cot_content.replace("A: Let's think step by step. ", "") + "\n\n"


@dataclass(frozen=True)
class CotExample:
    """One few-shot example: a validation question (as upstream stores it) with its worked answer."""

    question: str
    options: tuple[str, ...]
    cot: str
    options_raw: tuple[str, ...] | None = None  # as upstream stores them, "N/A" included (lm-eval shows them)


def _question_text(item: Item) -> str:
    """The question as upstream stores it (the loader strips it; the scripts do not)."""
    raw = item.metadata.get("question_raw")
    return raw if isinstance(raw, str) else item.prompt


def _item_options(item: Item) -> list[str]:
    return list((item.choices or {}).values())


def _raw_options(item: Item) -> list[str]:
    """The options as upstream stores them ("N/A" padding included), for lm-eval's prompt."""
    raw = item.metadata.get("options_raw")
    return [str(o) for o in raw] if isinstance(raw, list) else _item_options(item)


@dataclass
class MmluProPrompts(RenderedPrompts):
    """TIGER-Lab's MMLU-Pro prompts.

    - `five_shot` / `tiger-api`: evaluate_from_api.py's one user message (also what llm-wc's
      src/llm_wc/mmlu_pro.py sends): instruction + every validation example of the question's category with
      its `cot_content` + the question (TIGER-AI-Lab/MMLU-Pro@f418b116, `single_request`/`format_example`).
    - `tiger-local`: evaluate_from_local.py's completion prompt (`generate_cot_prompt`): the initial prompt
      of cot_prompt_lib/initial_prompt.txt, then the first k validation examples, k from 5 down until the
      prompt has fewer than 4096 - 2048 tokens by the model's tokenizer (`count_tokens`; without one, five);
      generation stops at "Question:".
    - `lm-eval`: lm-evaluation-harness's `mmlu_pro_<category>` context (`lmeval_prompt`); read by its rule.
    - `chain_of_thought`: the API format with no examples; `zero_shot`: proctor's direct-answer variant.
    """

    examples: dict[str, list[CotExample]] = field(default_factory=dict)
    shots: int = N_SHOTS
    count_tokens: Callable[[str], int] | None = None  # the model's tokenizer, for tiger-local's fitting
    kinds: tuple[str, ...] = field(init=False)
    _shown: dict[tuple[str, str], list[str]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # the authors' protocol (five-shot CoT) first, when validation examples were loaded
        with_examples = (FIVE_SHOT, TIGER_API, TIGER_LOCAL, LMEVAL) if self.examples else ()
        self.kinds = (*with_examples, CHAIN_OF_THOUGHT, ZERO_SHOT)

    @property
    def templates(self) -> dict[str, str]:
        text = {ZERO_SHOT: DIRECT_HEADER + "{question}Answer: ", CHAIN_OF_THOUGHT: API_HEADER + "{question}",
                FIVE_SHOT: API_HEADER + "{examples}{question}", TIGER_API: API_HEADER + "{examples}{question}",
                TIGER_LOCAL: LOCAL_INITIAL_PROMPT + "\n{examples}{question}",
                LMEVAL: LMEVAL_DESCRIPTION + "{examples}{question}"}
        return {k: text[k] for k in self.kinds}

    def request_defaults(self, kind: str) -> KindDefaults:
        if kind == TIGER_LOCAL:
            return KindDefaults(stop=LOCAL_STOP, max_tokens=LOCAL_MAX_NEW_TOKENS)
        if kind == LMEVAL:
            return KindDefaults(stop=LMEVAL_STOP, max_tokens=LMEVAL_MAX_TOKENS)
        return KindDefaults(max_tokens=API_MAX_TOKENS)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, "mmlu-pro")
        category = item.category or "general knowledge"
        if kind == TIGER_LOCAL:
            return self.local_prompt(item)
        if kind == LMEVAL:
            return self.lmeval_prompt(item)
        if kind == ZERO_SHOT:
            asked = api_block(_question_text(item), _item_options(item))
            return DIRECT_HEADER.format(category=category) + asked + "Answer: "
        shots = self.examples.get(category, []) if kind in (FIVE_SHOT, TIGER_API) else []
        examples = "".join(api_example(e.question, e.options, e.cot) for e in shots)
        asked = api_example(_question_text(item), _item_options(item))
        return API_HEADER.format(category=category) + examples + asked

    def local_prompt(self, item: Item) -> str:
        """evaluate_from_local.py's prompt: k = 5, 4, … 0 examples until it fits (0 is sent whatever its length)."""
        category = item.category or ""
        head = LOCAL_INITIAL_PROMPT.replace("{$}", category) + "\n"
        question = local_example(_question_text(item), _item_options(item), None)
        shots = self.examples.get(category, [])
        for k in range(self.shots, -1, -1):
            prompt = head + "".join(local_example(e.question, e.options, e.cot) for e in shots[:k]) + question
            if self.count_tokens is None or k == 0:
                return prompt
            if self.count_tokens(prompt) < LOCAL_MAX_MODEL_LENGTH - LOCAL_MAX_NEW_TOKENS:
                return prompt
        raise AssertionError("unreachable: k == 0 returns")

    def lmeval_prompt(self, item: Item) -> str:
        """lm-eval's `mmlu_pro_<category>` context: the description, the category's first five validation
        examples, the question (as stored, options "N/A" included)."""
        category = item.category or ""
        shots = self.examples.get(category, [])[:LMEVAL_SHOTS]
        examples = "".join(lmeval_example(e.question, e.options_raw or e.options, e.cot) for e in shots)
        return (LMEVAL_DESCRIPTION.format(category=category) + examples
                + lmeval_example(_question_text(item), _raw_options(item), None))

    def fewshot_texts(self, item: Item, kind: str) -> list[str]:
        """The worked examples shown before `item` under `kind`, as each kind renders them (tiger-local: the
        first `shots` it may fit, before the tokenizer drops any)."""
        category = item.category or ("general knowledge" if kind in (FIVE_SHOT, TIGER_API) else "")
        key = (kind, category)
        if key not in self._shown:
            shots = self.examples.get(category, [])
            self._shown[key] = (
                [api_example(e.question, e.options, e.cot) for e in shots] if kind in (FIVE_SHOT, TIGER_API)
                else [local_example(e.question, e.options, e.cot) for e in shots[: self.shots]] if kind == TIGER_LOCAL
                else [lmeval_example(e.question, e.options_raw or e.options, e.cot) for e in shots[:LMEVAL_SHOTS]]
                if kind == LMEVAL else [])
        return self._shown[key]

    def logprob_context(self, item: Item) -> str:
        options = choice_lines(item.choices or {}, "{letter}. {text}")
        return f"Question: {item.prompt}\nOptions:\n{options}\nAnswer:"

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, "mmlu-pro")
        parts = [kind, self.templates[kind]]
        if kind in (FIVE_SHOT, TIGER_API, TIGER_LOCAL, LMEVAL):
            parts += [f"{c}\x1e{e.question}\x1e{e.options}\x1e{e.cot}" for c in sorted(self.examples)
                      for e in self.examples[c]]
        if kind == LMEVAL:
            parts += [f"{c}\x1e{e.options_raw}" for c in sorted(self.examples) for e in self.examples[c]]
        if kind == TIGER_LOCAL:
            parts.append(f"shots={self.shots};tokenizer={'yes' if self.count_tokens else 'none'}")
        return text_hash(*parts)


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The test split as a seed-001 Dataset, with five-shot examples from the validation split."""
    test_file, val_file = _local_files(data_file) if data_file is not None else (None, None)
    rows = fetch(SOURCE, test_file)
    questions, skipped = usable_questions(rows)
    val_rows = fetch(VALIDATION, val_file) if data_file is None or val_file is not None else None
    examples = few_shot_examples(val_rows) if val_rows is not None else {}
    prompts = MmluProPrompts(examples=examples)
    provenance = dict(rows.provenance)
    if skipped:
        provenance["skipped_rows"] = skipped
    if val_rows is not None:
        provenance["fewshot"] = {k: v for k, v in val_rows.provenance.items() if k != "source"}
    dataset = Dataset(
        name=NAME,
        description="MMLU-Pro: a harder, ten-option successor to MMLU (TIGER-Lab).",
        questions=questions,
        prompts=prompts.templates,
        metadata={"source": SOURCE.repo, "split": SOURCE.split, "revision": provenance.get("revision")},
    )
    return Loaded(dataset=dataset, prompts=prompts, provenance=provenance)


def to_questions(rows: Rows) -> list[Question]:
    """One Question per row; "N/A" options dropped and the answer letter re-derived from answer_index.

    A question left with one or two options is kept (TIGER-Lab's scripts run every row). A row that cannot
    be scored (no options, an answer that is not one of them) is named in a warning and skipped; only a file
    with no usable row at all is refused."""
    return usable_questions(rows)[0]


def usable_questions(rows: Rows) -> tuple[list[Question], list[str]]:
    """The questions and, warned about, the rows skipped (`path:line: why`)."""
    questions, skipped = convert_rows_skipping(rows, COLUMNS, _question)
    for problem in skipped:
        log.warning("skipped %s", problem)
    return questions, [str(p) for p in skipped]


def _question(row: dict[str, Any]) -> Question:
    options = _options(row["options"])
    kept, answer = _drop_na(options, int(row["answer_index"]), str(row["answer"]).strip())
    return Question(
        id=int(row["question_id"]),
        original_id=str(row["question_id"]),
        question=str(row["question"]).strip(),
        choices=dict(zip(LETTERS, kept)),
        answer=answer,
        category=str(row["category"]),
        subcategory=str(row["src"]) if row.get("src") else None,
        metadata=({"src": row.get("src")} if row.get("src") else {}) | _raw_question(row),
    )


def _raw_question(row: dict[str, Any]) -> dict[str, Any]:
    """The question as upstream stores it, when stripping changed it: the reference prompts send it as is; and
    the options with their "N/A" padding, when there is some (lm-eval's prompt shows it)."""
    raw = str(row["question"])
    out: dict[str, Any] = {"question_raw": raw} if raw != raw.strip() else {}
    options = _options(row["options"])
    if any(o.strip() == NA for o in options):
        out["options_raw"] = options
    return out


def few_shot_examples(rows: Rows) -> dict[str, list[CotExample]]:
    """Validation rows grouped by category, in upstream order (the API script shows them all, the local script
    the first five)."""
    require_columns(rows, ("question", "options", "cot_content", "category"))
    by_category: dict[str, list[CotExample]] = {}
    for i, row in enumerate(rows.rows):
        try:
            raw = tuple(_options(row["options"]))
        except ValueError as e:
            raise InputError(rows.error(i, str(e), "options")) from None
        options = tuple(o for o in raw if o != NA)  # the scripts' exact test
        example = CotExample(question=str(row["question"]), options=options, cot=str(row["cot_content"]),
                             options_raw=raw if raw != options else None)
        by_category.setdefault(str(row["category"]), []).append(example)
    return by_category


def _options(value: Any) -> list[str]:
    """Options as a list of strings; a CSV cell holds a JSON or Python list literal."""
    if isinstance(value, str):
        value = parse_list_cell(value, "options")
    if not isinstance(value, (list, tuple)) or not all(isinstance(o, str) for o in value):
        raise ValueError("options: expected a list of strings")
    return list(value)


def _drop_na(options: list[str], answer_index: int, answer: str) -> tuple[list[str], str]:
    """The options without "N/A" padding and the answer's letter among them (one option is enough)."""
    if not options:
        raise ValueError("no options")
    if not 0 <= answer_index < len(options):
        raise ValueError(f"answer_index {answer_index} is outside the {len(options)} options")
    if answer != LETTERS[answer_index]:
        raise ValueError(
            f"answer {answer!r} disagrees with answer_index {answer_index} ({LETTERS[answer_index]})"
        )
    if options[answer_index].strip() == NA:
        raise ValueError(f"the correct option {answer} is {NA!r}")
    kept = [o for o in options if o.strip() != NA]
    new_index = sum(1 for o in options[:answer_index] if o.strip() != NA)
    return kept, LETTERS[new_index]


def _local_files(data_file: str | Path) -> tuple[Path, Path | None]:
    """(test file, validation file or None) from a file or a snapshot directory."""
    p = Path(data_file)
    if p.is_dir():
        test = _find(p, "test")
        if test is None:
            raise InputError.at(p, "no test*.parquet/.csv/.jsonl file in this directory (or its data/)")
        return test, _find(p, "validation")
    sibling = p.with_name(p.name.replace("test", "validation")) if "test" in p.name else None
    return p, sibling if sibling is not None and sibling.is_file() else None


def _find(directory: Path, split: str) -> Path | None:
    for folder in (directory, directory / "data"):
        found = sorted(
            f for f in folder.glob(f"{split}*") if f.suffix.lower() in FILE_SUFFIXES and f.is_file()
        )
        if found:
            return found[0]
    return None


# TIGER-Lab's rule reads the replies to its scripts' prompts; proctor's own kinds (chain_of_thought: the API
# instruction with no examples, which no script sends; zero_shot: a bare letter after "Answer: ") are read by
# proctor's reader
ANSWER_RULES_BY_KIND: dict[str, str | None] = {FIVE_SHOT: "tiger-lab-mmlu-pro", TIGER_API: "tiger-lab-mmlu-pro",
                                               TIGER_LOCAL: "tiger-lab-mmlu-pro-local", CHAIN_OF_THOUGHT: None,
                                               ZERO_SHOT: None, LMEVAL: "lm-eval-mmlu-pro"}

BENCHMARKS = (
    # 4,000 tokens: TIGER-Lab's own evaluate_from_api.py setting for chain-of-thought answers; clustered by `src`,
    # the collection a question came from (ori_mmlu-<subject>, stemez-…, theoremQA-…, scibench-…)
    Builtin(NAME, load, SOURCE, SIZE, "14 subjects, up to 10 options; five-shot CoT from the validation split",
            max_tokens=4_000, answer_rules=ANSWER_RULES_BY_KIND, cluster="metadata.src"),
)
