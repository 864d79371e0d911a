"""BIG-Bench Hard (27 tasks) as lm-evaluation-harness asks and scores it: `bbh_cot_fewshot` and `bbh_cot_zeroshot`.

Upstream rows (SaylorTwift/bbh, the dataset lm-eval 0.4.x reads; lukaemon/bbh has the same schema): one config
per task, split test, columns `input` and `target`. An item's category is its task (per-task accuracy; the
macro is `macro_accuracy`).

The prompts, few-shot exemplars, stop sequences, filters and metric options are not copied into proctor: they
are read at load time from the installed lm_eval's task YAMLs (lm_eval/tasks/bbh/<variant>/<task>.yaml and the
template it includes), so they are lm-eval's bytes whatever its version, and proctor ships no BBH content (the
`bbh` extra installs lm_eval). Kinds:

* `cot_fewshot` (default): lm-eval's `bbh_cot_fewshot_<task>` — the task's description, its three exemplars
  (`first_n`), each `Q: …\\nA: Let's think step by step.\\n` + the worked answer, then the question; stopped at
  `</s>`, `Q`, or a blank line; read by the `get-answer` filter, scored by exact match.
* `cot_zeroshot`: lm-eval's `bbh_cot_zeroshot_<task>` — the description and the question; read by its
  `strict-match` filter, scored by exact match ignoring case and the template's `regexes_to_ignore`.

The context is sent as one user message (lm-eval's default is a plain completion; the bytes are the same).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import count
from pathlib import Path
from typing import Any

from ..data.formats.convert import question_to_item
from ..data.prompts import KindDefaults, RenderedPrompts, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.bbh import ExactMatch, Filter, TaskGrader, grader_rule
from ..util.errors import InputError, ProctorError
from .builtin import Builtin
from .hub import FILE_SUFFIXES, HubSource, Loaded, Rows, convert_rows, fetch, load_file

NAME = "bbh"
REPO = "SaylorTwift/bbh"
COLUMNS = ("input", "target")
TASKS = (
    "boolean_expressions", "causal_judgement", "date_understanding", "disambiguation_qa", "dyck_languages",
    "formal_fallacies", "geometric_shapes", "hyperbaton", "logical_deduction_five_objects",
    "logical_deduction_seven_objects", "logical_deduction_three_objects", "movie_recommendation",
    "multistep_arithmetic_two", "navigate", "object_counting", "penguins_in_a_table",
    "reasoning_about_colored_objects", "ruin_names", "salient_translation_error_detection", "snarks",
    "sports_understanding", "temporal_sequences", "tracking_shuffled_objects_five_objects",
    "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects", "web_of_lies",
    "word_sorting",
)
SIZE = 6511
COT_FEWSHOT, COT_ZEROSHOT = "cot_fewshot", "cot_zeroshot"
# each kind: lm-eval's task folder and the filter of it that proctor reproduces
VARIANTS = {COT_FEWSHOT: ("cot_fewshot", "get-answer"), COT_ZEROSHOT: ("cot_zeroshot", "strict-match")}
LMEVAL_DEFAULT_MAX_GEN_TOKS = 256  # lm-eval's generate_until default when a task YAML names none
INSTALL = "pip install 'proctor[bbh]'"


def source(task: str) -> HubSource:
    return HubSource(REPO, split="test", config=task)


# ------------------------------------------------------------------ lm-eval's task YAMLs


@dataclass(frozen=True)
class TaskConfig:
    """What one lm-eval BBH task YAML says (its template included)."""

    description: str
    doc_to_text: str
    doc_to_target: str
    target_delimiter: str
    fewshot_delimiter: str
    shots: tuple[dict[str, str], ...]
    stop: tuple[str, ...]
    max_tokens: int
    grader: TaskGrader


def lmeval_tasks_dir() -> Path:
    """The installed lm_eval's tasks/bbh folder (found without importing lm_eval, which is slow)."""
    from importlib.util import find_spec

    spec = find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ProctorError(f"BBH's prompts and filters are read from lm-eval's task files: {INSTALL}")
    return Path(next(iter(spec.submodule_search_locations))) / "tasks" / "bbh"


def _read_yaml(path: Path) -> dict[str, Any]:
    """A task YAML with its `include`s merged (local keys win); `!function` tags kept as text."""
    import yaml

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    Loader.add_constructor("!function", lambda loader, node: "!function " + str(loader.construct_scalar(node)))
    cfg = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    if not isinstance(cfg, dict):
        raise ProctorError(f"{path}: not a task YAML")
    merged: dict[str, Any] = {}
    includes = cfg.pop("include", [])
    for inc in includes if isinstance(includes, list) else [includes]:
        merged.update(_read_yaml(path.parent / inc))
    return merged | cfg


@cache
def task_config(kind: str, task: str) -> TaskConfig:
    """lm-eval's configuration of `task` for prompt `kind`, from its installed YAML."""
    folder, filter_name = VARIANTS[kind]
    path = lmeval_tasks_dir() / folder / f"{task}.yaml"
    if not path.is_file():
        raise ProctorError(f"{path}: lm-eval's BBH task file is missing ({INSTALL})")
    cfg = _read_yaml(path)
    fewshot = cfg.get("fewshot_config") or {}
    shots = tuple(fewshot.get("samples") or ()) if cfg.get("num_fewshot", 0) else ()
    if shots and fewshot.get("sampler", "first_n") != "first_n":
        raise ProctorError(f"{path}: sampler {fewshot.get('sampler')!r} is not first_n")
    gen = cfg.get("generation_kwargs") or {}
    return TaskConfig(
        description=str(cfg.get("description", "")), doc_to_text=str(cfg["doc_to_text"]),
        doc_to_target=str(cfg.get("doc_to_target", "{{target}}")),
        target_delimiter=str(cfg.get("target_delimiter", " ")), fewshot_delimiter=str(cfg.get("fewshot_delimiter",
                                                                                               "\n\n")),
        shots=tuple(dict(s) for s in shots)[: int(cfg.get("num_fewshot", 0))],
        stop=tuple(gen.get("until") or ()), max_tokens=int(gen.get("max_gen_toks", LMEVAL_DEFAULT_MAX_GEN_TOKS)),
        grader=TaskGrader(_filter(cfg, filter_name, path), _metric(cfg, path)))


def _filter(cfg: dict[str, Any], name: str, path: Path) -> Filter:
    found = [f for f in cfg.get("filter_list") or () if f.get("name") == name]
    steps = found[0]["filter"] if found else []
    if [s.get("function") for s in steps] != ["regex", "take_first"]:
        raise ProctorError(f"{path}: filter {name!r} is not lm-eval's plain regex + take_first")
    regex = steps[0]
    return Filter(name, str(regex["regex_pattern"]), int(regex.get("group_select", 0)),
                  str(regex.get("fallback", "[invalid]")))


def _metric(cfg: dict[str, Any], path: Path) -> ExactMatch:
    found = [m for m in cfg.get("metric_list") or () if m.get("metric") == "exact_match"]
    if not found:
        raise ProctorError(f"{path}: no exact_match metric")
    m = found[0]
    return ExactMatch(tuple(m.get("regexes_to_ignore") or ()), bool(m.get("ignore_case", False)),
                      bool(m.get("ignore_punctuation", False)), bool(m.get("ignore_numbers", False)))


_FIELD = re.compile(r"\{\{ ?(input|target) ?\}\}")


def render(template: str, row: dict[str, str]) -> str:
    """lm-eval's Jinja `doc_to_text`/`doc_to_target` for BBH's templates (`{{input}}`, `{{target}}` only): the
    template's own fields filled in one pass, so a row's text is sent as it is, even one holding `{{target}}`."""
    if "{{" in _FIELD.sub("", template):
        raise ProctorError(f"a BBH template field proctor does not render: {template!r}")
    return _FIELD.sub(lambda m: row.get(m.group(1), ""), template)


def context(kind: str, task: str, row: dict[str, str]) -> str:
    """lm-eval's `fewshot_context` for one row: description, the exemplars (each text + target delimiter +
    target, joined and followed by the few-shot delimiter), then the row's text."""
    c = task_config(kind, task)
    shots = "".join(render(c.doc_to_text, s) + c.target_delimiter + render(c.doc_to_target, s) + c.fewshot_delimiter
                    for s in c.shots)
    return c.description + shots + render(c.doc_to_text, row)


# ------------------------------------------------------------------ prompts and data


@dataclass
class BBHPrompts(RenderedPrompts):
    """lm-eval's context for the item's task, as one user message."""

    kinds: tuple[str, ...] = (COT_FEWSHOT, COT_ZEROSHOT)
    tasks: tuple[str, ...] = field(default_factory=tuple)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        return context(kind, str(item.category), {"input": str(item.metadata["input"])})

    def fewshot_texts(self, item: Item, kind: str) -> list[str]:
        """The exemplars lm-eval's YAML (installed) shows before `item` under `kind`, as rendered."""
        c = task_config(kind, str(item.category))
        return [render(c.doc_to_text, s) + c.target_delimiter + render(c.doc_to_target, s) for s in c.shots]

    def template_hash(self, kind: str) -> str:
        """Over every loaded task's configuration as lm-eval's YAMLs give it (a changed exemplar changes it)."""
        check_kind(kind, self.kinds, NAME)
        parts = [kind]
        for task in self.tasks:
            c = task_config(kind, task)
            parts += [task, c.description, c.doc_to_text, c.doc_to_target, c.target_delimiter, c.fewshot_delimiter,
                      *(f"{s.get('input')}\x1e{s.get('target')}" for s in c.shots), repr(c.stop), repr(c.grader)]
        return text_hash(*parts)

    def request_defaults(self, kind: str) -> KindDefaults:
        first = task_config(kind, self.tasks[0]) if self.tasks else None
        return KindDefaults(stop=first.stop, max_tokens=first.max_tokens) if first else KindDefaults()

    def logprob_context(self, item: Item) -> str:
        return self.render(item, COT_ZEROSHOT)


def task_rows(data_file: str | Path | None) -> dict[str, Rows]:
    """Each task's rows: every task from the Hub, or the files of a local folder (`<task>.jsonl`, .json, .csv,
    .parquet; any subset of the 27), or one such file."""
    if data_file is None:
        return {t: fetch(source(t), None) for t in TASKS}
    path = Path(data_file)
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    found = {f.stem: f for f in files if f.suffix in FILE_SUFFIXES and f.stem in TASKS}
    if not found:
        raise InputError.at(str(path), f"no BBH task file (<task>{'|'.join(FILE_SUFFIXES)}, task one of "
                                       f"{', '.join(TASKS[:3])}, …)")
    return {t: load_file(f, source(t)) for t, f in sorted(found.items(), key=lambda kv: TASKS.index(kv[0]))}


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The tasks' rows as items (category: the task), prompted and graded as lm-eval's YAMLs say."""
    rows = task_rows(data_file)
    for kind in VARIANTS:
        for task in rows:
            task_config(kind, task)  # refused now (one line) when lm-eval's files are missing or changed
    ids = count()
    questions: list[Question] = []
    for task, r in rows.items():
        questions += convert_rows(r, COLUMNS, partial(_question, task=task, ids=ids))
    dataset = Dataset(name=NAME, description="BIG-Bench Hard: 27 tasks, lm-eval's chain-of-thought prompts.",
                      questions=questions, prompts={k: k for k in VARIANTS},
                      metadata={"source": REPO, "split": "test", "tasks": list(rows)})
    provenance = {"source": REPO, "split": "test", "tasks": {t: r.provenance.get("revision") for t, r in rows.items()},
                  "lm_eval_tasks": str(lmeval_tasks_dir())}
    return Loaded(dataset=dataset, prompts=BBHPrompts(tasks=tuple(rows)), provenance=provenance)


def _question(row: dict[str, Any], task: str, ids: Iterator[int]) -> Question:
    text, target = row["input"], row["target"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("input: empty")
    if not isinstance(target, str) or not target.strip():
        raise ValueError(f"target: expected a non-empty string, got {target!r}")
    n = next(ids)
    return Question(id=n, original_id=f"{task}/{n}", question=text.strip(), choices={}, answer=target,
                    category=task, metadata={"input": text, "target": target})


def items(data_file: str | Path) -> list[Item]:
    """The items of a local copy (tests and bench scripts)."""
    return [question_to_item(q, NAME) for q in load(data_file).dataset.questions]


class _Graders(dict[str, TaskGrader]):
    """Task → grader for one kind, read from lm-eval's YAML on first use."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def __missing__(self, task: str) -> TaskGrader:
        grader = task_config(self.kind, task).grader
        self[task] = grader
        return grader


FEWSHOT_RULE = grader_rule("lm-eval-bbh-cot-fewshot", "lm-eval lm_eval/tasks/bbh/cot_fewshot/<task>.yaml filter "
                           "get-answer + exact_match (read from the installed lm_eval)", _Graders(COT_FEWSHOT))
ZEROSHOT_RULE = grader_rule("lm-eval-bbh-cot-zeroshot", "lm-eval lm_eval/tasks/bbh/cot_zeroshot/<task>.yaml filter "
                            "strict-match + exact_match (read from the installed lm_eval)", _Graders(COT_ZEROSHOT))
BENCHMARKS = (Builtin(NAME, load, HubSource(REPO, split="test"), SIZE, "BIG-Bench Hard, 27 tasks: lm-eval's CoT prompts and filters",
                      max_tokens=1024, answer_rules={COT_FEWSHOT: FEWSHOT_RULE, COT_ZEROSHOT: ZEROSHOT_RULE},
                      cluster=None),)
