"""The engine, `evaluate_async(task, model, spec, options, judge)`: plan → (cached) dispatch → score → log.

One pass over a Task with one model, as the resolved `RunSpec` says (what is asked) and `RunOptions` says
(where and how: output directory, store, cache, progress, concurrency; none of it in the run id). Doors build
specs and call `proctor.run.pipeline.run`, which calls this. The task's `Scorer` (generation + extraction, choice
log-likelihood, probsem suite, LLM judge) says what each item needs from the model and how a sample
is scored from the answers; this module does the rest the same way for all of them. Every answer is
durable the moment it arrives: remote backends hand over one item per call (`preferred_chunk_size`),
so its response is cached and its sample appended to `samples.jsonl` as soon as it is back, and a
kill -9 repeats at most the requests in flight. The same command run again resumes: samples already in
the log are kept, errored ones are retried, and the request cache answers anything the model already
did. Results are a pure function of the samples (`proctor.metrics.results.summarize`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from array import array
from collections import Counter
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast, overload

from ..core.model import Capability, GenerateRequest, Model, require
from ..core.money import Money
from ..core.results import Results
from ..core.spec import AgentLimits, HumanLabels, RunSpec
from ..data.prompts import bind_tokenizer
from ..data.records import Item
from ..data.tasks import Task
from ..log.provenance import BackendInfo, ClaimRecord, DatasetInfo, ScorerInfo, collect_provenance, utc_now
from ..log.runlog import (
    MANIFEST,
    SAMPLES,
    CacheUse,
    EpochMajor,
    Manifest,
    Outcome,
    RunLog,
    Sample,
    SamplesOnDisk,
    append_samples,
    iter_run_samples,
    read_manifest,
    write_manifest,
)
from ..log.sampleindex import item_order
from ..metrics.money import sample_cost
from ..scoring.agent_scorer import AgentScorer, is_agent_kind
from ..scoring.base import Scorer
from ..scoring.choice_logprob import ChoiceScorer
from ..scoring.execute.sandbox import INSTALL_HINT, Runner, Unsafe, sandbox_for
from ..scoring.execute.scorer import CodeScorer, configured
from ..scoring.judge import JUDGE_SETTINGS, JudgeScorer, judge_usages
from ..scoring.reasoning import unsupported_settings
from ..scoring.scorers import GenerationScorer
from ..scoring.suites import SuiteScorer, is_suite_item
from ..util.errors import CostLimitReached, ProctorError
from ..util.progress import Progress
from ..util.safepath import safe_component
from .cache import CachedModel
from .chunk import score_chunk
from .finalize import finalize_run, on_disk, results_of
from .lock import hold_run_dir
from .outputs import RunOutput
from .pricing import CostGuard, GuardedModel, token_counter
from .resumecheck import check_resumable
from .retry import check_retry, marked, pending, resumed, retry_line, samples_dir
from .shard import Shard, manifest_shard, write_shard_file
from .stopwhen import ask_until_decided, check_record, load_baseline, recorded_stop, stopped_line
from .store import ItemRows, Store, default_store_path

Mode = Literal["generate", "logprob"]
DEFAULT_CHUNK_SIZE = 256  # items per model call when the backend gives no hint
FAIL_FAST_AFTER = 8  # when the first N answers all failed, stop: the failure hits every request


class RunAborted(ProctorError):
    """Every one of the first answers failed the same way (bad key, unknown model, unreachable host)."""


@dataclass(frozen=True)
class RunOptions:
    """How to run, not what: where the run is written, the store, the cache, progress and concurrency. None of
    this is in the run id; what is asked is the resolved `RunSpec`'s alone."""

    out: Path | None = None  # one spec: its run directory; several (proctor.run.pipeline): out/<dataset> each
    out_dirs: tuple[Path | None, ...] = ()  # a directory per spec (llm-wc's layout); overrides `out`
    runs_root: Path = Path("runs")
    store: Path | None = None  # None: proctor.run.store.default_store_path()
    use_cache: bool = True
    record_history: bool = True
    progress: bool | None = None  # None: only on a terminal
    command: list[str] | None = None
    chunk_size: int | None = None  # items per model call (default: the model's preferred_chunk_size)
    fail_fast_after: int = FAIL_FAST_AFTER  # 0: never stop early
    outputs: tuple[RunOutput, ...] = ()  # files written besides the run directories (proctor.run.outputs)
    claim: ClaimRecord | None = None  # `run --claim`: the claim registered before the run, kept in its manifest

    def __post_init__(self) -> None:  # paths may be given as strings (Python callers)
        object.__setattr__(self, "runs_root", Path(self.runs_root))
        for name in ("out", "store"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, Path(getattr(self, name)))


def _resolved(spec: RunSpec) -> RunSpec:
    if not spec.resolved:
        raise ProctorError("internal: the runner takes a resolved spec (proctor.run.resolve.resolve)")
    return spec


def shard_of(spec: RunSpec) -> Shard | None:
    """The spec's shard as `proctor.run.shard` counts it."""
    return Shard(spec.shard.index, spec.shard.count) if spec.shard is not None else None


# ---------------------------------------------------------------- planning


def build_scorer(task: Task, spec: RunSpec, judge: Model | None = None) -> Scorer:
    """The task's own scorer, else the one the resolved spec's mode asks for (suites score as probsem does)."""
    if task.scorer is not None:
        return task.scorer
    s = _resolved(spec).scorer
    if task.code is not None and s.mode != "logprob":  # a code benchmark: its answers are run (sandboxed)
        return CodeScorer(s.prompt_kind or task.prompts.kinds[0], configured(task.code, s.exec_limits, s.test_imports),
                          code_runner(spec), spec.generation, spec.epochs)
    if s.mode == "logprob":
        if task.items and all(is_suite_item(it) for it in task.items):
            return SuiteScorer()
        return ChoiceScorer()
    kind = s.prompt_kind or task.prompts.kinds[0]
    settings, no_answer = spec.generation, s.no_answer or "wrong"
    if is_agent_kind(task, kind):  # its samples are trajectories: the agent loop plays them (scoring.agent_scorer)
        return AgentScorer(kind, settings, spec.epochs, spec.agent or AgentLimits(), no_answer=no_answer)
    rule = task.answer_rule(kind)
    graded = rule is not None and rule.grades_truncated and s.truncated_as != "excluded"  # else proctor's exclusion
    if judge is None:
        return GenerationScorer(kind, settings, spec.epochs, extract=s.extract, answer_rule=s.answer_rule,
                                no_answer=no_answer, grade_truncated=graded, second_ask=bool(s.second_ask))
    agreement = [it.identifier for it in task.items if not it.modality.needs_judge][: s.judge_agreement]
    judge_settings = spec.judge.settings if spec.judge is not None else None
    return JudgeScorer(kind, settings, spec.epochs, judge=judge, agreement_ids=frozenset(agreement),
                       extract=s.extract, answer_rule=s.answer_rule, no_answer=no_answer,
                       judge_settings=judge_settings if judge_settings is not None else JUDGE_SETTINGS)


def code_runner(spec: RunSpec) -> Runner:
    """What runs a code benchmark's programs: the resolved spec's sandbox (the one in its run id), never another."""
    if spec.sandbox == "unsafe":
        return Unsafe()
    runner = sandbox_for(spec.unsafe_exec)
    if runner.name != spec.sandbox:
        raise ProctorError(f"this run's programs run in {spec.sandbox} (its run id says so) and none works here: "
                           f"{INSTALL_HINT}")
    return runner


def _check_data(task: Task, model_name: str, scorer: Scorer, spec: RunSpec) -> None:
    """Refuse what the data, the settings and the model's name alone show cannot work (no model needed); the
    ranges of single settings are the spec's own (proctor.core.spec)."""
    if not task.items:
        raise ProctorError(f"{task.name}: no items to evaluate")
    check_retry(task, spec)
    if spec.retry_of is not None and isinstance(scorer, AgentScorer):
        raise ProctorError("--retry-truncated: a trajectory is cut by the agent's limits (--max-turns…), not by "
                           "--max-tokens; run again with larger limits instead")
    settings = spec.generation
    if scorer.capability is Capability.GENERATE:
        rule = task.answer_rule(spec.scorer.prompt_kind or task.prompts.kinds[0])
        if rule is not None and rule.require is not None:  # a grader whose code is installed separately
            rule.require()
        problems = unsupported_settings(model_name.partition(":")[0], settings)
        if problems:
            raise ProctorError("; ".join(problems))
    price, judge = spec.price, spec.judge
    judge_price = judge.price if judge is not None else None
    if spec.budget is not None:
        if price is None:
            raise ProctorError(f"max_cost needs the price of {model_name}: a price table or price_in/price_out")
        if scorer.capability is not Capability.GENERATE or settings.max_tokens is None:
            raise ProctorError("max_cost needs a generation run with max_tokens (each request's worst case)")
        if judge is not None and scorer.kind == "judge" and judge_price is None:
            raise ProctorError(f"max_cost needs the price of the judge {judge.model} too: add it to the price table")
    if price is not None and judge_price is not None and price.currency != judge_price.currency:
        raise ProctorError(f"the model's price is in {price.currency}, the judge's in "
                           f"{judge_price.currency}: one bill needs one currency")
    scorer.check(task)


def _check_before_start(task: Task, model: Model, scorer: Scorer, spec: RunSpec, judge: Model | None = None) -> None:
    """Refuse, before anything runs, what cannot work."""
    _check_data(task, model.name, scorer, spec)
    if scorer.capability is Capability.GENERATE and getattr(task.prompts, "completion", False) \
            and not getattr(model, "text_completion", False):
        raise ProctorError(f"{model.name} cannot take a plain-text prompt ({task.name} asks in completion format, "
                           "lm-eval's default): run with --format chat")
    if isinstance(scorer, CodeScorer) and task.sends_text(scorer.prompt_kind) \
            and not getattr(model, "text_completion", False):
        raise ProctorError(f"{model.name} cannot take a plain-text prompt ({task.name}'s `{scorer.prompt_kind}` "
                           "prompt, the authors'): run with --prompt chat")
    if isinstance(scorer, AgentScorer):  # its trajectories offer tools: a backend that cannot send them is refused
        require(model, [Capability.GENERATE, Capability.TOOLS])
    if judge is not None and scorer.capability is Capability.GENERATE:  # the model: `probe`, once
        require(judge, [Capability.GENERATE])  # probe's static part: the judge is asked nothing before it grades


@dataclass(frozen=True)
class _Named:
    """A model known only by its spec: enough to plan a run (its directory and id) before it loads."""

    name: str


@dataclass(frozen=True)
class RunState:
    """Where a run stands before its model loads: its directory and how many of its samples are done."""

    run_dir: Path
    total: int  # items x epochs
    done: int  # finished samples kept (errored ones are asked again)
    errored: int  # errored samples a resume asks again
    stopped: str | None = None  # a run --stop-when-decided stopped: what a resume says (nothing is asked)
    said: str | None = None  # what starting it says instead of the resume line (a --retry-truncated not yet begun)

    @property
    def left(self) -> int:
        return 0 if self.stopped else self.total - self.done

    def resume_line(self) -> str | None:
        """`resuming: 16/16 done, 0 to ask` (None for a fresh run)."""
        if self.stopped or self.said:
            return self.stopped or self.said
        if not self.done and not self.errored:
            return None
        retry = f" ({self.errored} errored before, asked again)" if self.errored else ""
        return f"resuming {self.run_dir}: {self.done}/{self.total} done, {self.left} to ask{retry}"


def plan_run(task: Task, spec: RunSpec, options: RunOptions = RunOptions()) -> RunState:
    """Before any model loads: refuse what the data and the settings show cannot work, and find how much of
    the run (`options.out`, else the default directory) is already done."""
    judge = cast(Model, _Named(spec.judge.model)) if spec.judge is not None else None
    scorer = build_scorer(task, spec, judge)
    _check_data(task, spec.model.spec, scorer, spec)
    run_dir, _ = locate_run(task, spec.model.spec, scorer, spec, options)
    items = {item.identifier for item in _items_of(task, spec)}
    counts: Counter[str] = Counter()  # "done", "error", or "again" (a retry's truncated first attempt)
    base = load_baseline(spec, task, options.store) if spec.stop_when is not None else None  # before any model
    stop = None
    source = samples_dir(run_dir, spec)  # a retry not yet begun: the first run's samples
    if (source / MANIFEST).exists():  # each id's latest record, one at a time (a count each, no id held)
        counts.update("error" if s.outcome is Outcome.ERROR else "again" if pending(s, spec) else "done"
                      for s in iter_run_samples(source) if _planned(s.sample_id, items, spec.epochs))
    if (run_dir / MANIFEST).exists():
        manifest = read_manifest(run_dir)
        if base is not None and manifest.sequential is not None:  # a decision or a baseline edited: refused
            check_record(run_dir, manifest.sequential, base)
        if not counts["error"]:  # errored samples: asked again, then looked at
            stop = recorded_stop(manifest, spec)
    return RunState(run_dir, len(items) * spec.epochs, counts["done"], counts["error"] + counts["again"],
                    stopped_line(run_dir, stop) if stop is not None else None,
                    retry_line(spec, run_dir, counts["again"], counts["error"]))


def _planned(sample_id: str, items: Container[str], epochs: int) -> bool:
    """Whether `sample_id` (`item#epoch`) is one of the run's: an item it asks, an epoch below `epochs`."""
    item, epoch = item_order(sample_id)
    return item in items and epoch < epochs and f"{item}#{epoch}" == sample_id


def finish_done_run(state: RunState, options: RunOptions = RunOptions(), labels: HumanLabels | None = None) -> RunLog:
    """A run with nothing left to ask: its results recomputed from its samples (no model loads); `labels`
    (`--human-labels`) replace the ones its manifest holds."""
    with hold_run_dir(state.run_dir):
        store = _open_store(options) if options.record_history else None
        log = on_disk(state.run_dir)
        if labels is not None and log.manifest.spec is not None:
            log.manifest.spec = log.manifest.spec.model_copy(update={"human_labels": labels})
        return finalize_run(log, store)


CHARS_PER_TOKEN_UPPER_BOUND = 10  # no tokenizer at hand: a prompt has at least len/10 tokens (refuse only sure cases)


def _check_context(task: Task, model: Model, scorer: Scorer, spec: RunSpec) -> None:
    """Refuse a generation run whose longest prompt + --max-tokens cannot fit the model's context window,
    when the backend knows it (a server's max_model_len, an hf model's max_length)."""
    window = model.context_length
    max_tokens = spec.generation.max_tokens
    if scorer.capability is not Capability.GENERATE or window is None or max_tokens is None:
        return
    lengths = []
    sure = True  # every length counted by the model's own tokenizer and chat template (hf)
    for item in task.items:
        for request in scorer.requests(task, item, 0):
            if isinstance(request, GenerateRequest):
                exact = model.prompt_tokens(request)
                sure = sure and exact is not None
                text = "".join(m.content for m in request.messages)
                lengths.append(exact if exact is not None else len(text) // CHARS_PER_TOKEN_UPPER_BOUND)
    longest = max(lengths, default=0)
    if sure and longest >= window:
        over = sum(n >= window for n in lengths)
        raise ProctorError(
            f"{task.name}: prompt longer than {model.name}'s context: {over} of {len(lengths)}, longest "
            f"{longest:,} {'>' if longest > window else '='} {window:,} tokens; use a shorter prompt kind (--prompt) or a model with a longer context"
        )
    if longest + max_tokens > window:
        raise ProctorError(
            f"{task.name}: the longest prompt ({'' if sure else '~'}{longest} tokens) + --max-tokens "
            f"{max_tokens} exceeds {model.name}'s context window of {window} tokens; lower --max-tokens or serve "
            "the model with a longer context (vLLM: --max-model-len)"
        )


RULE_ERA_KEYS = ("answer_rule", "no_answer")  # in the scorer's identity from the rule branch (#29) on, not before


def legacy_run_ids(task: Task, model_name: str, scorer: Scorer, spec: RunSpec) -> tuple[str, ...]:
    """The run ids of proctor before RunSpec, newest first: with the answer rule and no-answer policy in the
    scorer's identity (#29), and without (main 6639c56). Their run directories are still found and resumed."""
    ident = scorer.identity()
    key = {"dataset": task.content_hash, "model": model_name, "epochs": spec.epochs, **ident}
    older = {k: v for k, v in key.items() if k not in RULE_ERA_KEYS}
    ids = [hashlib.sha256(json.dumps(k, sort_keys=True).encode()).hexdigest()[:12] for k in (key, older)]
    return tuple(dict.fromkeys(ids))


def default_run_dir(task: Task, model_name: str, spec: RunSpec, runs_root: Path, run_id: str | None = None) -> Path:
    """Deterministic per (dataset, model, settings): the same command finds its run again and resumes."""
    name = safe_component(f"{task.name}__{model_name}".replace(":", "-"), fallback="run")
    shard = shard_of(spec)
    suffix = f"__{shard.suffix}" if shard is not None else ""
    return Path(runs_root) / f"{name}__{run_id or _resolved(spec).run_id()}{suffix}"


def locate_run(task: Task, model_name: str, scorer: Scorer, spec: RunSpec,
               options: RunOptions = RunOptions()) -> tuple[Path, str]:
    """The run's directory and id: `options.out` or the default directory, or the directory an older proctor
    wrote for the same run (its old id kept); a directory holding another run is refused."""
    resolved = _resolved(spec)
    run_id, legacies = resolved.run_id(), legacy_run_ids(task, model_name, scorer, spec)
    older = older_run_ids(resolved, task)
    template_hash = scorer.template_hash(task)
    path = options.out or default_run_dir(task, model_name, spec, options.runs_root, run_id)
    if options.out is None and not (path / MANIFEST).exists():
        for old_id, before_fewshot in older.items():
            old = default_run_dir(task, model_name, spec, options.runs_root, old_id)
            if (old / MANIFEST).exists() and _older_of(old, read_manifest(old), old_id, before_fewshot, resolved,
                                                       template_hash, task):
                return old, old_id
        for legacy in legacies:
            old = default_run_dir(task, model_name, spec, options.runs_root, legacy)
            if (old / MANIFEST).exists() and _is_legacy_of(read_manifest(old), legacy, spec):
                return old, legacy
    if not (path / MANIFEST).exists():
        return path, run_id
    found = read_manifest(path)
    if found.run_id == run_id:
        check_resumable(path, found, resolved, task)  # a hand-edited manifest is refused, naming the field
        return path, run_id
    if found.run_id in older and _older_of(path, found, found.run_id, older[found.run_id], resolved, template_hash,
                                           task):
        return path, found.run_id
    if found.run_id in legacies and _is_legacy_of(found, found.run_id, spec):
        return path, found.run_id
    raise ProctorError(f"{path} holds a different run (dataset, model or settings differ): choose another -o directory")


def older_run_ids(spec: RunSpec, task: Task) -> dict[str, bool]:
    """The ids this resolved spec had under older resolutions, each with whether it is from before the few-shot
    examples' hash entered the id (#41 item 2, main dc99ff5): without that hash; with a log-likelihood run's default
    prompt kind unnamed (before #47, main ee87dc3); without both; an unsandboxed run's without its sandbox (before
    #47: its manifest reads with the sandbox its scorer recorded, `log.runlog`). `locate_run` still finds and resumes
    them."""
    unnamed = unnamed_kind(spec, task)
    out: dict[str, bool] = {}
    if (before := before_exec_limits(spec)) is not None:  # a code run before its sandbox and limits entered the id
        out[before.run_id()] = False
    for base in (spec, unnamed) if unnamed is not None else (spec,):
        if base is not spec:
            out.setdefault(base.run_id(), False)
        if (before_fewshot := base.legacy_run_id()) is not None:
            out.setdefault(before_fewshot, True)
    return out


def before_exec_limits(spec: RunSpec) -> RunSpec | None:
    """This code run as proctor identified it before #47/#49 (main ee87dc3): no sandbox, no execution limits in its
    id — which it only was under proctor's limits (and MBPP's test imports); None for any other run."""
    scorer = spec.scorer
    if spec.sandbox is None or scorer.exec_limits != "proctor" or bool(scorer.test_imports) != (spec.dataset.name == "mbpp"):
        return None
    return spec.model_copy(update={"sandbox": None, "scorer": scorer.model_copy(
        update={"exec_limits": None, "test_imports": None})})


def unnamed_kind(spec: RunSpec, task: Task) -> RunSpec | None:
    """This resolved spec as proctor resolved it before #47 (main ee87dc3): a log-likelihood run's default prompt
    kind (the builder's first) left unnamed, null; None where the kind was always recorded (a generation run, or
    another kind named) or none is sent."""
    kind = spec.scorer.prompt_kind
    if spec.scorer.mode != "logprob" or task.scorer is not None or kind is None or kind != task.prompts.kinds[0]:
        return None
    return spec.model_copy(update={"scorer": spec.scorer.model_copy(update={"prompt_kind": None})})


def _older_of(run_dir: Path, found: Manifest, old_id: str, before_fewshot: bool, spec: RunSpec, template_hash: str,
              task: Task) -> bool:
    """`found`, under one of `older_run_ids`, is this run as an older proctor wrote it (an unnamed default kind
    read as the kind it was, `_kind_named`); a manifest that disagrees otherwise is refused (check_resumable)."""
    if found.run_id != old_id:
        return False
    found = _kind_named(found, spec)
    if before_fewshot:
        return _fewshot_legacy(run_dir, found, spec, template_hash, task)
    check_resumable(run_dir, found, spec, task)
    return True


def _kind_named(found: Manifest, spec: RunSpec) -> Manifest:
    """`found` with the prompt kind its spec left unnamed (proctor before #47) named as `spec`'s: the kind those
    contexts were built from."""
    recorded = found.spec
    if recorded is None or recorded.scorer.prompt_kind is not None or recorded.scorer.mode != "logprob":
        return found
    scorer = recorded.scorer.model_copy(update={"prompt_kind": spec.scorer.prompt_kind})
    return found.model_copy(update={"spec": recorded.model_copy(update={"scorer": scorer})})


def _fewshot_legacy(run_dir: Path, found: Manifest, spec: RunSpec, template_hash: str, task: Task) -> bool:
    """`found` (under the id without the few-shot hash) is this run as proctor wrote it before #41 item 2, with the
    same examples: its spec records this run's few-shot hash (a directory resumed since), or it records none and
    its prompt template hash (MMLU-Pro's and GPQA's example texts, a spec pool's ids, questions and answers) is
    today's. A directory whose examples changed is not this run: the run starts afresh under its new id."""
    recorded = found.spec.dataset.fewshot_hash if found.spec is not None else None
    if recorded is None and found.prompt_template_hash != template_hash:
        return False
    if recorded is not None and recorded != spec.dataset.fewshot_hash:
        return False
    check_resumable(run_dir, found, spec if recorded is not None else spec.without_fewshot_hash(), task)
    return True


def _is_legacy_of(found: Manifest, legacy: str, spec: RunSpec) -> bool:
    """`found` is this run as an older proctor wrote it: its old id, and what that id left out (how results
    count no-answers and truncations, the answer rule) agrees."""
    return found.run_id == legacy and (found.no_answer, found.truncated_as, found.answer_rule) == (
        spec.scorer.no_answer, spec.scorer.truncated_as, spec.scorer.answer_rule)


def with_cluster(task: Task, spec: RunSpec) -> Task:
    """`task` clustered as its resolved spec says (`--cluster`, else the benchmark's own; "none": items alone)."""
    if spec.cluster is None or spec.clustered_by == task.cluster:
        return task
    return replace(task, cluster=spec.clustered_by)


# ---------------------------------------------------------------- provenance


def _manifest(task: Task, model: Model, scorer: Scorer, spec: RunSpec, options: RunOptions, judge: Model | None,
              run_id: str) -> Manifest:
    """The v5 manifest of a fresh run: the spec (every setting, once), what answered, the data, the times."""
    judged = judge is not None and scorer.kind == "judge"
    chat = sent_as_chat(task, model, scorer)
    return Manifest(
        run_id=run_id,
        spec=spec,
        provenance=collect_provenance(_with_chat(model.identity(), chat)),
        dataset=DatasetInfo.of(task.provenance()),
        model=BackendInfo.of(_with_chat(model.describe(), chat)),
        judge=BackendInfo.of(judge.describe()) if judge is not None and judged else None,
        scorer=ScorerInfo.of(scorer.identity()),
        prompt_template_hash=scorer.template_hash(task),
        choice_order_seed=task.choice_order_seed,
        command=options.command,
        cluster=task.cluster,
        started_at=utc_now(),
        shard=str(shard_of(spec)) if spec.shard is not None else None,
        claim=options.claim,
    )



def sent_as_chat(task: Task, model: Model, scorer: Scorer) -> bool | None:
    """Whether the run's generation requests go out as chat messages, as the backend sends them
    (`Model.sent_prompt`); None for a run that generates nothing."""
    for item in task.items[:1]:
        for request in scorer.requests(task, item, 0):
            if isinstance(request, GenerateRequest):
                return not isinstance(model.sent_prompt(request), str)
    return None


def _with_chat(described: Mapping[str, object], chat: bool | None) -> Mapping[str, object]:
    """A backend's account (`identity`, `describe`) with its `chat` flag as the run's requests were sent: a
    completion request goes out as text whatever the endpoint's chat option; unchanged where it generates nothing."""
    if chat is None:
        return described
    out = {**described, "chat": chat} if "chat" in described else dict(described)
    settings = out.get("settings")
    if isinstance(settings, dict) and "chat" in settings:
        out["settings"] = {**settings, "chat": chat}
    return out


# ---------------------------------------------------------------- one chunk: ask, score, sample


# ---------------------------------------------------------------- the run


def _open_run_dir(run_dir: Path, manifest: Manifest) -> None:
    """Create the run directory, or resume the same run in it (its first start and time so far kept)."""
    mpath = run_dir / MANIFEST
    if mpath.exists():
        old = read_manifest(run_dir)
        if old.run_id != manifest.run_id:
            raise ProctorError(
                f"{run_dir} holds a different run (dataset, model or settings differ): choose another -o directory"
            )
        _same_claim(run_dir, old, manifest)
        manifest.started_at = old.started_at
        if manifest.spec is not None and manifest.spec.human_labels is None and old.spec is not None:
            manifest.spec = manifest.spec.model_copy(update={"human_labels": old.spec.human_labels})  # kept
        manifest.elapsed_s = old.elapsed_s  # this session's time is added when it finishes
    run_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(run_dir, manifest)


def _same_claim(run_dir: Path, old: Manifest, manifest: Manifest) -> None:
    """A run resumed under a claim began under it (`run --claim`); resumed without one, it keeps its own."""
    if manifest.claim is None:
        manifest.claim = old.claim
    elif old.claim is None or old.claim.sha256 != manifest.claim.sha256:
        began = "under another claim" if old.claim is not None else "without a claim"
        raise ProctorError(f"{run_dir}: --claim: this run began {began} ({old.started_at}); a claim is registered "
                           "before its run begins: choose another -o directory for a run under this claim")


def _open_store(options: RunOptions) -> Store | None:
    """The SQLite store for the cache and the history; None when neither is wanted."""
    if not (options.use_cache or options.record_history):
        return None
    return Store(options.store or default_store_path())


def _cached(model: Model, store: Store | None, options: RunOptions) -> Model:
    if store is None or not options.use_cache:
        return model
    return CachedModel(model, store)


@dataclass(frozen=True)
class _Answered:
    """What the dispatch loop needs of a sample already on disk: its outcome and error."""

    outcome: Outcome
    error: str | None


@dataclass
class _Tally:
    """Answers seen this session: stops a run whose first answers all failed (the failure hits every one)."""

    limit: int
    seen: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, samples: Sequence[Sample | _Answered]) -> None:
        for s in samples:
            self.seen += 1
            if s.outcome is Outcome.ERROR:
                self.errors[s.error or "unknown error"] += 1
        if 0 < self.limit <= self.seen and sum(self.errors.values()) == self.seen:
            kinds = error_kinds(self.errors)
            head = (f"the first {self.seen} answers all failed, so every request will: "
                    + (kinds[0] if len(kinds) == 1 else "\n  " + "\n  ".join(kinds)))
            raise RunAborted(
                head + "\nstopped early; fix the cause and run the same command again (nothing finished is lost)"
            )


_TOO_LONG = re.compile(r"prompt has (\d+) tokens; max_length is (\d+)")


@dataclass(frozen=True)
class ErrorGroup:
    """Error messages of one kind (the same text, numbers aside): how many, an example, and for prompts too long
    for the model's context, the longest against the limit."""

    count: int
    example: str
    too_long: tuple[int, int] | None = None  # (longest prompt, context) in tokens

    def describe(self, total: int | None = None) -> str:
        """`prompt longer than the model's context: 14 of 14, longest 2,045 > 1,024` (with `total`), or the
        example message (with `(k of n)` when others differ)."""
        share = f"{self.count} of {total}" if total is not None else ""
        if self.too_long is not None:
            head = self.example[: _TOO_LONG.search(self.example).start()]  # type: ignore[union-attr]
            longest, limit = self.too_long
            return (f"{head}prompt longer than the model's context{': ' + share + ',' if share else ','} "
                    f"longest {longest:,} > {limit:,}")
        return self.example + (f" ({share})" if share and self.count != total else "")


def error_groups(errors: Counter[str] | dict[str, int]) -> list[ErrorGroup]:
    """Error messages grouped by kind (numbers aside), most frequent first."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for message, count in errors.items():
        m = _TOO_LONG.search(message)
        key = message[: m.start()] + "\0too-long" if m else re.sub(r"\d+(\.\d+)?", "N", message)
        groups.setdefault(key, []).append((message, count))
    out = []
    for members in groups.values():
        sizes = [(int(m[1]), int(m[2])) for msg, _ in members if (m := _TOO_LONG.search(msg))]
        out.append(ErrorGroup(sum(c for _, c in members), members[0][0], max(sizes) if sizes else None))
    return sorted(out, key=lambda g: -g.count)


def error_kinds(errors: Counter[str] | dict[str, int]) -> list[str]:
    """One line per kind of error, e.g. "prompt longer than the model's context: 14 of 14, longest 2,045 > 1,024"."""
    total = sum(errors.values())
    return [g.describe(total) for g in error_groups(errors)]


class _Plan(Sequence[tuple[Item, int]]):
    """The run's (item, epoch) pairs, epoch-major, less those `done` (`id#epoch`): one 8-byte code each
    (epoch × items + index) rather than a tuple a sample (#40). A slice reads as the list of its pairs."""

    def __init__(self, items: Sequence[Item], epochs: int, done: Container[str]) -> None:
        self._items = items
        n = len(items)
        self._codes = array("q", (epoch * n + i for epoch in range(epochs) for i, item in enumerate(items)
                                  if f"{item.identifier}#{epoch}" not in done))

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, i: int) -> tuple[Item, int]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[Item, int]]: ...

    def __getitem__(self, i: int | slice) -> tuple[Item, int] | list[tuple[Item, int]]:
        n = len(self._items)
        if isinstance(i, slice):
            return [(self._items[c % n], c // n) for c in self._codes[i]]
        code = self._codes[i]
        return self._items[code % n], code // n


@dataclass(frozen=True)
class _Session:
    """What every dispatch of one run session shares: the task, the model (cached, guarded), the scorer, the run
    directory the samples are appended to, the spec (its prices), the options (chunk size, fail-fast) and the bar."""

    task: Task
    model: Model
    scorer: Scorer
    run_dir: Path
    spec: RunSpec
    options: RunOptions
    bar: Any


async def _dispatch(session: _Session, plan: Sequence[tuple[Item, int]], done: int, keep: bool = True,
                    mark: Callable[[Sequence[Sample]], list[Sample]] = list) -> dict[str, Sample]:
    """Run the chunks of `plan` concurrently, at most `_window` of them started at a time (the model's own limit
    decides how many requests are in flight); append each chunk's samples the moment it is scored (`mark`ed: a
    retry's second attempts carry their first, `proctor.run.retry.marked`). Return them by id (`keep`), or
    nothing: they are on disk, and a run summarized from there never holds them."""
    task, model, scorer, run_dir, spec, options, bar = (session.task, session.model, session.scorer,
                                                         session.run_dir, session.spec, session.options, session.bar)
    size = _chunk_size(model, scorer, options)
    chunks = (list(plan[i : i + size]) for i in range(0, len(plan), size))
    price, judge_price = spec.price, spec.judge.price if spec.judge else None

    async def one_call(chunk: list[tuple[Item, int]]) -> tuple[list[Sample] | list[_Answered], Any]:
        with bar.chunk(len(chunk)) as handle:  # what the backend reports inside the call moves the bar
            answered = await score_chunk(task, model, scorer, chunk)
        finished = mark(_priced(answered, price, judge_price))
        # on disk the moment it is scored: chunks that finish before the loop below reads them are not held
        append_samples(run_dir / SAMPLES, finished)
        return (finished if keep else [_Answered(s.outcome, s.error) for s in finished]), handle

    running: set[asyncio.Future[tuple[list[Sample] | list[_Answered], Any]]] = set()  # what the end cancels
    ended: asyncio.Queue[asyncio.Future[tuple[list[Sample] | list[_Answered], Any]]] = asyncio.Queue()
    tally = _Tally(options.fail_fast_after if len(plan) > options.fail_fast_after else 0)  # small: just finish
    by_id: dict[str, Sample] = {}
    stopped: CostLimitReached | None = None

    def start_more() -> None:
        """Start chunks in plan order until `_window` run (a call per chunk started at once held a task a chunk:
        ~1 KB each, 1 GB at a million samples of an API model)."""
        while stopped is None and len(running) < _window(model, size) and (chunk := next(chunks, None)) is not None:
            fut = asyncio.ensure_future(one_call(chunk))
            running.add(fut)
            fut.add_done_callback(ended.put_nowait)

    try:
        start_more()
        while running:
            fut = await ended.get()
            running.discard(fut)
            try:
                finished, handle = fut.result()
            except CostLimitReached as e:  # requests already sent still finish and are kept; no more are started
                stopped = e
                continue
            by_id.update((s.sample_id, s) for s in finished if isinstance(s, Sample))
            bar.cache_hits = done + _cache_hits(model)
            bar.in_flight = model.in_flight_limit
            errors = sum(s.outcome is Outcome.ERROR for s in finished)
            bar.finish(handle, len(finished) - errors, errors)
            tally.add(finished)
            start_more()
    finally:
        for p in running:
            p.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    if stopped is not None:
        raise stopped
    return by_id


WINDOW = 1024  # chunks started ahead at most: far above what a backend runs at once (an HTTP backend: twice its limit)
WINDOW_SAMPLES = 8192  # and samples: a local backend's chunks of 256 were the whole plan started at once (#40)


def _window(model: Model, size: int) -> int:
    """Chunks of `size` started ahead: twice what an HTTP backend allows in flight, else up to `WINDOW` chunks
    or `WINDOW_SAMPLES` samples, whichever is fewer (at least one chunk)."""
    return max(2 * (model.in_flight_limit or 0), min(WINDOW, -(-WINDOW_SAMPLES // size)))


def _chunk_size(model: Model, scorer: Scorer, options: RunOptions) -> int:
    """Items per model call: --chunk-size, else a local model's generation batch (`generation_chunk_size`:
    each finished batch is logged at once), else the model's `preferred_chunk_size`."""
    if options.chunk_size:
        return int(options.chunk_size)
    size = model.generation_chunk_size if scorer.capability is Capability.GENERATE else None  # through wrappers
    return size or model.preferred_chunk_size or DEFAULT_CHUNK_SIZE


def _cache_hits(model: Model) -> int:
    """Answers the request cache gave this session (0 without the cache)."""
    return model.hits if isinstance(model, CachedModel) else 0


def _cache_use(model: Model, scorer: Scorer) -> CacheUse | None:
    """What the request cache answered this session, the model's and the judge's (None without the cache)."""
    judge = getattr(scorer, "judge", None)
    if not isinstance(model, CachedModel):
        return None
    graded = judge if isinstance(judge, CachedModel) else None
    return CacheUse(hits=model.hits, asked=model.hits + model.misses,
                    judge_hits=graded.hits if graded else 0, judge_asked=graded.hits + graded.misses if graded else 0)


def _priced(samples: Sequence[Sample], price: Money | None, judge_price: Money | None) -> list[Sample]:
    """Each sample with its exact cost, and its judge calls' (when prices are known and usage was reported)."""
    out = []
    for s in samples:
        update: dict[str, str] = {}
        cost = sample_cost(price, s.input_tokens, s.output_tokens) if price is not None else None
        if cost is not None:
            update["cost"] = str(cost)
        calls = judge_usages(s.details)
        if judge_price is not None and calls:
            costs = [sample_cost(judge_price, i, o) for i, o in calls]
            if all(c is not None for c in costs):
                update["judge_cost"] = str(sum((c for c in costs if c is not None), Decimal(0)))
        out.append(s.model_copy(update=update) if update else s)
    return out


def _cost_guard(spent: Decimal, spec: RunSpec) -> CostGuard | None:
    """The `--max-cost` guard, starting from what the finished samples (their judge calls too) already cost."""
    if spec.budget is None or spec.price is None:
        return None
    return CostGuard(spec.budget.max_cost, spec.price.currency, spent)


def _guarded(model: Model, guard: CostGuard | None, price: Money | None, role: str,
             then: Model | None = None) -> Model:
    """`model` under the `--max-cost` guard (at most its own in-flight limit of requests reserved at once);
    `then`, its guarded judge, keeps room for one judge call free before an answer is asked for."""
    if guard is None or price is None:
        return model
    concurrency = model.in_flight_limit or model.preferred_chunk_size or 1
    return GuardedModel(model, guard, concurrency, price, role, then if isinstance(then, GuardedModel) else None)


async def evaluate_async(task: Task, model: Model, spec: RunSpec, options: RunOptions = RunOptions(),
                         judge: Model | None = None) -> RunLog:
    """The engine: run the resolved `spec` on `task`'s items with `model` (and `judge`), as `options` say where
    and how; return the run log (also written to disk). Doors build specs: `proctor.run.pipeline.run`."""
    try:
        _resolved(spec)
        task = with_cluster(task, spec)
        bind_tokenizer(task.prompts, token_counter(model))  # a builder fitting prompts to a budget counts with it
        scorer = build_scorer(task, spec, judge)
        _check_before_start(task, model, scorer, spec, judge)
        run_dir, run_id = locate_run(task, model.name, scorer, spec, options)
        model.set_log_dir(run_dir)  # vllm: its engine.log
        # e.g. a chat-only endpoint cannot score log-likelihoods; an agent's tools: vllm starts its tool parser
        await model.probe([scorer.capability, *([Capability.TOOLS] if isinstance(scorer, AgentScorer) else [])])
        _check_context(task, model, scorer, spec)
        with hold_run_dir(run_dir):  # one writer per dir
            return await _evaluate(task, model, scorer, spec, replace(options, out=run_dir), judge, run_id)
    finally:
        await model.aclose()
        if judge is not None:
            await judge.aclose()


async def _evaluate(task: Task, model: Model, scorer: Scorer, spec: RunSpec, options: RunOptions,
                    judge: Model | None, run_id: str) -> RunLog:
    session_start = time.monotonic()
    run_dir = options.out or default_run_dir(task, model.name, spec, options.runs_root, run_id)
    manifest = _manifest(task, model, scorer, spec, options, judge, run_id)
    store = _open_store(options)  # a damaged store stops the run before its directory is touched
    _open_run_dir(run_dir, manifest)
    done = resumed(run_dir, spec)  # the ids finished (a retry: its first run's samples copied in first)
    model.use_run_dir(run_dir)  # a batch-API model keeps its batch ids in the run directory
    guard = _cost_guard(done.spent, spec)  # one budget: the model's and the judge's requests
    guarded_judge = None
    if judge is not None and scorer.kind == "judge":
        judge_price = spec.judge.price if spec.judge else None
        guarded_judge = _guarded(judge, guard, judge_price, "judge")
        scorer = replace(scorer, judge=_cached(guarded_judge, store, options))  # type: ignore[type-var]
    price = spec.price
    cached_model = _cached(_guarded(model, guard, price, "model", guarded_judge), store, options)
    items = _shard_items(task, spec, run_dir, run_id)
    plan, firsts = _Plan(items, spec.epochs, done.ids), done.firsts
    with Progress(len(plan) + len(done.ids), enabled=options.progress, description=task.name,
                  in_flight=model.in_flight_limit) as bar:
        bar.advance(len(done.ids), cache_hit=True)
        session = _Session(task, cached_model, scorer, run_dir, spec, options, bar)
        if spec.stop_when is None:
            await _dispatch(session, plan, len(done.ids), keep=False, mark=lambda samples: marked(samples, firsts, spec))
        else:  # a batch at a time, until the comparison with the baseline is decided (proctor.run.stopwhen)
            _, manifest.sequential = await ask_until_decided(
                spec, items, done.samples, load_baseline(spec, task, options.store),
                lambda part, n: _dispatch(session, part, n), done.errored)
    del done
    if guard is not None and guard.refused:  # a judge call refused: its answers were kept as errors
        raise CostLimitReached(guard)
    manifest.elapsed_s = (manifest.elapsed_s or 0.0) + (time.monotonic() - session_start)
    # the samples stay on disk, read in plan order (whatever order chunks finished or runs resumed in: results are
    # reproducible) one at a time when summarized and recorded: memory does not grow with the run
    order = EpochMajor([item.identifier for item in task.items], spec.epochs)
    log = RunLog.model_construct(path=run_dir, manifest=manifest, samples=SamplesOnDisk(run_dir, order), results=None,
                                 streamed=True, cache=_cache_use(cached_model, scorer))
    history = store if options.record_history else None
    rows = ItemRows() if history is not None else None  # the history's rows, gathered in the summary's one pass
    results = await asyncio.to_thread(results_of, log, rows)  # in a daemon thread: ctrl-C never waits for a slow metric
    return finalize_run(log, history, results, rows)


def _shard_items(task: Task, spec: RunSpec, run_dir: Path, run_id: str) -> list[Item]:
    """The task's items this run asks for: all, or the shard's (recorded with the whole order in shard.json)."""
    shard = shard_of(spec)
    if shard is None:
        return list(task.items)
    order = [f"{item.identifier}#{epoch}" for epoch in range(spec.epochs) for item in task.items]
    if manifest_shard(run_dir) not in (None, str(shard)):
        raise ProctorError(f"{run_dir} holds shard {manifest_shard(run_dir)} of this run, not {shard}: "
                           "give each shard its own -o directory")
    write_shard_file(run_dir, shard, run_id, order)
    return _items_of(task, spec)


def _items_of(task: Task, spec: RunSpec) -> list[Item]:
    """The task's items, or the shard's (`--shard K/N`)."""
    shard = shard_of(spec)
    return [item for item in task.items if shard is None or shard.holds(item.identifier)]



def accuracy_line(results: Results) -> str:
    o = results.overall
    if o.accuracy is None or math.isnan(o.accuracy):
        return "accuracy: n/a (nothing scored)"
    items = f" of {o.n_items} items (the interval's unit)" if o.n_items is not None else ""
    return f"accuracy {o.accuracy:.3f} [{o.ci_low or 0:.3f}, {o.ci_high or 0:.3f}] n={o.n_scored}{items}"


__all__ = ["RunOptions", "RunState", "accuracy_line", "build_scorer", "default_run_dir", "error_groups", "error_kinds",
           "evaluate_async", "finalize_run", "finish_done_run", "plan_run"]
