"""An Inspect eval log of a proctor run, written with `inspect_ai`'s own log API (`inspect view` opens it).

Per sample: the prompt as chat messages, the reference as target, the model's output (its reasoning apart),
and one score `proctor` whose value is proctor's score (1 correct, 0 wrong, partial credit between), whose
answer is the extracted answer and whose explanation says how it was read. Errored and unscored samples
carry no score (Inspect counts them as unscored, as proctor does); an error is the sample's `error`.
The results hold proctor's overall accuracy with its stderr and its confidence interval. A sample with a
trajectory (an agent run) carries its whole conversation as `messages` (tool calls, tool messages) and its
transcript as `events` (model, tool and limit events): `inspect_trajectory` says how.

Needs the optional extra: `pip install 'proctor-eval[inspect]'`.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..core.model import GenerationSpec
from ..core.results import MetricBlock
from ..log.runlog import Outcome, RunLog, Sample
from ..util.errors import InputError, ProctorError
from ..util.redact import redact, redact_url
from ..util.safepath import is_safe_component, safe_component, short_hash
from ..util.spillzip import spilled_zip
from .export_common import RunTally, dataset_name, model_spec, overall_accuracy, stderr_of, tally
from .inspect_trajectory import context, transcript

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample, EvalSpec
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, StopReason

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
    written = []
    for log in logs:
        m = log.manifest
        path = out / safe_component(f"{m.started_at.replace(':', '-')}_{dataset_name(log)}_{m.run_id}.eval")
        if path in written:
            raise InputError.at(log.path, f"the same run as another one given (run id {m.run_id}): give it once")
        write_eval(log, path)
        written.append(path)
    return written


def write_eval(log: RunLog, path: Path) -> None:
    """The run as an `.eval` zip, one sample at a time: the members `inspect_ai.log.write_eval_log` writes
    (header.json, summaries.json, samples/<id>_epoch_<n>.json), each an inspect_ai model serialised by pydantic.

    Not `write_eval_log` itself: it holds the whole log and its recorder re-filters every buffered sample as
    each one is added (quadratic: 12k samples took 64 s, 100k more than 10 minutes). Here memory holds one
    sample; the sample summaries and the zip's member records wait in temporary files. Samples are not condensed
    (`condense_sample` moves repeated content to attachments, for events and images proctor's samples do not
    have; it was 40% of the time): the messages repeat the input, which the compression absorbs."""
    header = eval_log(log, tally(log))
    with spilled_zip(path, compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf, \
            tempfile.TemporaryFile() as summaries:
        summaries.write(b"[")
        for i, s in enumerate(log.iter_samples(by_item=True)):
            sample = _sample(log, s)
            zf.writestr(_member(sample.id, sample.epoch), _json(sample))
            summaries.write((b"," if i else b"") + _json(sample.summary()))
        summaries.write(b"]")
        summaries.seek(0)
        with zf.open("summaries.json", "w", force_zip64=True) as member:
            shutil.copyfileobj(summaries, member)
        zf.writestr("header.json", _json(header))


def _member(sample_id: str | int, epoch: int) -> str:
    """The zip member of one sample, as inspect_ai's reader looks it up."""
    return f"samples/{sample_id}_epoch_{epoch}.json"


def _json(model: BaseModel) -> bytes:
    """An inspect_ai record as its writer serialises it (JSON, unset fields left out)."""
    return model.model_dump_json(exclude_none=True).encode()


def eval_log(log: RunLog, t: RunTally | None = None) -> EvalLog:
    """The run as an Inspect `EvalLog` without its samples (the header): spec, results, stats. `t`: the run's
    samples tallied (default: tallied here)."""
    from inspect_ai.log import EvalLog, EvalMetric, EvalResults, EvalScore, EvalStats
    from inspect_ai.model import ModelUsage

    m = log.manifest
    t = t or tally(log)
    overall = overall_accuracy(log, t)
    metrics = {}
    if overall.accuracy is not None:
        extra = {"stderr": stderr_of(t.scores), "ci_low": overall.ci_low, "ci_high": overall.ci_high}
        metrics = {name: EvalMetric(name=name, value=value)
                   for name, value in {"accuracy": overall.accuracy, **extra}.items() if value is not None}
        metrics |= _truncation_bounds(overall, m.truncated_as)
    score = EvalScore(name=SCORER, scorer=m.scorer.scorer or m.mode, scored_samples=t.n_scored,
                      unscored_samples=overall.n - t.n_scored, metrics=metrics,
                      reducer="mean" if m.epochs > 1 else None,
                      metadata={"ci_method": overall.ci_method} if overall.ci_method else None)
    usage = {_model(log): ModelUsage(input_tokens=overall.input_tokens, output_tokens=overall.output_tokens,
                                     total_tokens=overall.input_tokens + overall.output_tokens)}
    return EvalLog(
        status="success" if m.finished_at else "started",
        eval=_spec(log, sorted({member_id(i) for i in t.item_ids})),
        results=EvalResults(total_samples=overall.n, completed_samples=overall.n - overall.n_errors,  # without error
                            scores=[score]),
        stats=EvalStats(started_at=m.started_at, completed_at=m.finished_at or "", model_usage=usage),
    )


def _truncation_bounds(overall: MetricBlock, truncated_as: str) -> dict[str, Any]:
    """The accuracy's bounds over the truncated samples (every one wrong … every one right) as two metrics of the
    score, beside the policy's `accuracy`; none when nothing was truncated."""
    from inspect_ai.log import EvalMetric

    if overall.truncated_low is None or overall.truncated_high is None:
        return {}
    meta = {"n_truncated": overall.n_truncated, "truncated_as": truncated_as}
    return {"accuracy_if_truncated_wrong": EvalMetric(name="accuracy_if_truncated_wrong", value=overall.truncated_low,
                                                      metadata=meta),
            "accuracy_if_truncated_right": EvalMetric(name="accuracy_if_truncated_right",
                                                      value=overall.truncated_high, metadata=meta)}


def _model(log: RunLog) -> str:
    """Inspect's `provider/model` form of proctor's `backend:model`."""
    return model_spec(log).replace(":", "/", 1)


def _config(log: RunLog) -> GenerateConfig:
    """The run's generation settings as Inspect's GenerateConfig."""
    from inspect_ai.model import GenerateConfig

    g = log.manifest.generation or GenerationSpec(temperature=None)  # none recorded (a log-likelihood run)
    return GenerateConfig(temperature=g.temperature, top_p=g.top_p, max_tokens=g.max_tokens, seed=g.seed,
                          stop_seqs=list(g.stop) or None)


def _spec(log: RunLog, sample_ids: list[str]) -> EvalSpec:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalRevision, EvalSpec

    m = log.manifest
    config = _config(log)
    ds = m.dataset
    base_url = m.model.base_url
    return EvalSpec(
        run_id=m.run_id, eval_id=m.run_id, task_id=m.run_id, created=m.started_at, task=dataset_name(log),
        dataset=EvalDataset(name=dataset_name(log), location=ds.data_file or ds.source or ds.path,
                            samples=ds.n_items, sample_ids=sample_ids),
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
    conversation = [*messages, output.message] if output.choices else messages
    extra: dict[str, Any] = {}
    if s.trajectory is not None:
        ctx = context(_model(log), log.manifest.started_at, _config(log), s.trajectory.tools)
        tr = transcript(s.trajectory, messages, ctx)
        conversation = tr.messages
        extra = {"events": tr.events, "limit": tr.limit}
        if tr.events_data is not None:
            extra["events_data"] = tr.events_data
        if s.outcome is not Outcome.ERROR:
            output = tr.output
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
        messages=conversation, output=output, scores=scores,
        metadata={k: v for k, v in {"category": s.category, "subcategory": s.subcategory, "difficulty": s.difficulty,
                                    "outcome": s.outcome.value, "latency_s": s.latency_s,
                                    "proctor_item_id": s.item_id if sample_id != s.item_id else None}.items()
                  if v is not None},
        model_usage=usage or {}, total_time=s.trajectory.wall_s if s.trajectory is not None else s.latency_s,
        error=InspectError(message=s.error or "error", traceback="", traceback_ansi="") if s.outcome is Outcome.ERROR else None,
        **extra,
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
