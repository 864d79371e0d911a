"""One vocabulary for every command: shared option definitions, and model options from the backend registry.

An option means the same, and is spelled the same, wherever it appears (`--out`, `--store`, `--seed`,
`--json`…): commands take these definitions rather than declaring their own. The model options
(`--batch-size`, `--base-url`, `--concurrency`…) are not listed here at all: `with_model_options`
adds one per field of every backend's options model in `proctor.models.registry`, with the field's
description as its help, so a new backend option appears in the CLI without a second list.

A model option set on the command line must apply to at least one of the models the command builds
(the model, or its judge); otherwise it is an error naming the option.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer

from ..core.model import GenerationSpec
from ..models.registry import BACKENDS, backend_for
from ..scoring.reasoning import unsupported_settings
from ..util.errors import ProctorError
from .messages import deprecated

F = TypeVar("F", bound=Callable[..., Any])
MODEL_PANEL = "Model options (from the backend registry)"
MODEL_PANELS = {"hf": "Model options: hf (local weights)", "openai": "Model options: API servers (openai, anthropic)",
                "anthropic": "Model options: API servers (openai, anthropic)", "vllm": "Model options: vllm (managed server)"}
SWITCHES = "On/off switches (--X on, --no-X off)"  # a panel of their own: the rest read at 80 columns
OUTPUT = "Output, cache and history"
LONG_METAVAR = 16  # a list of values longer than this is named (e.g. DTYPE); the help lists the values

# ---------------------------------------------------------------- the shared vocabulary

ModelSpec = Annotated[str, typer.Option(
    "--model", "-m", metavar="SPEC", show_default=False,
    help="Model: hf:PATH-OR-HUB-ID, openai:MODEL, anthropic:MODEL, vllm:PATH-OR-HUB-ID or scripted:RULE.")]
ModelFilter = Annotated[str | None, typer.Option(
    "--model", "-m", metavar="SPEC", help="Only runs of this model spec, as `proctor runs` shows it (default: every model).")]
DatasetFilter = Annotated[str | None, typer.Option(
    "--dataset", "-d", metavar="NAME", help="Only runs on this dataset, as `proctor runs` shows it (default: every dataset).")]
Out = Annotated[Path | None, typer.Option(
    "--out", "-o", metavar="DIR", help="Run directory (default: RUNS_ROOT/<dataset>__<model>__<hash>).")]
RunsRoot = Annotated[Path, typer.Option(
    "--runs-root", metavar="DIR", help="Where run directories go when --out is not given.")]
Store = Annotated[Path | None, typer.Option(
    "--store", metavar="PATH",
    help="SQLite file of the request cache and run history (default: $PROCTOR_STORE, else the user data dir).")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the request cache.")]
NoHistory = Annotated[bool, typer.Option("--no-history", help="Do not record the run in the history.")]
ShowProgress = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", show_default=False,
    help="Progress bar on stderr (default: only when stderr is a terminal).")]
MaxErrorRate = Annotated[float, typer.Option(
    "--max-error-rate", metavar="SHARE", min=0.0, max=1.0,
    help="Exit 1 when more than this share of samples errored, or nothing was scored.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
DataFile = Annotated[Path | None, typer.Option(
    "--data-file", metavar="PATH", help="Read a built-in or spec benchmark from this file (the split evaluated) or folder, in its upstream schema (default: from the Hub).")]
ChoiceSeed = Annotated[int, typer.Option(
    "--seed", metavar="N", help="Seed of the choice order where a benchmark shuffles it (GPQA).")]
NBoot = Annotated[int, typer.Option("--n-boot", metavar="N", min=100, help="Bootstrap resamples.")]
BootSeed = Annotated[int, typer.Option("--boot-seed", metavar="N", help="Seed of the bootstrap resamples.")]


@dataclass(frozen=True)
class Resampling:
    """The bootstrap of a command's intervals: how many resamples, and their seed."""

    n_boot: NBoot = 2000
    boot_seed: BootSeed = 0

Limit = Annotated[int | None, typer.Option(
    "--limit", metavar="N", help="Evaluate the first N items only (default: all).")]
Cluster = Annotated[str | None, typer.Option(
    "--cluster", metavar="category|subcategory|metadata.KEY|none",
    help="Cluster accuracy intervals by this item attribute: items sharing a value share errors (default: the "
         "benchmark's own, e.g. MMLU-Pro's src; none: items alone). docs/statistics.md")]


DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Print the requests, prompt tokens, most output tokens and cost range; send and write nothing.")]


def panels(**where: str) -> Callable[[F], F]:
    """Show the named parameters of a command under these help panels (`limit="Which items"`): the shared
    option definitions keep no panel of their own, so that each command groups its help as it reads best."""

    def regroup(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        params = []
        for p in signature.parameters.values():
            if p.name in where:
                kind, info = typing.get_args(p.annotation)
                info = copy.copy(info)
                info.rich_help_panel = where.pop(p.name)
                p = p.replace(annotation=Annotated[kind, info])
            params.append(p)
        if where:
            raise TypeError(f"{func.__name__} has no parameter {', '.join(where)}")
        func.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        func.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
        return func

    return regroup


def old_spelling(name: str, metavar: str = "VALUE") -> Any:
    """A hidden option for an old spelling; the command warns (`deprecated`) and uses its value."""
    return typer.Option(name, metavar=metavar, hidden=True, show_default=False)


def prefer(new: Any, old: Any, old_name: str, new_name: str) -> Any:
    """The value of `new`, or of its old spelling when that was given (with a deprecation warning)."""
    if old is None:
        return new
    deprecated(old_name, new_name)
    return old


# ---------------------------------------------------------------- model options from the registry


@dataclass(frozen=True)
class ModelOption:
    """One backend option as a command-line option."""

    name: str  # the backends' field name, e.g. "base_url"
    flag: str  # e.g. "--base-url"
    cli_type: Any  # int, float, str, bool or list[str] (repeatable)
    metavar: str
    description: str
    backends: tuple[str, ...]  # the backends that take it

    @property
    def param(self) -> str:
        return f"model_opt_{self.name}"

    @property
    def annotation(self) -> Any:
        """`Annotated[type | None, typer.Option(...)]`, its help naming the backends that take it."""
        is_flag = self.cli_type is bool
        option = typer.Option(
            f"{self.flag}/--no-{self.flag[2:]}" if is_flag else self.flag, metavar=None if is_flag else self.metavar,
            help=f"{self.description} ({', '.join(self.backends)})", show_default=False,
            rich_help_panel=SWITCHES if is_flag else MODEL_PANELS.get(self.backends[0], MODEL_PANEL))
        return Annotated[self.cli_type | None, option]


def _cli_type(name: str, annotation: Any) -> tuple[Any, str]:
    """(CLI type, metavar) for a backend field's annotation: X | None → X; str | list[str] → list[str]."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    if any(typing.get_origin(a) is list for a in args):
        return list[str], "URL" if name.endswith("url") else "TEXT"
    base = args[0]
    if typing.get_origin(base) is Literal:
        values = "|".join(str(v) for v in typing.get_args(base))
        return str, values if len(values) <= LONG_METAVAR else name.upper()
    return base, {int: "N", float: "NUMBER", bool: ""}.get(base, "TEXT")


@functools.cache
def model_cli_options() -> tuple[ModelOption, ...]:
    """Every backend option the command line offers, in registry order, each once."""
    seen: dict[str, ModelOption] = {}
    for backend in BACKENDS.values():
        for name, info in backend.options.model_fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            if extra.get("cli") is False:
                continue
            if name in seen:
                seen[name] = dataclasses.replace(seen[name], backends=(*seen[name].backends, backend.prefix))
                continue
            cli_type, metavar = _cli_type(name, info.annotation)
            flag = "--" + str(extra.get("cli_name") or name.replace("_", "-"))
            seen[name] = ModelOption(name, flag, cli_type, metavar, info.description or "", (backend.prefix,))
    return tuple(seen.values())


@dataclass(frozen=True)
class ModelOptions:
    """The model options given on the command line (None: not given), under their backend names."""

    given: dict[str, Any]

    def set(self) -> dict[str, Any]:
        """The options that were set; a single --base-url as a string, several as a list."""
        out: dict[str, Any] = {}
        for name, value in self.given.items():
            if value is None or value == []:
                continue
            out[name] = value[0] if isinstance(value, list) and len(value) == 1 else value
        return out

    def for_spec(self, spec: str) -> dict[str, Any]:
        """Keyword arguments for `get_model(spec, **kw)`: the set options that the spec's backend takes."""
        fields = _fields(spec)
        return {k: v for k, v in self.set().items() if k in fields}

    def check_applicable(self, specs: list[str | None]) -> None:
        """Refuse an option set on the command line that none of `specs`' backends takes."""
        fields = set().union(*(_fields(s) for s in specs if s))
        flags = {o.name: o.flag for o in model_cli_options()}
        for name in self.set():
            if name not in fields:
                models = ", ".join(s for s in specs if s)
                raise ProctorError(f"{flags.get(name, name)} does not apply to {models}")


def _fields(spec: str) -> set[str]:
    backend, _ = backend_for(spec)
    return set(backend.options.model_fields)


def expand(func: F, target: str, added: list[inspect.Parameter], collect: Callable[[dict[str, object]], object],
           in_place: bool = False) -> F:
    """`func` as a command whose parameter `target` is replaced by the parameters `added`, after its own (`in_place`:
    where `target` stands): `collect` takes their values out of the keyword arguments and makes `target`'s value
    (the backends' options, the run options…)."""
    signature = inspect.signature(func, eval_str=True)
    own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]
    at = [p.name for p in own].index(target) if in_place else len(own)
    own = [p for p in own if p.name != target]

    @functools.wraps(func)
    def command(**kwargs: Any) -> Any:
        value = collect(kwargs)
        return func(**kwargs, **{target: value})

    params = own[:at] + added + own[at:]
    command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    del command.__wrapped__
    return typing.cast(F, command)


def with_model_options(func: F) -> F:
    """Give the command `func` one option per backend option; it receives them as `model_options`."""
    options = model_cli_options()
    added = [inspect.Parameter(o.param, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=o.annotation)
             for o in options]
    return expand(func, "model_options", added,
                  lambda kwargs: ModelOptions({o.name: kwargs.pop(o.param, None) for o in options}))


def model_options(spec: str, **options: Any) -> dict[str, Any]:
    """Keyword arguments for `get_model(spec, **kw)` from options given by name (for code, not the CLI)."""
    return ModelOptions(options).for_spec(spec)


def check_applicable(specs: list[str | None], **options: Any) -> None:
    """Refuse an option, given by name, that none of `specs`' backends takes."""
    ModelOptions(options).check_applicable(specs)


# -- reasoning and extra sampling settings (issue 15) ----------------------------------------------------
# `run` declares one parameter per option below; `run.build.eval_options` puts them in the spec's GenerationSpec, so
# every one of them is in the cache key and the manifest.

REASONING_EFFORT_HELP = "OpenAI / vLLM / SGLang reasoning_effort (e.g. low, medium, high)."
ENABLE_THINKING_HELP = "vLLM / SGLang enable_thinking, sent in chat_template_kwargs (Qwen3 and alike)."
THINKING_BUDGET_HELP = "Anthropic extended thinking budget_tokens (at least 1024, below --max-tokens)."
EXTRA_BODY_HELP = "A JSON object merged into every request body (anything the options above do not cover)."
SYSTEM_HELP = "System prompt put before every request's messages."


def check_sendable(spec: str, settings: GenerationSpec) -> None:
    """Refuse (ProctorError, exit 2), before anything loads, settings the spec's backend cannot send rather than
    ignoring them (the runner checks again for the Python API)."""
    problems = unsupported_settings(spec.partition(":")[0], settings)
    if problems:
        raise ProctorError("; ".join(problems))
