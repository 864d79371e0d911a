"""What distinguishes two runs of one model on one dataset: the run's *setting*, and a short label for it.

A setting is everything in a run's identity that changes its scores but is neither the dataset nor
the model: the mode (generate vs logprob), the prompt kind, the epochs, the generation settings
(temperature, top-p, max tokens, stop, seed), the log-probability normalisation of suites, the judge.
`proctor runs`, `history`, `leaderboard` and the report show `setting_label`; the leaderboard ranks
together only runs whose `setting_key` is equal (unless asked to mix them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .runlog import Manifest

# identity fields that are versions or bookkeeping, not settings a user chose
_NOT_SETTINGS = frozenset({"scorer", "extractor", "judge_version", "judge_agreement", "prompt_kind", "generation",
                           "epochs", "prompt_hash"})
_SUITE_DEFAULTS = {"temperature": 1.0, "join": "newline"}
_DEFAULTS = {"extract": "reference", "no_answer": "wrong"}  # defaults a label need not repeat (runs before had none)


def run_setting(manifest: Manifest) -> dict[str, Any]:
    """The setting of a run, from its manifest (one read back from manifest.json or the history, any version)."""
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
    mode = str(setting.get("mode") or "?")
    parts = [mode, str(setting.get("prompt") or ("choices" if mode == "logprob" else "default prompt"))]
    gen = setting.get("generation") or {}
    names = {"temperature": "temp", "top_p": "top-p", "max_tokens": "max-tokens", "seed": "seed"}
    parts += [f"{short} {_number(gen[key])}" for key, short in names.items() if key in gen]
    parts += [f"{k.replace('_', '-')} {_number(v)}" for k, v in gen.items()  # reasoning, top-k, system…
              if k not in names and k != "stop"]
    if gen.get("stop"):
        parts.append("stop " + "|".join(json.dumps(s)[1:-1] for s in gen["stop"]))
    if int(setting.get("epochs") or 1) > 1:
        parts.append(f"{setting['epochs']} epochs")
    shown = {"mode", "prompt", "generation", "epochs"}
    short = {"softmax_temperature": "softmax temp"}
    parts += [f"{short.get(k, k.replace('_', ' '))} {_one_line(v)}" for k, v in setting.items()
              if k not in shown and v is not None]
    return " · ".join(parts)


__all__ = ["run_setting", "setting_key", "setting_label"]
