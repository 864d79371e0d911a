"""Model options shared by every command that builds a model from a spec, from the backend registry.

A command-line option set by the user (not None, not a False flag) must apply to at least one of the
models the command builds (the model, or its judge); otherwise it is an error naming the option.
"""

from __future__ import annotations

from typing import Any

from ..errors import ProctorError

# command-line option name -> backend option name
_FLAG_TO_FIELD = {"base_urls": "base_url"}


def _fields(spec: str) -> set[str]:
    from ..models.registry import backend_for

    backend, _ = backend_for(spec)
    return set(backend.options.model_fields)


def _given(options: dict[str, Any]) -> dict[str, Any]:
    """The options that were set, under their backend names (several base URLs: a list)."""
    out: dict[str, Any] = {}
    for flag, value in options.items():
        if value is None or value is False or value == []:
            continue
        if flag == "base_urls":
            value = value if len(value) > 1 else value[0]
        out[_FLAG_TO_FIELD.get(flag, flag)] = value
    return out


def model_options(spec: str, **options: Any) -> dict[str, Any]:
    """Keyword arguments for `get_model(spec, **kw)`: the given options that the spec's backend declares."""
    fields = _fields(spec)
    return {k: v for k, v in _given(options).items() if k in fields}


def check_applicable(specs: list[str | None], **options: Any) -> None:
    """Refuse an option set on the command line that none of `specs`' backends takes."""
    fields = set().union(*(_fields(s) for s in specs if s))
    for name in _given(options):
        if name not in fields:
            models = ", ".join(s for s in specs if s)
            raise ProctorError(f"--{name.replace('_', '-')} does not apply to {models}")
