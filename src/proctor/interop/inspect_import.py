"""Inspect eval logs (`.eval` or `.json`), read with `inspect_ai.log.read_eval_log` (the `inspect` extra).

Each log is one run: every sample of every epoch (Inspect counts epochs from 1, proctor from 0). The score is
one scorer's value (`--metric SCORER`; default the task's first scorer): Inspect's `C`/`I`/`P`/`N` are 1, 0,
0.5 and no answer; a number or a boolean must lie in [0, 1]. A sample Inspect could not finish (its `error`)
or did not score is an error record, never a wrong answer.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.model import GenerationSpec
from ..log.provenance import BackendInfo, DatasetInfo, ImportOrigin
from ..log.runlog import Outcome, RunSettings, Sample
from ..util.errors import InputError, ProctorError
from ..util.limits import max_member_bytes
from .imported import (
    ImportedRun,
    ImportOptions,
    check_unique_ids,
    file_digest,
    import_run_id,
    iso_time,
    item_id_from,
    item_template,
    new_manifest,
    outcome_of,
    unit_score,
)

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

HARNESS = "inspect"
DEFAULT_ITEM_ID = "{id}"
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5}
_NO_ANSWER = "N"
_TEXT_BOOLS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_GENERATION = {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens", "seed": "seed",
               "stop_seqs": "stop"}


def looks_like(data: Any) -> bool:
    """An Inspect log written as JSON: `eval` and `version` at the top."""
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "version" in data


def read(path: Path, opts: ImportOptions) -> list[ImportedRun]:
    """The one run of an Inspect log."""
    log = _read_log(path)
    if not log.samples:
        raise InputError.at(path, "the Inspect log holds no samples (written with --no-log-samples?): nothing to pair")
    scorers = list(dict.fromkeys(name for s in log.samples for name in (s.scores or {})))
    scorer = opts.metric or _first_scorer(log, scorers)
    if scorer is None:
        raise InputError.at(path, "no sample in the Inspect log was scored: nothing to import")
    if scorer not in scorers:
        raise InputError.at(path, f"no sample was scored by {scorer!r} (scorers here: {', '.join(scorers)}); "
                                  "choose one with --metric")
    template = item_template(opts.item_id, DEFAULT_ITEM_ID)
    dataset_name = opts.dataset or log.eval.task
    samples = [_sample(s, scorer, template, dataset_name, path) for s in log.samples]
    check_unique_ids(samples, template, path)
    spec = opts.name or proctor_spec(log.eval.model)
    digest = file_digest(path)
    epochs = (log.eval.config.epochs if log.eval.config else None) or max(s.epoch for s in samples) + 1
    manifest = new_manifest(
        run_id=import_run_id(HARNESS, [digest], log.eval.task, scorer, template, spec, dataset_name),
        started_at=iso_time(log.stats.started_at) or iso_time(log.eval.created),
        command=opts.command, settings=RunSettings(mode="generate", epochs=epochs, generation=_generation(log)),
        imported_from=ImportOrigin(harness=HARNESS, version=(log.eval.packages or {}).get("inspect_ai"),
                                   task=log.eval.task, metric=scorer, item_id=template, status=log.status,
                                   files={str(path): digest}),
        dataset=DatasetInfo.of({"name": dataset_name, "source": f"inspect task {log.eval.task}",
                                "location": log.eval.dataset.location, "n_items": len({s.item_id for s in samples})}),
        model=BackendInfo.of({"spec": spec, "name": spec, "harness": HARNESS, "inspect_model": log.eval.model,
                              "base_url": log.eval.model_base_url}),
    )
    return [ImportedRun(source=path, manifest=manifest, samples=samples)]


def _read_log(path: Path) -> EvalLog:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ProctorError(f"{path}: reading an Inspect log needs inspect-ai: pip install 'proctor-eval[inspect]'") \
            from None
    try:
        _check_members(path)
        return read_eval_log(str(path))
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file fails inside Inspect's reader in many ways (zip, JSON, validation)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError.at(path, f"not a readable Inspect log: {first}") from None


def proctor_spec(inspect_model: str) -> str:
    """Inspect's `provider/model` as proctor spells a model, `backend:model` (`openai/Qwen/Qwen3-8B` →
    `openai:Qwen/Qwen3-8B`): the same model as proctor's own runs and exports name it."""
    provider, slash, model = inspect_model.partition("/")
    return f"{provider}:{model}" if slash and provider and model else inspect_model


def _check_members(path: Path) -> None:
    """Each member of an `.eval` zip inflates to at most `max_member_bytes()`: a file of 1 MB may hold 1 GiB,
    which inspect_ai would read whole. Checked in a stream (1 MiB at a time), never past the size a member's
    header declares; a member that does not match its header fails its CRC check (an unreadable log)."""
    if not zipfile.is_zipfile(path):
        return
    cap = max_member_bytes()
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.file_size > cap:
                raise InputError.at(path, f"member {info.filename!r} inflates to {info.file_size:,} bytes, over the "
                                          f"{cap:,}-byte limit (raise PROCTOR_MAX_MEMBER_BYTES to read it)")
            with zf.open(info) as member:
                while member.read(1 << 20):
                    pass


def _first_scorer(log: EvalLog, carried: list[str]) -> str | None:
    """The task's first scorer (Inspect lists them in order), else the first one any sample carries."""
    declared = [s.name for s in log.eval.scorers or []]
    return next((n for n in declared if n in carried), carried[0] if carried else None)


def _generation(log: EvalLog) -> GenerationSpec | None:
    """The generation settings Inspect recorded, under proctor's names (temperature, top_p, max_tokens…); None
    when it recorded none."""
    config = log.eval.model_generate_config
    found = {ours: getattr(config, theirs) for theirs, ours in _GENERATION.items()
             if getattr(config, theirs, None) is not None}
    return GenerationSpec.recorded(found) if found else None


def score_value(value: Any) -> tuple[float | None, bool]:
    """(score in [0, 1] or None when unreadable, whether it is Inspect's "no answer")."""
    if isinstance(value, str):
        text = value.strip()
        if text == _NO_ANSWER:
            return 0.0, True
        if text in _LETTERS:
            return _LETTERS[text], False
        if text.lower() in _TEXT_BOOLS:
            return _TEXT_BOOLS[text.lower()], False
        try:
            return unit_score(float(text)), False
        except ValueError:
            return None, False
    return unit_score(value), False


def _sample(s: EvalSample, scorer: str, template: str, dataset: str, where: Path) -> Sample:
    epoch = s.epoch - 1
    original = (s.metadata or {}).get("proctor_item_id")  # an id proctor's exporter had to sanitise
    fields = {**(s.metadata or {}), "id": original if isinstance(original, str) else s.id, "epoch": epoch}
    item_id = item_id_from(template, fields, where)
    category = (s.metadata or {}).get("category")
    usage = list((s.model_usage or {}).values())
    common: dict[str, Any] = {
        "sample_id": f"{item_id}#{epoch}", "item_id": item_id, "epoch": epoch, "dataset": dataset,
        "category": category if isinstance(category, str) else None, "prompt": _prompt(s),
        "reference": s.target if isinstance(s.target, str) else list(s.target),
        "raw_output": s.output.completion if s.output and s.output.choices else None,
        "finish_reason": s.output.stop_reason if s.output and s.output.choices else None,
        "input_tokens": sum(u.input_tokens for u in usage) if usage else None,
        "output_tokens": sum(u.output_tokens for u in usage) if usage else None,
        "latency_s": s.total_time,
    }
    score = (s.scores or {}).get(scorer)
    if s.error is not None or score is None:
        why = s.error.message.strip().splitlines()[0] if s.error is not None and s.error.message.strip() else \
            f"not scored by {scorer!r} in the Inspect log"
        return Sample(**common, outcome=Outcome.ERROR, error=why)
    value, no_answer = score_value(score.value)
    if value is None:
        raise InputError.at(where, f"sample {s.id!r} (epoch {s.epoch}): scorer {scorer!r} gave {score.value!r}, "
                                   "not a score in [0, 1] (C, I, P, N, a number or a boolean); choose another with "
                                   "--metric")
    outcome = Outcome.NO_ANSWER if no_answer else outcome_of(value)
    return Sample(**common, extracted=score.answer, score=value, outcome=outcome)


def _prompt(s: EvalSample) -> list[dict[str, str]] | str:
    """The input as text, or as chat messages (role and text) when Inspect kept a conversation."""
    if isinstance(s.input, str):
        return s.input
    return [{"role": m.role, "content": m.text} for m in s.input]
