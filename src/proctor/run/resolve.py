"""`resolve(spec)`: a RunSpec with its benchmark's defaults applied, once, for every door.

A spec as a user gives it leaves things to the benchmark: the prompt kind (the dataset's first), the token
budget (the kind's, else the benchmark's — AIME 32768 — else DEFAULT_MAX_TOKENS), the kind's stop sequences
(tiger-local's `Question:`), the answer rule that reads the kind, the no-answer policy (the rule's own),
the versions of proctor's reader and judge, the data's content hash, the attribute accuracy intervals are
clustered by (the benchmark's: MMLU-Pro's `metadata.src`; not in the run id), the sandbox a code benchmark's programs
run in (bubblewrap, or unsafe under --unsafe-exec without it). `resolve` fills them in; the run id
is the resolved spec's. The dtype policy is the backends': the spec's `dtype` option is passed through.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from ..benchmarks.probsem import load_suite_task
from ..benchmarks.registry import Prompting, load_task
from ..core.spec import (
    DEFAULT_MAX_TOKENS,
    NO_CLUSTER,
    AgentLimits,
    DatasetRef,
    GenerationSpec,
    JudgeSpec,
    RunSpec,
    Sandbox,
    ScorerSpec,
    canonical_json,
)
from ..data.fewshot import fewshot_hash
from ..data.prompts import kind_defaults
from ..data.tasks import Task, cluster_value, default_no_answer
from ..models.registry import BACKENDS
from ..scoring.agent_scorer import agent_kinds, is_agent_kind
from ..scoring.execute.sandbox import sandbox_kind
from ..scoring.execute.scorer import DEFAULT_EXEC_LIMITS
from ..scoring.extract import ANSWER_RULES, EXTRACTOR_VERSION, LLMWC_MCQA, AnswerRule, llmwc_rule
from ..scoring.judge import JUDGE_SETTINGS, JUDGE_VERSION, benchmark_judge
from ..scoring.logprob import Norm
from ..scoring.suites import ScoreOptions, is_suite_item
from ..util.errors import InputError, ProctorError
from ..util.termsafe import plain
from .honoured import check_honoured

SUITE_DEFAULTS = ScoreOptions()  # probsem's: sum of log-probabilities, softmax temperature 1, newline join


def resolve(spec: RunSpec, task: Task | None = None) -> RunSpec:
    """`spec` with every default its benchmark gives applied (`task`: its data, when already loaded)."""
    if spec.resolved:
        return spec
    task = task if task is not None else load_spec_task(spec)
    own = task.scorer.mode if task.scorer is not None else None  # a Task with its own scorer (a suite) scores so
    mode = spec.scorer.mode or own or task.default_mode or "generate"
    scorer = _scorer(spec.scorer.model_copy(update={"mode": mode}), task)
    check_honoured(spec.model_copy(update={"scorer": scorer}), task)  # sent, or refused before the run
    generation, options = spec.generation, spec.dataset.prompt_options
    if scorer.mode == "generate" and task.scorer is None:
        kind = scorer.prompt_kind or task.prompts.kinds[0]
        family = _family(task, kind, options.get(FAMILY_OPTION), spec.model.spec)
        options = options | {FAMILY_OPTION: family} if family is not None else options
        generation = _generation(spec.generation, task, kind, family)
    revision = spec.dataset.revision or task.source.get("revision")
    dataset = spec.dataset.model_copy(update={"prompt_options": options, "content_hash": task.content_hash,
                                              "prompt_hash": prompt_hash(task),
                                              "fewshot_hash": fewshot_hash(task.prompts, task.items,
                                                                           _shown_kind(scorer, task)),
                                              "revision": str(revision) if revision is not None else None})
    judged = spec.judge is not None and scorer.mode == "generate" and task.scorer is None  # only answers are judged
    judge = _judge(spec.judge, task, scorer) if judged and spec.judge else None
    cluster = spec.cluster or task.cluster or NO_CLUSTER  # a reporting choice: the benchmark's unless given
    if cluster != NO_CLUSTER and task.items and not any(cluster_value(it, cluster) for it in task.items):
        raise ProctorError(f"cannot cluster {task.name} by {cluster!r}: none of its {len(task.items):,} items has "
                           "a value for it (pick an attribute the items carry, or --cluster none)")
    sandbox = _sandbox(spec, task, scorer)
    return spec.model_copy(update={"dataset": dataset, "scorer": scorer, "generation": generation, "judge": judge,
                                   "cluster": cluster, "sandbox": sandbox, "agent": _agent(spec, task, scorer),
                                   "resolved": True})


def _agent(spec: RunSpec, task: Task, scorer: ScorerSpec) -> AgentLimits | None:
    """The agent's limits of a run whose samples are trajectories (an agent prompt kind): those given, else the
    defaults (in the run id either way); refused for any other run, where nothing would read them."""
    if scorer.mode == "generate" and task.scorer is None and is_agent_kind(task, scorer.prompt_kind):
        return spec.agent or AgentLimits()
    if spec.agent is not None:
        kinds = [f"{task.name} --prompt {k}" for k in agent_kinds(task)]
        raise ProctorError(f"agent limits (max_turns, max_tool_calls, …) apply only where a sample is a trajectory: "
                           f"{', '.join(kinds) or 'a benchmark with tools (e.g. bfcl-simple --prompt function-calling)'}")
    return None


def _sandbox(spec: RunSpec, task: Task, scorer: ScorerSpec) -> Sandbox | None:
    """What runs the programs of a run that executes code (a code benchmark generating): the one given, else
    bubblewrap where it works, unsafe under --unsafe-exec without it; None for a run that executes nothing."""
    if task.code is None or task.scorer is not None or scorer.mode == "logprob":
        return None
    if spec.sandbox == "unsafe" and not spec.unsafe_exec:
        raise ProctorError("sandbox unsafe runs model code unsandboxed: say so with unsafe_exec (--unsafe-exec)")
    return spec.sandbox or sandbox_kind(spec.unsafe_exec)


def prompt_hash(task: Task) -> str | None:
    """What the run id must change with beyond the items (the templates, the few-shot pool, the shots and format
    a builder declares: `Task.prompt_identity`), as one hash; None for builders that declare nothing."""
    declared = task.prompt_identity()
    return "sha256:" + hashlib.sha256(canonical_json(declared).encode()).hexdigest() if declared else None


def _judge(judge: JudgeSpec, task: Task, scorer: ScorerSpec) -> JudgeSpec:
    """The judge with proctor's judge version and its sampling settings filled once: what the user gave (the
    fields set on `judge.settings`) wins; the rest is what the benchmark's own judge declares (its authors':
    simple-evals' grader 0.5 and 2,048 tokens, HLE's 4,096 tokens), else proctor's `JUDGE_SETTINGS`. With
    nothing given and no benchmark judge, settings stay None (proctor's judge defaults; the ids of before)."""
    bench = benchmark_judge(task.answer_rule(scorer.prompt_kind or task.prompts.kinds[0]))
    declared = bench.settings if bench is not None and bench.settings is not None else None
    settings = judge.settings
    if settings is not None or declared is not None:
        given = settings.model_dump(include=settings.model_fields_set) if settings is not None else {}
        defaults = (declared or JUDGE_SETTINGS).model_dump()
        settings = GenerationSpec.model_validate(defaults | given)
    return judge.model_copy(update={"version": JUDGE_VERSION, "settings": settings})


def _shown_kind(scorer: ScorerSpec, task: Task) -> str | None:
    """The prompt kind whose examples the run shows: the generation kind, or the kind log-likelihood contexts are
    built from (a builder's `logprob_kind`); None for a task with its own scorer (suites)."""
    if scorer.mode == "logprob":
        return logprob_kind(task)
    return None if task.scorer is not None else scorer.prompt_kind


def logprob_kind(task: Task) -> str | None:
    """The prompt kind a log-likelihood run's contexts are built from when none is named (the builder's
    `logprob_kind`: a spec's first kind, item data's zero_shot), so that the default and the same kind named are
    one run; None where no kind is sent (one fixed context, a task with its own scorer)."""
    if task.scorer is not None:
        return None
    kind = getattr(task.prompts, "logprob_kind", None)
    return kind if isinstance(kind, str) and kind in getattr(task.prompts, "logprob_kinds", ()) else None


def _scorer(scorer: ScorerSpec, task: Task) -> ScorerSpec:
    """The prompt kind, answer rule, no-answer policy and reader version the run uses."""
    if scorer.mode == "logprob" or task.scorer is not None:
        suites = bool(task.items) and all(is_suite_item(it) for it in task.items)
        update: dict[str, object] = {"no_answer": scorer.no_answer or "wrong", "second_ask": None,
                                     "prompt_kind": scorer.prompt_kind or logprob_kind(task)}
        if suites:
            update |= {"norm": scorer.norm or SUITE_DEFAULTS.norm.value, "join": scorer.join or SUITE_DEFAULTS.join,
                       "softmax_temperature": scorer.softmax_temperature or SUITE_DEFAULTS.temperature}
        return scorer.model_copy(update=update)
    kind = scorer.prompt_kind or task.prompts.kinds[0]
    rule = task.answer_rule(kind)
    return scorer.model_copy(update={
        "prompt_kind": kind, "answer_rule": rule.name if rule is not None else None, **_execution(scorer, task),
        "no_answer": scorer.no_answer or default_no_answer(task, kind, scorer.extract),  # as the reading that scores
        "extractor_version": EXTRACTOR_VERSION, "second_ask": _second_ask(scorer.second_ask, rule, task.name, kind)})


def _second_ask(given: bool | None, rule: AnswerRule | None, name: str, kind: str) -> bool | None:
    """On where the kind's rule has a second ask (MathArena's), unless turned off; None where it has none."""
    if rule is not None and rule.second_ask is not None:
        return True if given is None else given
    if given:
        raise ProctorError(f"second_ask: {name} ({kind}) has no second ask; only MathArena's rule (aime-2026, "
                           "hmmt-feb-*) asks once more")
    return None


FAMILY_OPTION = "sampler"  # the prompt option naming the model family a builder's upstream sends per


def _family(task: Task, kind: str, given: str | None, model: str) -> str | None:
    """The model family the kind's upstream request follows (GPQA simple-evals' sampler: `o-series` or `chat`),
    given or chosen from the model's name; None where the builder has no families for the kind."""
    choose = getattr(task.prompts, "model_family", None)
    backend = model.partition(":")[0]
    sends_system = backend not in BACKENDS or "system" in BACKENDS[backend].settings
    family = choose(kind, given, model, sends_system) if callable(choose) else None
    if given is not None and family is None:
        raise ProctorError(f"{FAMILY_OPTION}: {task.name} ({kind}) sends one request whatever the model; "
                           f"--{FAMILY_OPTION} applies to gpqa-* --prompt simple-evals")
    return family if isinstance(family, str) else None


def _generation(generation: GenerationSpec, task: Task, kind: str, family: str | None = None) -> GenerationSpec:
    """The kind's stop sequences added; the token budget: given, else the kind's, the benchmark's, the default
    (none where the kind's upstream sends none); the kind's system message and temperature (the model family's)
    where none is given."""
    defaults = kind_defaults(task.prompts, kind, family)
    stop = generation.stop + tuple(s for s in defaults.stop if s not in generation.stop)
    budget = generation.max_tokens or (defaults.max_tokens or task.default_max_tokens or DEFAULT_MAX_TOKENS
                                       if defaults.sends_max_tokens else None)
    update: dict[str, object] = {"stop": stop, "max_tokens": budget}
    if defaults.system is not None and generation.system is None:
        update["system"] = defaults.system
    if generation.temperature == GenerationSpec().temperature:  # proctor's default: the kind's upstream value
        if not defaults.sends_temperature:
            update["temperature"] = None
        elif defaults.temperature is not None:
            update["temperature"] = defaults.temperature
    return generation.model_copy(update=update)


def _execution(scorer: ScorerSpec, task: Task) -> dict[str, object]:
    """A code benchmark's execution settings: the authors' limits unless told otherwise; refused for a benchmark
    that executes nothing, `test_imports` for one whose tests have none."""
    if task.code is None:
        given = [f for f in ("exec_limits", "test_imports") if getattr(scorer, f) is not None]
        if given:
            raise ProctorError(f"{given[0]}: {task.name} executes no code (only code benchmarks: humaneval, mbpp, "
                               "livecodebench)")
        return {}
    if scorer.test_imports and not hasattr(task.code, "test_imports"):
        raise ProctorError(f"test_imports: {task.name}'s tests come with no imports to run (mbpp's do)")
    return {"exec_limits": scorer.exec_limits or DEFAULT_EXEC_LIMITS}


def budget_for(task: Task, kind: str, generation: GenerationSpec) -> GenerationSpec:
    """What `resolve` sends for prompt `kind` of `task` (`proctor prompt` shows it)."""
    return _generation(generation, task, kind)


# ---------------------------------------------------------------- the data of a spec


def load_spec_task(spec: RunSpec) -> Task:
    """The Task a spec's dataset names: a built-in, a path, or probsem suites (a `norm` in the scorer)."""
    ref = spec.dataset
    if spec.scorer.norm is not None:
        return load_suite_task([Path(ref.name), *map(Path, ref.files)], suite_options(spec.scorer))
    with _hf_token(ref.hf_token_env):
        prompting = Prompting(shots=spec.scorer.shots, fmt=spec.scorer.format, fewshot_from=ref.fewshot_from,
                              prompt_kind=spec.scorer.prompt_kind)
        task = load_task(ref.name, data_file=ref.data_file, seed=ref.seed, limit=ref.limit,
                         limit_per_category=ref.limit_per_category, prompt_options=ref.prompt_options or None,
                         prompting=prompting)
    task = _subjects(task, ref)
    kinds = tuple(getattr(task.prompts, "kinds", ()))
    own = task.answer_rule(spec.scorer.prompt_kind or kinds[0]) if kinds else None
    if spec.scorer.answer_rule is not None and (own is None or own.name != spec.scorer.answer_rule):
        # a rule chosen by name (llm-wc's): it reads every prompt kind; the kind's own rule named (a resolved
        # spec read back: a retry of a BFCL or IFEval run) is the benchmark's, kept as it is
        rule = answer_rule_named(spec.scorer.answer_rule, task.name)
        task = replace(task, answer_rules=dict.fromkeys(task.prompts.kinds, rule))
    return task


def suite_options(scorer: ScorerSpec) -> ScoreOptions:
    """The probsem scoring options of a scorer spec (probsem's defaults for what it leaves out)."""
    return ScoreOptions(norm=Norm(scorer.norm or SUITE_DEFAULTS.norm.value),
                        temperature=scorer.softmax_temperature or SUITE_DEFAULTS.temperature,
                        join=scorer.join or SUITE_DEFAULTS.join)


def answer_rule_named(name: str, benchmark: str) -> AnswerRule:
    """A reference rule by name; llm-wc's multiple-choice rule takes the benchmark's letters."""
    if name == LLMWC_MCQA:
        return llmwc_rule(benchmark)
    if name not in ANSWER_RULES:
        raise InputError.at("scorer.answer_rule", f"{name!r}: no such rule (rules: "
                            f"{', '.join([*ANSWER_RULES, LLMWC_MCQA])})")
    return ANSWER_RULES[name]


def _subjects(task: Task, ref: DatasetRef) -> Task:
    """Only the categories `ref.subjects` names (or its first N), refusing a name the data lacks."""
    if ref.subjects is None:
        return task
    present = [str(c) for c in dict.fromkeys(it.category for it in task.items)]
    wanted = present[: ref.subjects] if isinstance(ref.subjects, int) else list(ref.subjects)
    missing = [s for s in wanted if s not in present]
    if missing:
        raise InputError.at("dataset.subjects", f"no such subject(s): {plain(', '.join(missing))} (the data has "
                            f"{plain(', '.join(present))})")
    return replace(task, items=[it for it in task.items if it.category in wanted])


@contextmanager
def _hf_token(env_name: str | None) -> Iterator[None]:
    """llm-wc's `hf_token_env`: the named variable stands in for HF_TOKEN while the data loads."""
    value = os.environ.get(env_name) if env_name else None
    old = os.environ.get("HF_TOKEN")
    if value:
        os.environ["HF_TOKEN"] = value
    try:
        yield
    finally:
        if value:
            if old is None:
                os.environ.pop("HF_TOKEN", None)
            else:
                os.environ["HF_TOKEN"] = old


__all__ = ["DEFAULT_MAX_TOKENS", "answer_rule_named", "budget_for", "load_spec_task", "logprob_kind", "resolve",
           "suite_options"]
