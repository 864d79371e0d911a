"""evaluate(): plan → (cached) dispatch → score → log.

One pass over a Task with one model. Every finished sample is appended to `samples.jsonl` at once,
so a crash, a kill -9 or a ctrl-C loses nothing finished; the same command run again resumes: samples
already in the log are kept, errored ones are retried, and the request cache answers anything the
model already did. Results are a pure function of the samples (`proctor.stats.summarize`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .errors import ProctorError
from .models.base import Capability, GenerateRequest, GenerationSettings, LoglikelihoodRequest, Model
from .models.registry import require
from .provenance import git_sha, host_info, utc_now
from .records import Item
from .runlog import (
    MANIFEST,
    SAMPLES,
    Manifest,
    Outcome,
    RunLog,
    Sample,
    append_samples,
    iter_samples,
    read_manifest,
    read_run,
    write_manifest,
    write_results,
)
from .tasks import Task, text_hash

Mode = Literal["generate", "logprob"]
# Samples are logged as each chunk of requests finishes: local backends batch within a chunk, while
# remote ones (preferred_chunk_size = 1) log every answer the moment it arrives.
DEFAULT_CHUNK_SIZE = 256


@dataclass
class RunConfig:
    """How to run: everything here (but `out_dir`, `store`, `progress`) is part of the run's identity."""

    mode: Mode = "generate"
    prompt_kind: str | None = None  # default: the task's first kind
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    epochs: int = 1
    judge: Model | None = None
    judge_agreement: int = 0  # also judge this many exact-answer items, to report judge/exact agreement
    out_dir: Path | None = None
    runs_root: Path = Path("runs")
    use_cache: bool = True
    store_path: Path | None = None  # None: proctor.store.default_store_path()
    record_history: bool = True
    chunk_size: int | None = None  # requests per model call (default: the model's preferred_chunk_size)
    progress: bool | None = None  # None: only on a terminal
    command: list[str] | None = None

    def identity(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "prompt_kind": self.prompt_kind,
            "generation": self.settings.as_dict(),
            "epochs": self.epochs,
            "judge": self.judge.name if self.judge else None,
            "judge_agreement": self.judge_agreement if self.judge else 0,
        }


# ---------------------------------------------------------------- planning


def _settings_for_epoch(settings: GenerationSettings, epoch: int, epochs: int) -> GenerationSettings:
    """Sampled epochs differ by seed, so each is its own (cacheable, reproducible) request."""
    if epochs > 1 and settings.temperature > 0:
        return replace(settings, seed=(settings.seed or 0) + epoch)
    return settings


def _check_before_start(task: Task, model: Model, config: RunConfig) -> str | None:
    """Refuse, before anything runs, what cannot work; return the prompt kind to use."""
    if not task.items:
        raise ProctorError(f"{task.name}: no items to evaluate")
    if config.epochs < 1:
        raise ProctorError("--epochs must be at least 1")
    if config.mode == "logprob":
        require(model, Capability.LOGLIKELIHOOD, "a log-likelihood run scores each choice's log-probability")
        from .scoring.choice_logprob import logprob_options

        bad = [it.identifier for it in task.items if not logprob_options(it)]
        if bad:
            raise ProctorError(
                f"--mode logprob needs closed-set items (choiceofN, boolean, ternary); {len(bad)} are not,"
                f" e.g. {bad[0]}: use --mode generate"
            )
        return None
    require(model, Capability.GENERATE, "a generation run asks the model for answers")
    prose = [it for it in task.items if it.modality.needs_judge]
    if prose and config.judge is None:
        raise ProctorError(
            f"{len(prose)} items ({prose[0].modality.value}, e.g. {prose[0].identifier}) are graded by an LLM judge:"
            " pass --judge MODEL"
        )
    if config.judge is not None:
        require(config.judge, Capability.GENERATE, "the judge grades answers by generating a verdict")
    kind = config.prompt_kind or task.prompts.kinds[0]
    if kind not in task.prompts.kinds:
        raise ProctorError(f"{task.name} has no prompt {kind!r}; it offers: {', '.join(task.prompts.kinds)}")
    return kind


def run_identity_hash(task: Task, model: Model, config: RunConfig) -> str:
    key = {"dataset": task.content_hash, "model": model.name, **config.identity()}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def default_run_dir(task: Task, model: Model, config: RunConfig) -> Path:
    """Deterministic per (dataset, model, settings): the same command finds its run again and resumes."""
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in f"{task.name}__{model.name}")
    return config.runs_root / f"{safe}__{run_identity_hash(task, model, config)}"


# ---------------------------------------------------------------- provenance


def _template_hash(task: Task, kind: str | None) -> str:
    """The chat template's hash; in logprob mode (no prompt kind) a hash of the exact contexts scored."""
    if kind is not None:
        return task.prompts.template_hash(kind)
    return text_hash("logprob", *(task.prompts.logprob_context(item) for item in task.items))


def _manifest(task: Task, model: Model, config: RunConfig, kind: str | None, run_id: str) -> Manifest:
    from . import __version__

    extractor_version = None
    if config.mode == "generate":
        from .scoring.extract import EXTRACTOR_VERSION

        extractor_version = EXTRACTOR_VERSION
    return Manifest(
        run_id=run_id,
        proctor_version=__version__,
        git_sha=git_sha(),
        dataset=task.provenance(),
        model=model.describe(),
        mode=config.mode,
        prompt_kind=kind,
        prompt_template_hash=_template_hash(task, kind),
        extractor_version=extractor_version,
        choice_order_seed=task.choice_order_seed,
        generation=config.settings.as_dict() if config.mode == "generate" else {},
        epochs=config.epochs,
        judge=config.judge.describe() if config.judge else None,
        command=config.command,
        host=host_info(),
        started_at=utc_now(),
        identity=config.identity(),
    )


# ---------------------------------------------------------------- scoring one chunk


def _base_sample(task: Task, item: Item, epoch: int, mode: str) -> dict[str, Any]:
    return {
        "sample_id": f"{item.identifier}#{epoch}",
        "item_id": item.identifier,
        "epoch": epoch,
        "dataset": task.name,
        "category": item.category,
        "subcategory": item.subcategory,
        "modality": item.modality.value,
        "difficulty": item.difficulty,
        "mode": mode,
        "reference": item.model_dump(mode="json")["response"],
    }


async def _generate_chunk(
    task: Task,
    model: Model,
    judge: Model | None,
    kind: str,
    config: RunConfig,
    plan: Sequence[tuple[Item, int]],
    agreement_ids: frozenset[str] = frozenset(),
) -> list[Sample]:
    from .scoring.scorers import score_item

    requests = [
        GenerateRequest(task.prompts.messages(item, kind), _settings_for_epoch(config.settings, epoch, config.epochs))
        for item, epoch in plan
    ]
    generations = await model.generate(requests)
    samples: list[Sample | None] = [None] * len(plan)
    to_judge: list[int] = []
    for i, ((item, epoch), req, gen) in enumerate(zip(plan, requests, generations, strict=True)):
        base = _base_sample(task, item, epoch, "generate") | {
            "prompt": [{"role": m.role, "content": m.content} for m in req.messages],
            "raw_output": gen.text if gen.error is None else None,
            "input_tokens": gen.input_tokens,
            "output_tokens": gen.output_tokens,
            "latency_s": gen.latency_s,
            "finish_reason": gen.finish_reason,
            "reasoning": gen.reasoning,
        }
        if gen.error is not None:
            samples[i] = Sample(**base, outcome=Outcome.ERROR, error=gen.error)
        elif item.modality.needs_judge:
            to_judge.append(i)
            samples[i] = Sample(**base, outcome=Outcome.UNSCORED)  # replaced below
        else:
            s = score_item(item, gen.text)
            samples[i] = Sample(
                **base, outcome=s.outcome, score=s.score, extracted=s.extracted, extraction_rule=s.rule,
                details=dict(s.details),
            )
    # exact-answer items picked for the judge-agreement check are judged too, in the same batch
    to_check = [
        i for i, s in enumerate(samples)
        if s is not None and s.item_id in agreement_ids and s.epoch == 0 and s.scored and s.raw_output is not None
    ]
    if (to_judge or to_check) and judge is not None:
        from .scoring.judge import judge_items

        verdicts = await judge_items(judge, [(plan[i][0], generations[i].text) for i in to_judge + to_check])
        for i, v in zip(to_judge, verdicts[: len(to_judge)], strict=True):
            old = samples[i]
            assert old is not None
            samples[i] = old.model_copy(
                update={
                    "outcome": v.outcome, "score": v.score, "extracted": v.extracted,
                    "extraction_rule": v.rule, "details": dict(v.details),
                    "error": v.details.get("error") if v.outcome is Outcome.ERROR else None,
                }
            )
        for i, v in zip(to_check, verdicts[len(to_judge) :], strict=True):
            old = samples[i]
            assert old is not None
            check = {"outcome": v.outcome.value, "score": v.score, "details": dict(v.details)}
            samples[i] = old.model_copy(update={"details": {**old.details, "judge_check": check}})
    return [s for s in samples if s is not None]


async def _logprob_chunk(task: Task, model: Model, plan: Sequence[tuple[Item, int]]) -> list[Sample]:
    from .scoring.choice_logprob import choice_requests, score_choices

    contexts = [task.prompts.logprob_context(item) for item, _ in plan]
    per_item = [choice_requests(item, ctx) for (item, _), ctx in zip(plan, contexts, strict=True)]
    flat: list[LoglikelihoodRequest] = [r for reqs in per_item for r in reqs]
    results = await model.loglikelihood(flat)
    samples: list[Sample] = []
    offset = 0
    for (item, epoch), ctx, reqs in zip(plan, contexts, per_item, strict=True):
        res = results[offset : offset + len(reqs)]
        offset += len(reqs)
        base = _base_sample(task, item, epoch, "logprob") | {"prompt": ctx}
        errors = [r.error for r in res if r.error is not None]
        if errors:
            samples.append(Sample(**base, outcome=Outcome.ERROR, error=errors[0]))
            continue
        predicted, correct, norm_correct, details = score_choices(item, res)
        samples.append(
            Sample(
                **base,
                outcome=Outcome.CORRECT if correct else Outcome.WRONG,
                score=1.0 if correct else 0.0,
                extracted=predicted,
                extraction_rule="argmax-logprob",
                details={**details, "acc_norm_correct": norm_correct},
            )
        )
    return samples


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


async def evaluate_async(task: Task, model: Model, config: RunConfig | None = None) -> RunLog:
    """Run `task` on `model`; return the run log (also written to disk)."""
    from .runlock import hold_run_dir

    config = config or RunConfig()
    with hold_run_dir(config.out_dir or default_run_dir(task, model, config)):  # one writer per run dir
        return await _evaluate_locked(task, model, config)


async def _evaluate_locked(task: Task, model: Model, config: RunConfig) -> RunLog:
    kind = _check_before_start(task, model, config)
    probe = getattr(model, "probe", None)
    if probe is not None:  # e.g. a chat-only endpoint cannot score log-likelihoods: say so before the run
        await probe([Capability.LOGLIKELIHOOD if config.mode == "logprob" else Capability.GENERATE])

    session_start = time.monotonic()
    run_id = run_identity_hash(task, model, config)
    run_dir = config.out_dir or default_run_dir(task, model, config)
    manifest = _manifest(task, model, config, kind, run_id)
    store = _open_store(config)  # a damaged store stops the run before its directory is touched
    done = _open_run_dir(run_dir, manifest)

    cached_model = _cached(model, store, config)
    cached_judge = _cached(config.judge, store, config) if config.judge is not None else None

    plan = [
        (item, epoch)
        for epoch in range(config.epochs)
        for item in task.items
        if f"{item.identifier}#{epoch}" not in done
    ]
    agreement_ids = frozenset(
        [it.identifier for it in task.items if not it.modality.needs_judge][: config.judge_agreement]
        if config.judge is not None else []
    )
    from .progress import Progress

    samples_path = run_dir / SAMPLES
    size = int(config.chunk_size or getattr(model, "preferred_chunk_size", None) or DEFAULT_CHUNK_SIZE)
    chunks = [plan[i : i + size] for i in range(0, len(plan), size)]
    with Progress(len(plan) + len(done), enabled=config.progress, description=task.name) as bar:
        bar.advance(len(done), cache_hit=True)

        async def one(chunk: Sequence[tuple[Item, int]]) -> list[Sample]:
            if config.mode == "logprob":
                return await _logprob_chunk(task, cached_model, chunk)
            assert kind is not None
            return await _generate_chunk(task, cached_model, cached_judge, kind, config, chunk, agreement_ids)

        pending = [asyncio.ensure_future(one(c)) for c in chunks]
        by_id = dict(done)
        try:
            for fut in asyncio.as_completed(pending):
                finished = await fut
                append_samples(samples_path, finished)
                by_id.update((s.sample_id, s) for s in finished)
                bar.cache_hits = len(done) + getattr(cached_model, "hits", 0)
                errors = sum(s.outcome is Outcome.ERROR for s in finished)
                bar.advance(len(finished) - errors)
                bar.advance(errors, error=True)
        finally:
            for p in pending:
                p.cancel()

    # in plan order, whatever order chunks finished or runs resumed in: results are reproducible
    ordered = [
        by_id[sid]
        for epoch in range(config.epochs)
        for item in task.items
        if (sid := f"{item.identifier}#{epoch}") in by_id
    ]
    manifest.elapsed_s = (manifest.elapsed_s or 0.0) + (time.monotonic() - session_start)
    return finalize_run(RunLog(path=run_dir, manifest=manifest, samples=ordered), store if config.record_history else None)


def _judge_agreement(samples: Sequence[Sample]) -> dict[str, Any] | None:
    """How often the judge agreed with exact-match scoring on the items checked both ways."""
    pairs = [
        (Outcome(s.details["judge_check"]["outcome"]), s.outcome) for s in samples if "judge_check" in s.details
    ]
    if not pairs:
        return None
    from .scoring.judge import judge_agreement

    return judge_agreement(pairs)


def finalize_run(run: Path | RunLog, store: Any = None) -> RunLog:
    """Compute results.json from the samples (of a run directory, or already in memory), stamp the
    manifest as finished, and record the run in the history store."""
    from .stats import summarize

    log = run if isinstance(run, RunLog) else read_run(run)
    results = summarize(log.samples)
    agreement = _judge_agreement(log.samples)
    if agreement is not None:
        results["judge_agreement"] = agreement
    write_results(log.path, results)
    log.manifest.finished_at = utc_now()
    write_manifest(log.path, log.manifest)
    log = log.model_copy(update={"results": results})
    if store is not None:
        store.record_run(log)
    return log


def evaluate(task: Task, model: Model, config: RunConfig | None = None) -> RunLog:
    """Synchronous wrapper around `evaluate_async` (ctrl-C is not held up by a backend's worker thread)."""
    from .interruptible import run

    return run(evaluate_async(task, model, config))


def accuracy_line(results: dict[str, Any]) -> str:
    o = results.get("overall", {})
    acc = o.get("accuracy")
    if acc is None or (isinstance(acc, float) and math.isnan(acc)):
        return "accuracy: n/a (nothing scored)"
    return f"accuracy {acc:.3f} [{o.get('ci_low', 0):.3f}, {o.get('ci_high', 0):.3f}] n={o.get('n_scored')}"


__all__ = ["RunConfig", "accuracy_line", "default_run_dir", "evaluate", "evaluate_async", "finalize_run"]
