"""Every prompt setting is sent or refused: what a log-likelihood run can honour of a RunSpec's scorer.

A generation run sends `messages(item, kind)`, which honours the prompt kind, the shots and the format (a builder
that cannot take shots or a format refuses them when its task loads). A log-likelihood run sends the contexts its
prompt builder makes, and a builder says which prompt kinds those contexts can carry (`logprob_kinds`, and the one
they were built for, `logprob_kind`): a spec benchmark every kind it declares (its template and its shots), item
data zero- and five-shot, a built-in benchmark none (one fixed context). Anything else asked of a log-likelihood
run — another prompt kind, the chat format (contexts are plain text), a judge (nothing is generated to grade),
sampling settings (nothing is sampled) — is
refused here, before the run, with one line naming the flag; it is never recorded while another prompt is sent.
"""

from __future__ import annotations

from ..core.options import GENERATION_KEYWORDS
from ..core.spec import GenerationSpec, RunSpec
from ..data.tasks import Task
from ..util.errors import InputError

GENERATE_HINT = "(it applies to --mode generate)"
DEFAULT_GENERATION = GenerationSpec()
_FLAG_NAMES = {field: name for name, field in GENERATION_KEYWORDS.items()}  # GenerationSpec field → its option


def scored_by_loglikelihood(spec: RunSpec, task: Task) -> bool:
    """Whether the run sends log-likelihood requests (its mode, or a task that brings its own scorer)."""
    return spec.scorer.mode == "logprob" or task.scorer is not None


def check_honoured(spec: RunSpec, task: Task) -> None:
    """Refuse a setting `task`'s log-likelihood requests would not carry (InputError naming the field)."""
    if not scored_by_loglikelihood(spec, task):
        return
    scorer = spec.scorer
    if scorer.prompt_kind is not None:
        _check_kind(scorer.prompt_kind, task)
    if scorer.format == "chat":
        raise InputError.at("format", f"{task.name}'s log-likelihood contexts are plain text, never sent through a "
                            f"chat template; chat {GENERATE_HINT}")
    if spec.judge is not None:
        raise InputError.at("judge", f"a judge grades generated answers; a log-likelihood run on {task.name} "
                            f"generates none {GENERATE_HINT}")
    given = [name for name in GenerationSpec.model_fields if getattr(spec.generation, name) != getattr(
        DEFAULT_GENERATION, name)]
    if given:
        raise InputError.at(_FLAG_NAMES.get(given[0], given[0]), f"a log-likelihood run on {task.name} samples "
                            f"nothing, so generation settings are not sent {GENERATE_HINT}")


def _check_kind(kind: str, task: Task) -> None:
    honoured: tuple[str, ...] = tuple(getattr(task.prompts, "logprob_kinds", ()))
    if not honoured:
        raise InputError.at("prompt", f"{task.name} scores log-likelihood after one fixed context: no prompt kind "
                            f"is sent, so {kind!r} cannot be {GENERATE_HINT}")
    if kind not in honoured:
        raise InputError.at("prompt", f"{kind!r} is not a log-likelihood prompt of {task.name} (it offers "
                            f"{', '.join(honoured)}) {GENERATE_HINT}")
    built = getattr(task.prompts, "logprob_kind", None)
    if built != kind:  # a Task object built for another kind (load it with the kind: proctor.run.resolve)
        raise InputError.at("prompt", f"{task.name}'s log-likelihood contexts were built for {built!r}, not {kind!r}")


__all__ = ["check_honoured", "scored_by_loglikelihood"]
