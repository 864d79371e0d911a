"""An Inspect eval log of a proctor run, written with `inspect_ai`'s own log API (`inspect view` opens it).

Per sample: the prompt as chat messages, the reference as target, the model's output (its reasoning apart),
and one score `proctor` whose value is proctor's score (1 correct, 0 wrong, partial credit between), whose
answer is the extracted answer and whose explanation says how it was read. Errored and unscored samples
carry no score (Inspect counts them as unscored, as proctor does); an error is the sample's `error`.
The results hold proctor's overall accuracy with its stderr and its confidence interval.

Needs the optional extra: `pip install 'proctor-eval[inspect]'`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, ProctorError
from ..metrics.accuracy import counted
from ..provenance import GenerationRecord
from ..redact import redact, redact_url
from ..runlog import Outcome, RunLog, Sample
from ..safepath import is_safe_component, safe_component, short_hash
from ._common import dataset_name, model_spec, overall_accuracy, stderr

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample, EvalSpec
    from inspect_ai.model import ChatMessage, ModelOutput, StopReason

SCORER = "proctor"
_STOP: dict[str, StopReason] = {"stop": "stop", "length": "max_tokens", "max_tokens": "max_tokens",
                                 "content_filter": "content_filter", "tool_calls": "tool_calls"}


def require_inspect() -> None:
    """Refuse clearly when inspect_ai is not installed (exit 2)."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise ProctorError("--to inspect needs inspect_ai: pip install 'proctor-eval[inspect]'") from None


def export(logs: Sequence[RunLog], out: Path) -> list[Path]:
    """One `.eval` file per run, named as Inspect names its logs (`<started>_<task>_<run id>.eval`)."""
    require_inspect()
    from inspect_ai.log import write_eval_log

    written = []
    for log in logs:
        m = log.manifest
        path = out / safe_component(f"{m.started_at.replace(':', '-')}_{dataset_name(log)}_{m.run_id}.eval")
        if path in written:
            raise InputError.at(log.path, f"the same run as another one given (run id {m.run_id}): give it once")
        write_eval_log(eval_log(log), str(path), format="eval")
        written.append(path)
    return written


def eval_log(log: RunLog) -> EvalLog:
    """The whole run as an Inspect `EvalLog`: spec, samples, results, stats."""
    from inspect_ai.log import EvalLog, EvalMetric, EvalResults, EvalScore, EvalStats
    from inspect_ai.model import ModelUsage

    m = log.manifest
    overall = overall_accuracy(log)
    samples = sorted(log.samples, key=lambda s: (s.item_id, s.epoch))
    metrics = {}
    if overall.accuracy is not None:
        extra = {"stderr": stderr(log.samples), "ci_low": overall.ci_low, "ci_high": overall.ci_high}
        metrics = {name: EvalMetric(name=name, value=value)
                   for name, value in {"accuracy": overall.accuracy, **extra}.items() if value is not None}
    n_scored = len(counted(log.samples))
    score = EvalScore(name=SCORER, scorer=m.scorer.scorer or m.mode, scored_samples=n_scored,
                      unscored_samples=len(log.samples) - n_scored, metrics=metrics,
                      reducer="mean" if m.epochs > 1 else None,
                      metadata={"ci_method": overall.ci_method} if overall.ci_method else None)
    inputs = sum(s.input_tokens or 0 for s in log.samples)
    outputs = sum(s.output_tokens or 0 for s in log.samples)
    usage = {_model(log): ModelUsage(input_tokens=inputs, output_tokens=outputs, total_tokens=inputs + outputs)}
    return EvalLog(
        status="success" if m.finished_at else "started",
        eval=_spec(log),
        results=EvalResults(total_samples=len(log.samples), completed_samples=len(log.samples), scores=[score]),
        stats=EvalStats(started_at=m.started_at, completed_at=m.finished_at or "", model_usage=usage),
        samples=[_sample(log, s) for s in samples],
    )


def _model(log: RunLog) -> str:
    """Inspect's `provider/model` form of proctor's `backend:model`."""
    return model_spec(log).replace(":", "/", 1)


def _spec(log: RunLog) -> EvalSpec:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalRevision, EvalSpec
    from inspect_ai.model import GenerateConfig

    m = log.manifest
    g = m.generation or GenerationRecord()
    config = GenerateConfig(temperature=g.temperature, top_p=g.top_p, max_tokens=g.max_tokens, seed=g.seed,
                            stop_seqs=g.stop or None)
    ds = m.dataset
    base_url = m.model.base_url
    return EvalSpec(
        run_id=m.run_id, eval_id=m.run_id, task_id=m.run_id, created=m.started_at, task=dataset_name(log),
        dataset=EvalDataset(name=dataset_name(log), location=ds.data_file or ds.source or ds.path,
                            samples=ds.n_items, sample_ids=sorted({member_id(s.item_id) for s in log.samples})),
        model=_model(log), model_base_url=redact_url(base_url) if base_url else None, model_generate_config=config,
        config=EvalConfig(epochs=m.epochs), packages={"proctor": m.proctor_version, **m.provenance.packages},
        revision=EvalRevision(type="git", origin="", commit=m.git_sha) if m.git_sha else None,
        metadata=_settings(log),
    )


def _settings(log: RunLog) -> dict[str, Any]:
    """What produced the run, as proctor's manifest records it (no secret is ever in the manifest)."""
    m = log.manifest
    keep = ("run_id", "mode", "scorer", "prompt_kind", "prompt_template_hash", "extractor_version", "answer_rule",
            "extract", "truncated_as", "no_answer", "choice_order_seed", "generation", "epochs", "judge", "dataset",
            "command", "provenance")
    dumped = m.model_dump(mode="json")
    return {"proctor": redact({k: dumped[k] for k in keep if dumped.get(k) is not None})}  # a hand-edited one too


def _sample(log: RunLog, s: Sample) -> EvalSample:
    from inspect_ai.log import EvalError as InspectError
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelUsage
    from inspect_ai.scorer import Score

    messages = _messages(s.prompt)
    output = _output(log, s)
    scores = None
    if s.scored and s.score is not None:
        scores = {SCORER: Score(value=s.score, answer=s.extracted,
                                explanation=f"{s.outcome.value} (read by {s.extraction_rule or 'no rule'})",
                                metadata={"outcome": s.outcome.value})}
    usage = None
    if s.input_tokens is not None or s.output_tokens is not None:
        i, o = s.input_tokens or 0, s.output_tokens or 0
        usage = {_model(log): ModelUsage(input_tokens=i, output_tokens=o, total_tokens=i + o)}
    sample_id = member_id(s.item_id)
    return EvalSample(
        id=sample_id, epoch=s.epoch + 1, input=messages, target=_target(s.reference),
        messages=[*messages, output.message] if output.choices else messages, output=output, scores=scores,
        metadata={k: v for k, v in {"category": s.category, "subcategory": s.subcategory, "difficulty": s.difficulty,
                                    "outcome": s.outcome.value, "latency_s": s.latency_s,
                                    "proctor_item_id": s.item_id if sample_id != s.item_id else None}.items()
                  if v is not None},
        model_usage=usage or {}, total_time=s.latency_s,
        error=InspectError(message=s.error or "error", traceback="", traceback_ansi="") if s.outcome is Outcome.ERROR else None,
    )


def member_id(item_id: str) -> str:
    """The sample id Inspect names its zip member after (`samples/<id>_epoch_<n>.json`): the item id when it is
    one harmless name, else a sanitised one with a hash of the original (kept in the sample's metadata)."""
    if is_safe_component(item_id) and item_id.isprintable():
        return item_id
    return f"{safe_component(item_id, 'item')}-{short_hash(item_id)}"


def _messages(prompt: list[dict[str, str]] | str) -> list[ChatMessage]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    if isinstance(prompt, str):
        return [ChatMessageUser(content=prompt)]
    kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
    return [kinds.get(msg.get("role", "user"), ChatMessageUser)(content=msg.get("content", "")) for msg in prompt]


def _output(log: RunLog, s: Sample) -> ModelOutput:
    from inspect_ai.model import ContentReasoning, ContentText, ModelOutput

    if s.outcome is Outcome.ERROR:
        return ModelOutput(model=_model(log), error=s.error)
    text = s.raw_output or ""
    content: list[Any] = [ContentText(text=text)]
    if s.reasoning:
        content.insert(0, ContentReasoning(reasoning=s.reasoning))
    return ModelOutput.from_content(_model(log), content if s.reasoning else text,
                                    stop_reason=_STOP.get(s.finish_reason or "stop", "unknown"))


def _target(reference: Any) -> str | list[str]:
    if isinstance(reference, list):
        return [str(r) for r in reference]
    return "" if reference is None else str(reference)
