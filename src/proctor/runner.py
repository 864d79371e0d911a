"""evaluate(): plan → (cached) dispatch → score → log, for every kind of task.

One pass over a Task with one model. The task's `Scorer` (generation + extraction, choice
log-likelihood, probsem suite, LLM judge) says what each item needs from the model and how a sample
is scored from the answers; this module does the rest the same way for all of them. Every answer is
durable the moment it arrives: remote backends hand over one item per call (`preferred_chunk_size`),
so its response is cached and its sample appended to `samples.jsonl` as soon as it is back, and a
kill -9 repeats at most the requests in flight. The same command run again resumes: samples already in
the log are kept, errored ones are retried, and the request cache answers anything the model already
did. Results are a pure function of the samples (`proctor.results.summarize`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import ValidationError

from .benchmarks.registry import load_task
from .chunk import score_chunk
from .errors import ProctorError, brief
from .finalize import finalize_run, results_of
from .models.base import Capability, GenerateRequest, GenerationSettings, Model, require
from .models.registry import get_model
from .pricing import CostGuard, CostLimitReached, GuardedModel, Price, sample_cost, token_counter
from .prompts import bind_tokenizer
from .provenance import (
    BackendInfo,
    DatasetInfo,
    GenerationRecord,
    ScorerInfo,
    collect_provenance,
    utc_now,
)
from .records import Item
from .resolve import resolve
from .resumecheck import check_resumable
from .runlog import (
    MANIFEST,
    SAMPLES,
    Manifest,
    Outcome,
    Results,
    RunLog,
    Sample,
    append_samples,
    iter_samples,
    read_manifest,
    write_manifest,
)
from .safepath import safe_component
from .scoring.base import Scorer
from .scoring.execute.sandbox import sandbox_for
from .scoring.execute.scorer import CodeScorer
from .scoring.judge import JUDGE_SETTINGS
from .shard import Shard, manifest_shard, write_shard_file
from .spec import (
    Budget,
    DatasetRef,
    GenerationSpec,
    JudgeSpec,
    ModelSpec,
    Money,
    RunSpec,
    ScorerSpec,
    ShardSpec,
)
from .tasks import Task

Mode = Literal["generate", "logprob"]
DEFAULT_CHUNK_SIZE = 256  # items per model call when the backend gives no hint
FAIL_FAST_AFTER = 8  # when the first N answers all failed, stop: the failure hits every request


class RunAborted(ProctorError):
    """Every one of the first answers failed the same way (bad key, unknown model, unreachable host)."""


@dataclass
class RunConfig:
    """How to run: everything here (but `out_dir`, `store`, `progress`) is part of the run's identity."""

    mode: Mode = "generate"
    prompt_kind: str | None = None  # default: the task's first kind
    # max_tokens None: the prompt kind's budget, else the benchmark's, else 1024 (proctor.resolve)
    settings: GenerationSettings = field(default_factory=lambda: GenerationSettings(max_tokens=None))
    epochs: int = 1
    judge: Model | None = None
    judge_agreement: int = 0  # also judge this many exact-answer items, to report judge/exact agreement
    out_dir: Path | None = None  # paths may be given as strings too
    runs_root: Path = Path("runs")
    use_cache: bool = True
    store_path: Path | None = None  # None: proctor.store.default_store_path()
    record_history: bool = True
    chunk_size: int | None = None  # items per model call (default: the model's preferred_chunk_size)
    progress: bool | None = None  # None: only on a terminal
    command: list[str] | None = None
    fail_fast_after: int = FAIL_FAST_AFTER  # 0: never stop early
    truncated_as: str = "wrong"  # "excluded": truncated samples leave accuracy (their rate is reported either way)
    extract: str = "reference"  # "robust": proctor's reader scores, not the benchmark's reference rule
    no_answer: str | None = None  # "guess": an unanswered item earns 1/k for k options; None: the answer rule's
    price: Price | None = None  # money per million tokens: cost per sample, per run, per correct answer
    max_cost: Decimal | None = None  # stop before a request could cross it (needs `price`, and `judge_price`)
    judge_price: Price | None = None  # the judge's money per million tokens: its calls are on the run's bill
    judge_settings: GenerationSettings | None = None  # the judge's sampling settings (None: greedy, 1024 tokens)
    shard: Shard | None = None  # run only this shard's items (--shard K/N; proctor.shard)
    spec: RunSpec | None = None  # the resolved spec (proctor.pipeline); None: built from this config and resolved

    def __post_init__(self) -> None:  # paths may be given as strings (Python callers)
        self.runs_root = Path(self.runs_root)
        self.out_dir = Path(self.out_dir) if self.out_dir is not None else None
        self.store_path = Path(self.store_path) if self.store_path is not None else None


# ---------------------------------------------------------------- planning


def build_scorer(task: Task, config: RunConfig, judge: Model | None = None) -> Scorer:
    """The task's own scorer, else the one `config.mode` asks for (suites score as probsem does)."""
    if task.scorer is not None:
        return task.scorer
    if task.code is not None and config.mode != "logprob":  # a code benchmark: its answers are run (sandboxed)
        unsafe = config.spec is not None and config.spec.unsafe_exec
        return CodeScorer(config.prompt_kind or task.prompts.kinds[0], task.code, sandbox_for(unsafe),
                          config.settings, config.epochs)
    if config.mode == "logprob":
        from .scoring.suites import SuiteScorer, is_suite_item

        if task.items and all(is_suite_item(it) for it in task.items):
            return SuiteScorer()
        from .scoring.choice_logprob import ChoiceScorer

        return ChoiceScorer()
    kind = config.prompt_kind or task.prompts.kinds[0]
    rule = task.answer_rule(kind)
    rule_name, no_answer = (rule.name if rule is not None else None), config.no_answer or "wrong"  # resolved
    if judge is None:
        from .scoring.scorers import GenerationScorer

        return GenerationScorer(kind, config.settings, config.epochs, extract=config.extract, answer_rule=rule_name,
                                no_answer=no_answer)
    from .scoring.judge import JudgeScorer

    agreement = [it.identifier for it in task.items if not it.modality.needs_judge][: config.judge_agreement]
    return JudgeScorer(kind, config.settings, config.epochs, judge=judge, agreement_ids=frozenset(agreement),
                       extract=config.extract, answer_rule=rule_name, no_answer=no_answer,
                       judge_settings=config.judge_settings or JUDGE_SETTINGS)


def _check_data(task: Task, model_name: str, scorer: Scorer, config: RunConfig) -> None:
    """Refuse what the data, the settings and the model's name alone show cannot work (no model needed)."""
    if not task.items:
        raise ProctorError(f"{task.name}: no items to evaluate")
    if config.epochs < 1:
        raise ProctorError("epochs must be at least 1")
    if scorer.capability is Capability.GENERATE:
        rule = task.answer_rule(config.prompt_kind or task.prompts.kinds[0])
        if rule is not None and rule.require is not None:  # a grader whose code is installed separately
            rule.require()
        from .reasoning import unsupported_settings

        problems = unsupported_settings(model_name.partition(":")[0], config.settings)
        if problems:
            raise ProctorError("; ".join(problems))
    if config.truncated_as not in ("wrong", "excluded"):
        raise ProctorError(f"truncated_as must be wrong or excluded, not {config.truncated_as!r}")
    from .scoring.extract import EXTRACT_CHOICES
    from .stats import NO_ANSWER_POLICIES

    if config.extract not in EXTRACT_CHOICES:
        raise ProctorError(f"extract must be reference or robust, not {config.extract!r}")
    if config.no_answer not in NO_ANSWER_POLICIES:
        raise ProctorError(f"no_answer must be wrong or guess, not {config.no_answer!r}")
    if config.max_cost is not None:
        if config.price is None:
            raise ProctorError(f"max_cost needs the price of {model_name}: a price table or price_in/price_out")
        if scorer.capability is not Capability.GENERATE or config.settings.max_tokens is None:
            raise ProctorError("max_cost needs a generation run with max_tokens (each request's worst case)")
        if config.judge is not None and scorer.kind == "judge" and config.judge_price is None:
            raise ProctorError(f"max_cost needs the price of the judge {config.judge.name} too: "
                               "add it to the price table")
    if config.price is not None and config.judge_price is not None and config.price.currency != config.judge_price.currency:
        raise ProctorError(f"the model's price is in {config.price.currency}, the judge's in "
                           f"{config.judge_price.currency}: one bill needs one currency")
    scorer.check(task)


def _check_before_start(task: Task, model: Model, scorer: Scorer, config: RunConfig) -> None:
    """Refuse, before anything runs, what cannot work."""
    _check_data(task, model.name, scorer, config)
    if scorer.capability is Capability.GENERATE and getattr(task.prompts, "completion", False) \
            and not getattr(model, "text_completion", False):
        raise ProctorError(f"{model.name} cannot take a plain-text prompt ({task.name} asks in completion format, "
                           "lm-eval's default): run with --format chat")
    if isinstance(scorer, CodeScorer) and scorer.prompt_kind in scorer.completion_kinds \
            and not getattr(model, "text_completion", False):
        raise ProctorError(f"{model.name} cannot take a plain-text prompt ({task.name}'s `{scorer.prompt_kind}` "
                           "prompt, the authors'): run with --prompt chat")
    if config.judge is not None and scorer.capability is Capability.GENERATE:  # the model: `probe`, once
        require(config.judge, [Capability.GENERATE])  # probe's static part: the judge is asked nothing before it grades


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

    @property
    def left(self) -> int:
        return self.total - self.done

    def resume_line(self) -> str | None:
        """`resuming: 16/16 done, 0 to ask` (None for a fresh run)."""
        if not self.done and not self.errored:
            return None
        retry = f" ({self.errored} errored before, asked again)" if self.errored else ""
        return f"resuming {self.run_dir}: {self.done}/{self.total} done, {self.left} to ask{retry}"


def plan_run(task: Task, model_name: str, config: RunConfig, judge_name: str | None = None) -> RunState:
    """Before any model loads: refuse what the data and the settings show cannot work, and find how much of
    the run (`config.out_dir`, else the default directory) is already done."""
    judge = cast(Model, _Named(judge_name)) if judge_name else None
    named = cast(Model, _Named(model_name))
    config = with_spec(task, model_name, config, judge_name)
    scorer = build_scorer(task, config, judge)
    _check_data(task, model_name, scorer, config)
    run_dir, _ = locate_run(task, named, scorer, config)
    wanted = {f"{item.identifier}#{epoch}" for epoch in range(config.epochs) for item in _items_of(task, config)}
    finished: dict[str, bool] = {}
    if (run_dir / MANIFEST).exists():
        finished = {s.sample_id: s.outcome is not Outcome.ERROR for s in iter_samples(run_dir / SAMPLES)
                    if s.sample_id in wanted}
    done = sum(finished.values())
    return RunState(run_dir, len(wanted), done, len(finished) - done)


def finish_done_run(state: RunState, config: RunConfig) -> RunLog:
    """A run with nothing left to ask: its results recomputed from its samples (no model loads)."""
    from .runlock import hold_run_dir

    with hold_run_dir(state.run_dir):
        store = _open_store(config) if config.record_history else None
        return finalize_run(state.run_dir, store)


CHARS_PER_TOKEN_UPPER_BOUND = 10  # no tokenizer at hand: a prompt has at least len/10 tokens (refuse only sure cases)


def _check_context(task: Task, model: Model, scorer: Scorer, config: RunConfig) -> None:
    """Refuse a generation run whose longest prompt + --max-tokens cannot fit the model's context window,
    when the backend knows it (a server's max_model_len, an hf model's max_length)."""
    window = model.context_length
    max_tokens = config.settings.max_tokens
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


def legacy_run_ids(task: Task, model: Model, scorer: Scorer, config: RunConfig) -> tuple[str, ...]:
    """The run ids of proctor before RunSpec, newest first: with the answer rule and no-answer policy in the
    scorer's identity (#29), and without (main 6639c56). Their run directories are still found and resumed."""
    ident = scorer.identity()
    key = {"dataset": task.content_hash, "model": model.name, "epochs": config.epochs, **ident}
    older = {k: v for k, v in key.items() if k not in RULE_ERA_KEYS}
    ids = [hashlib.sha256(json.dumps(k, sort_keys=True).encode()).hexdigest()[:12] for k in (key, older)]
    return tuple(dict.fromkeys(ids))


def run_id_of(config: RunConfig) -> str:
    """The run id: the resolved spec's (`with_spec` sets it)."""
    if config.spec is None:
        raise ProctorError("internal: a run's config has no spec (call with_spec first)")
    return config.spec.run_id()


def default_run_dir(task: Task, model: Model, scorer: Scorer, config: RunConfig, run_id: str | None = None) -> Path:
    """Deterministic per (dataset, model, settings): the same command finds its run again and resumes."""
    name = safe_component(f"{task.name}__{model.name}".replace(":", "-"), fallback="run")
    shard = f"__{config.shard.suffix}" if config.shard is not None else ""
    return config.runs_root / f"{name}__{run_id or run_id_of(config)}{shard}"


def locate_run(task: Task, model: Model, scorer: Scorer, config: RunConfig) -> tuple[Path, str]:
    """The run's directory and id: `out_dir` or the default directory, or the directory an older proctor
    wrote for the same run (its old id kept); a directory holding another run is refused."""
    run_id, legacies = run_id_of(config), legacy_run_ids(task, model, scorer, config)
    path = config.out_dir or default_run_dir(task, model, scorer, config, run_id)
    if config.out_dir is None and not (path / MANIFEST).exists():
        for legacy in legacies:
            old = default_run_dir(task, model, scorer, config, legacy)
            if (old / MANIFEST).exists() and _is_legacy_of(read_manifest(old), legacy, config):
                return old, legacy
    if not (path / MANIFEST).exists():
        return path, run_id
    found = read_manifest(path)
    if found.run_id == run_id:
        check_resumable(path, found, config.spec, task)  # a hand-edited manifest is refused, naming the field
        return path, run_id
    if found.run_id in legacies and _is_legacy_of(found, found.run_id, config):
        return path, found.run_id
    raise ProctorError(f"{path} holds a different run (dataset, model or settings differ): choose another -o directory")


def _is_legacy_of(found: Manifest, legacy: str, config: RunConfig) -> bool:
    """`found` is this run as an older proctor wrote it: its old id, and what that id left out (how results
    count no-answers and truncations, the answer rule) agrees."""
    spec = config.spec
    return found.run_id == legacy and spec is not None and (found.no_answer, found.truncated_as, found.answer_rule) == (
        spec.scorer.no_answer, spec.scorer.truncated_as, spec.scorer.answer_rule)


def spec_of(task: Task, model_name: str, config: RunConfig, judge_name: str | None = None) -> RunSpec:
    """The RunSpec a Task object, a model and a RunConfig express (the door of `evaluate(task, model, config)`)."""
    judge = judge_name or (config.judge.name if config.judge is not None else None)
    try:
        return RunSpec(
            dataset=DatasetRef(name=task.name), model=ModelSpec(spec=model_name),
            scorer=ScorerSpec(mode=config.mode, prompt_kind=config.prompt_kind, extract=config.extract,  # type: ignore[arg-type]
                              no_answer=config.no_answer, truncated_as=config.truncated_as,  # type: ignore[arg-type]
                              judge_agreement=config.judge_agreement),
            generation=GenerationSpec.of(config.settings), epochs=config.epochs,
            shard=ShardSpec(index=config.shard.index, count=config.shard.count) if config.shard else None,
            judge=JudgeSpec(model=judge, price=money(config.judge_price)) if judge else None,
            price=money(config.price), budget=Budget(max_cost=config.max_cost) if config.max_cost is not None else None)
    except ValidationError as e:
        raise ProctorError(f"run settings: {brief(e)}") from None


def money(price: Price | None) -> Money | None:
    """A Price as the spec records it."""
    if price is None:
        return None
    return Money(input=price.input, output=price.output, currency=price.currency, source=price.source)


def with_spec(task: Task, model_name: str, config: RunConfig, judge_name: str | None = None) -> RunConfig:
    """`config` with its resolved spec, and what resolving it chose applied (prompt kind, settings, no-answer)."""
    if config.spec is not None and config.spec.resolved:
        return config
    spec = resolve(config.spec or spec_of(task, model_name, config, judge_name), task)
    settings = spec.generation.settings() if spec.scorer.mode == "generate" else config.settings
    return replace(config, spec=spec, prompt_kind=spec.scorer.prompt_kind, settings=settings,
                   no_answer=spec.scorer.no_answer)


def with_cluster(task: Task, config: RunConfig) -> Task:
    """`task` clustered as its resolved spec says (`--cluster`, else the benchmark's own; "none": items alone)."""
    spec = config.spec
    if spec is None or spec.cluster is None or spec.clustered_by == task.cluster:
        return task
    return replace(task, cluster=spec.clustered_by)


# ---------------------------------------------------------------- provenance


def _answer_rule_name(task: Task, scorer: Scorer, kind: str | None) -> str | None:
    rule = task.answer_rule(kind) if kind is not None and scorer.mode == "generate" else None
    return rule.name if rule is not None else None


def _manifest(task: Task, model: Model, scorer: Scorer, config: RunConfig, run_id: str) -> Manifest:
    ident = scorer.identity()
    extractor = ident.get("extractor") or (f"argmax-{ident['norm']}" if "norm" in ident else None)
    judged = config.judge is not None and scorer.kind == "judge"
    return Manifest(
        run_id=run_id,
        provenance=collect_provenance(model.identity()),
        dataset=DatasetInfo.of(task.provenance()),
        model=BackendInfo.of(model.describe()),
        mode=scorer.mode,
        scorer=ScorerInfo.of(ident),
        prompt_kind=ident.get("prompt_kind", "probsem-suite" if scorer.kind == "suite" else None),
        prompt_template_hash=scorer.template_hash(task),
        extractor_version=extractor,
        choice_order_seed=task.choice_order_seed,
        generation=GenerationRecord.of(config.settings.as_dict()) if scorer.mode == "generate" else None,
        epochs=config.epochs,
        judge=BackendInfo.of(config.judge.describe()) if config.judge is not None and judged else None,
        truncated_as=config.truncated_as,
        extract=ident.get("extract"),
        answer_rule=_answer_rule_name(task, scorer, ident.get("prompt_kind")),
        no_answer=config.no_answer or "wrong",
        price=config.price.record() if config.price is not None else None,
        max_cost=str(config.max_cost) if config.max_cost is not None else None,
        judge_price=config.judge_price.record() if config.judge_price is not None and judged else None,
        command=config.command,
        cluster=task.cluster,
        started_at=utc_now(),
        spec=config.spec,
    )


# ---------------------------------------------------------------- one chunk: ask, score, sample


# ---------------------------------------------------------------- the run


def _open_run_dir(run_dir: Path, manifest: Manifest) -> dict[str, Sample]:
    """Create the run directory, or resume the same run in it; return the samples already finished."""
    mpath = run_dir / MANIFEST
    if mpath.exists():
        old = read_manifest(run_dir)
        if old.run_id != manifest.run_id:
            raise ProctorError(
                f"{run_dir} holds a different run (dataset, model or settings differ): choose another -o directory"
            )
        manifest.started_at = old.started_at
        manifest.elapsed_s = old.elapsed_s  # this session's time is added when it finishes
    run_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(run_dir, manifest)
    done: dict[str, Sample] = {}
    for s in iter_samples(run_dir / SAMPLES):
        done[s.sample_id] = s
    return {k: s for k, s in done.items() if s.outcome is not Outcome.ERROR}


def _open_store(config: RunConfig) -> Any:
    """The SQLite store for the cache and the history; None when neither is wanted."""
    if not (config.use_cache or config.record_history):
        return None
    from .store import Store, default_store_path

    return Store(config.store_path or default_store_path())


def _cached(model: Model, store: Any, config: RunConfig) -> Model:
    if store is None or not config.use_cache:
        return model
    from .cache import CachedModel

    return CachedModel(model, store)


@dataclass
class _Tally:
    """Answers seen this session: stops a run whose first answers all failed (the failure hits every one)."""

    limit: int
    seen: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, samples: Sequence[Sample]) -> None:
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


async def _dispatch(task: Task, model: Model, scorer: Scorer, plan: list[tuple[Item, int]], run_dir: Path,
                    config: RunConfig, bar: Any, done: int) -> dict[str, Sample]:
    """Run every chunk of `plan` concurrently; append each chunk's samples the moment it is scored."""
    size = _chunk_size(model, scorer, config)
    chunks = [plan[i : i + size] for i in range(0, len(plan), size)]

    async def one_call(chunk: list[tuple[Item, int]]) -> tuple[list[Sample], Any]:
        with bar.chunk(len(chunk)) as handle:  # what the backend reports inside the call moves the bar
            return await score_chunk(task, model, scorer, chunk), handle

    pending = [asyncio.ensure_future(one_call(c)) for c in chunks]
    tally = _Tally(config.fail_fast_after if len(plan) > config.fail_fast_after else 0)  # small: just finish
    by_id: dict[str, Sample] = {}
    stopped: CostLimitReached | None = None
    try:
        for fut in asyncio.as_completed(pending):
            try:
                answered, handle = await fut
            except CostLimitReached as e:  # requests already sent still finish and are kept
                stopped = e
                continue
            finished = _priced(answered, config)
            append_samples(run_dir / SAMPLES, finished)
            by_id.update((s.sample_id, s) for s in finished)
            bar.cache_hits = done + _cache_hits(model)
            bar.in_flight = model.in_flight_limit
            errors = sum(s.outcome is Outcome.ERROR for s in finished)
            bar.finish(handle, len(finished) - errors, errors)
            tally.add(finished)
    finally:
        for p in pending:
            p.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    if stopped is not None:
        raise stopped
    return by_id


def _chunk_size(model: Model, scorer: Scorer, config: RunConfig) -> int:
    """Items per model call: --chunk-size, else a local model's generation batch (`generation_chunk_size`:
    each finished batch is logged at once), else the model's `preferred_chunk_size`."""
    if config.chunk_size:
        return int(config.chunk_size)
    size = model.generation_chunk_size if scorer.capability is Capability.GENERATE else None  # through wrappers
    return size or model.preferred_chunk_size or DEFAULT_CHUNK_SIZE


def _cache_hits(model: Model) -> int:
    """Answers the request cache gave this session (0 without the cache)."""
    from .cache import CachedModel

    return model.hits if isinstance(model, CachedModel) else 0


def _priced(samples: Sequence[Sample], config: RunConfig) -> list[Sample]:
    """Each sample with its exact cost, and its judge calls' (when prices are known and usage was reported)."""
    from .scoring.judge import judge_usages

    out = []
    for s in samples:
        update: dict[str, str] = {}
        cost = sample_cost(config.price, s.input_tokens, s.output_tokens) if config.price is not None else None
        if cost is not None:
            update["cost"] = str(cost)
        calls = judge_usages(s.details)
        if config.judge_price is not None and calls:
            costs = [sample_cost(config.judge_price, i, o) for i, o in calls]
            if all(c is not None for c in costs):
                update["judge_cost"] = str(sum((c for c in costs if c is not None), Decimal(0)))
        out.append(s.model_copy(update=update) if update else s)
    return out


def _cost_guard(done: dict[str, Sample], config: RunConfig) -> CostGuard | None:
    """The `--max-cost` guard, starting from what the finished samples (their judge calls too) already cost."""
    if config.max_cost is None or config.price is None:
        return None
    spent = sum((Decimal(c) for s in done.values() for c in (s.cost, s.judge_cost) if c is not None), Decimal(0))
    return CostGuard(config.max_cost, config.price.currency, spent)


def _guarded(model: Model, guard: CostGuard | None, price: Price | None, role: str,
             then: Model | None = None) -> Model:
    """`model` under the `--max-cost` guard (at most its own in-flight limit of requests reserved at once);
    `then`, its guarded judge, keeps room for one judge call free before an answer is asked for."""
    if guard is None or price is None:
        return model
    concurrency = model.in_flight_limit or model.preferred_chunk_size or 1
    return GuardedModel(model, guard, concurrency, price, role, then if isinstance(then, GuardedModel) else None)


async def evaluate_async(task: Task | str | Path, model: Model | str, config: RunConfig | None = None) -> RunLog:
    """Run `task` on `model` with the task's scorer; return the run log (also written to disk). `task` may be
    a built-in benchmark name or a path, `model` a spec such as "hf:out/tiny" (`proctor.eval` takes options too)."""
    from .runlock import hold_run_dir

    task = task if isinstance(task, Task) else load_task(str(task))
    model = model if isinstance(model, Model) else get_model(model)
    config = config or RunConfig()
    try:
        config = with_spec(task, model.name, config)
        task = with_cluster(task, config)
        bind_tokenizer(task.prompts, token_counter(model))  # a builder fitting prompts to a budget counts with it
        scorer = build_scorer(task, config, config.judge)
        _check_before_start(task, model, scorer, config)
        run_dir, run_id = locate_run(task, model, scorer, config)
        model.set_log_dir(run_dir)  # vllm: its engine.log
        await model.probe([scorer.capability])  # e.g. a chat-only endpoint cannot score log-likelihoods
        _check_context(task, model, scorer, config)
        with hold_run_dir(run_dir):  # one writer per dir
            return await _evaluate(task, model, scorer, replace(config, out_dir=run_dir), run_id)
    finally:
        await model.aclose()
        if config.judge is not None:
            await config.judge.aclose()


async def _evaluate(task: Task, model: Model, scorer: Scorer, config: RunConfig, run_id: str) -> RunLog:
    session_start = time.monotonic()
    run_dir = config.out_dir or default_run_dir(task, model, scorer, config, run_id)
    manifest = _manifest(task, model, scorer, config, run_id)
    manifest.shard = str(config.shard) if config.shard is not None else None
    store = _open_store(config)  # a damaged store stops the run before its directory is touched
    done = _open_run_dir(run_dir, manifest)
    model.use_run_dir(run_dir)  # a batch-API model keeps its batch ids in the run directory
    guard = _cost_guard(done, config)  # one budget: the model's and the judge's requests
    judge = None
    if config.judge is not None and scorer.kind == "judge":
        judge = _guarded(config.judge, guard, config.judge_price, "judge")
        scorer = replace(scorer, judge=_cached(judge, store, config))  # type: ignore[type-var]
    cached_model = _cached(_guarded(model, guard, config.price, "model", judge), store, config)
    items = _shard_items(task, config, run_dir, run_id)
    plan = [
        (item, epoch)
        for epoch in range(config.epochs)
        for item in items
        if f"{item.identifier}#{epoch}" not in done
    ]
    from .progress import Progress

    with Progress(len(plan) + len(done), enabled=config.progress, description=task.name,
                  in_flight=model.in_flight_limit) as bar:
        bar.advance(len(done), cache_hit=True)
        by_id = dict(done) | await _dispatch(task, cached_model, scorer, plan, run_dir, config, bar, len(done))
    if guard is not None and guard.refused:  # a judge call refused: its answers were kept as errors
        raise CostLimitReached(guard)
    # in plan order, whatever order chunks finished or runs resumed in: results are reproducible
    ordered = [
        by_id[sid]
        for epoch in range(config.epochs)
        for item in task.items
        if (sid := f"{item.identifier}#{epoch}") in by_id
    ]
    manifest.elapsed_s = (manifest.elapsed_s or 0.0) + (time.monotonic() - session_start)
    log = RunLog(path=run_dir, manifest=manifest, samples=ordered)
    results = await asyncio.to_thread(results_of, log)  # in a daemon thread: ctrl-C never waits for a slow metric
    return finalize_run(log, store if config.record_history else None, results)


def _shard_items(task: Task, config: RunConfig, run_dir: Path, run_id: str) -> list[Item]:
    """The task's items this run asks for: all, or the shard's (recorded with the whole order in shard.json)."""
    if config.shard is None:
        return list(task.items)
    order = [f"{item.identifier}#{epoch}" for epoch in range(config.epochs) for item in task.items]
    if manifest_shard(run_dir) not in (None, str(config.shard)):
        raise ProctorError(f"{run_dir} holds shard {manifest_shard(run_dir)} of this run, not {config.shard}: "
                           "give each shard its own -o directory")
    write_shard_file(run_dir, config.shard, run_id, order)
    return _items_of(task, config)


def _items_of(task: Task, config: RunConfig) -> list[Item]:
    """The task's items, or the shard's (`--shard K/N`)."""
    shard = config.shard
    return [item for item in task.items if shard is None or shard.holds(item.identifier)]


def evaluate(task: Task | str | Path, model: Model | str, config: RunConfig | None = None) -> RunLog:
    """Synchronous wrapper around `evaluate_async` (ctrl-C is not held up by a backend's worker thread)."""
    from .interruptible import run

    return run(evaluate_async(task, model, config))


def accuracy_line(results: Results) -> str:
    o = results.overall
    if o.accuracy is None or math.isnan(o.accuracy):
        return "accuracy: n/a (nothing scored)"
    return f"accuracy {o.accuracy:.3f} [{o.ci_low or 0:.3f}, {o.ci_high or 0:.3f}] n={o.n_scored}"


__all__ = ["RunConfig", "RunState", "accuracy_line", "default_run_dir", "error_groups", "error_kinds", "evaluate", "evaluate_async",
           "finalize_run", "finish_done_run", "plan_run"]
