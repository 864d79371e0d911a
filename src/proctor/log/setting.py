"""What distinguishes two runs of one model on one dataset: the run's *setting*, and a short label for it.

A setting is everything a run's spec chose that changes what is asked or how answers count, but is neither the
dataset nor the model: the mode (generate vs logprob), the prompt kind, the shots, the format, the few-shot pool
(`--fewshot-from`), a benchmark's prompt options (AIME's instruction, GPQA's examples file), the answer rule,
the robust reader, the no-answer and truncation policies, a code benchmark's execution limits (`--exec-limits`,
shown even at its default: runs before it ran under proctor's) and MBPP's `--test-imports`, the generation settings (temperature, top-p, max tokens,
stop, seed, reasoning…), the epochs, the log-probability normalisation of suites, the judge (its model, options and
settings), the sandbox a code benchmark's programs ran in when not bubblewrap. `proctor runs`, `history`,
`leaderboard`, `compare` and the report show `setting_label`; runs are
comparable only when their `setting_key`s are equal (unless asked to mix them: `proctor.analysis.comparable`).
docs/runspec.md says, for every RunSpec field, whether it is in the setting.

A run's setting is read from its manifest's `spec` (the one copy of its settings); a manifest without one (written
before the RunSpec, or imported from another harness) gives the setting its recorded scorer describes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..core.spec import DEFAULT_SANDBOX, RunSpec
from .runlog import Manifest

# identity fields that are versions or bookkeeping, not settings a user chose
_NOT_SETTINGS = frozenset({"scorer", "extractor", "judge_version", "judge_agreement", "prompt_kind", "generation",
                           "epochs", "prompt_hash"})
_SUITE_DEFAULTS = {"temperature": 1.0, "join": "newline"}
_DEFAULTS = {"extract": "reference", "no_answer": "wrong"}  # defaults a label need not repeat (runs before had none)
SUITE_PROMPT = "probsem-suite"
_SPEC_DEFAULTS = {"extract": "reference", "no_answer": "wrong", "truncated_as": "wrong", "softmax_temperature": 1.0,
                  "join": "newline", "sandbox": DEFAULT_SANDBOX}


def run_setting(manifest: Manifest) -> dict[str, Any]:
    """The setting of a run, from its manifest (one read back from manifest.json or the history, any version)."""
    if manifest.spec is not None:
        return spec_setting(manifest.spec)
    return _recorded_setting(manifest)


def _present(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in (None, [], (), {})}


def spec_setting(spec: RunSpec) -> dict[str, Any]:
    """The setting of a (resolved) RunSpec: every field docs/runspec.md marks as in the setting, defaults left out
    (so that runs made before a setting existed keep their setting)."""
    scorer, data = spec.scorer, spec.dataset
    suite = scorer.norm is not None
    mode = "logprob" if suite else scorer.mode or "generate"
    setting: dict[str, Any] = {"mode": mode, "prompt": SUITE_PROMPT if suite else scorer.prompt_kind,
                               "epochs": spec.epochs}
    if mode == "generate":
        setting["generation"] = _present(spec.generation.as_dict())
    chosen = {"shots": scorer.shots, "format": scorer.format, "fewshot_from": data.fewshot_from,
              "prompt_options": dict(sorted(data.prompt_options.items())), "answer_rule": scorer.answer_rule,
              "extract": scorer.extract, "no_answer": scorer.no_answer, "truncated_as": scorer.truncated_as,
              "norm": scorer.norm, "softmax_temperature": scorer.softmax_temperature, "join": scorer.join,
              "second_ask": scorer.second_ask,

              "exec_limits": scorer.exec_limits, "test_imports": scorer.test_imports, "sandbox": spec.sandbox}
    setting.update({k: v for k, v in _present(chosen).items() if _SPEC_DEFAULTS.get(k, object()) != v})
    judge = spec.judge
    if judge is not None:  # its model, the options that change its grades, its own sampling when not the default
        setting["judge"] = judge.model
        if judge.settings is not None:
            setting["judge_settings"] = _present(judge.settings.as_dict())
        if options := judge.identity()["options"]:
            setting["judge_options"] = options
    if spec.agent is not None:  # the limits a trajectory runs under (docs/agents.md)
        setting["agent"] = spec.agent.model_dump(mode="json")
    return setting


def _recorded_setting(manifest: Manifest) -> dict[str, Any]:
    """The setting of a run whose manifest has no spec (before the RunSpec, or imported): its recorded scorer."""
    identity = manifest.scorer.model_dump(exclude_none=True)
    if identity.get("scorer") in (None, "generation", "judge"):  # a reader's settings: the spec's (manifest v5)
        identity |= {k: v for k in ("extract", "answer_rule", "no_answer") if (v := getattr(manifest, k)) is not None}
    mode = manifest.mode or "generate"
    setting: dict[str, Any] = {
        "mode": mode,
        "prompt": manifest.prompt_kind or identity.get("prompt_kind"),
        "epochs": manifest.epochs or 1,
    }
    generation = manifest.generation.as_dict() if manifest.generation is not None else {}
    if mode == "generate" and generation:
        setting["generation"] = {k: v for k, v in generation.items() if v not in (None, [], (), {})}
    scorer = identity.get("scorer")
    extra = {k: v for k, v in identity.items() if k not in _NOT_SETTINGS and _DEFAULTS.get(k, object()) != v}
    if scorer == "suite":  # its temperature divides scores before a softmax; it samples nothing
        extra = {("softmax_temperature" if k == "temperature" else k): v for k, v in extra.items()
                 if _SUITE_DEFAULTS.get(k, object()) != v}
    setting.update(extra)
    return setting


def setting_key(setting: Mapping[str, Any]) -> str:
    """A short stable hash of a setting: equal keys, comparable runs."""
    return hashlib.sha256(json.dumps(setting, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _number(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


LABEL_VALUE_MAX = 40  # a longer value (a scripted judge's whole reply) is cut with "…"


def _one_line(x: Any) -> str:
    """A value on one line: whitespace (newlines included) folded, a long one cut."""
    text = " ".join(_number(x).split())
    return text if len(text) <= LABEL_VALUE_MAX else text[: LABEL_VALUE_MAX - 1] + "…"


def setting_label(setting: Mapping[str, Any]) -> str:
    """`generate · zero_shot · temp 0 · max 1024`, `logprob · choices`, `logprob · probsem-suite · norm token`."""
    return " · ".join(part for parts in label_parts(setting).values() for part in parts)


def label_parts(setting: Mapping[str, Any]) -> dict[str, list[str]]:
    """The label's parts by what they say: `mode`, `prompt` (its kind, shots, format, few-shot pool, options),
    `sampling` (the generation settings and epochs), `scoring` (answer rule, policies, suites' norms), `judge`."""
    mode = str(setting.get("mode") or "?")
    prompt = [str(setting.get("prompt") or ("choices" if mode == "logprob" else "default prompt")), *_asked(setting)]
    gen = setting.get("generation") or {}
    names = {"temperature": "temp", "top_p": "top-p", "max_tokens": "max-tokens", "seed": "seed"}
    sampling = [f"{short} {_number(gen[key])}" for key, short in names.items() if key in gen]
    sampling += [f"{k.replace('_', '-')} {_one_line(_flat(v))}" for k, v in gen.items()  # reasoning, top-k, system…
                 if k not in names and k != "stop"]
    if gen.get("stop"):
        sampling.append("stop " + "|".join(json.dumps(s)[1:-1] for s in gen["stop"]))
    if int(setting.get("epochs") or 1) > 1:
        sampling.append(f"{setting['epochs']} epochs")
    shown = {"mode", "prompt", "generation", "epochs", *_ASKED}
    short = {"softmax_temperature": "softmax temp", "truncated_as": "truncated as"}
    rest = {k: f"{short.get(k, k.replace('_', ' '))} {_one_line(_flat(v))}" for k, v in setting.items()
            if k not in shown and v is not None}
    return {"mode": [mode], "prompt": prompt, "sampling": sampling,
            "scoring": [v for k, v in rest.items() if not k.startswith("judge")],
            "judge": [v for k, v in rest.items() if k.startswith("judge")]}


_ASKED = ("shots", "format", "fewshot_from", "prompt_options")  # how the prompt is built: shown beside its kind


def _asked(setting: Mapping[str, Any]) -> list[str]:
    """`5 shots`, `chat format`, `shots from dev.jsonl`, `instruction …`: what changes the prompt besides its kind."""
    parts = []
    if setting.get("shots") is not None:
        parts.append(f"{setting['shots']} shot{'' if setting['shots'] == 1 else 's'}")
    if setting.get("format"):
        parts.append(f"{setting['format']} format")
    if setting.get("fewshot_from"):
        parts.append(f"shots from {_one_line(str(setting['fewshot_from']).replace(chr(92), '/').rsplit('/', 1)[-1])}")
    parts += [f"{k.replace('_', ' ')} {_one_line(v)}" for k, v in (setting.get("prompt_options") or {}).items()]
    return parts


def _flat(value: Any) -> Any:
    """A mapping as `k=v` pairs (judge options, judge settings), anything else as it is."""
    if isinstance(value, Mapping):
        return " ".join(f"{k}={_number(v)}" for k, v in value.items())
    return value


__all__ = ["label_parts", "run_setting", "setting_key", "setting_label", "spec_setting"]
