"""One evaluation described by keyword options → a RunSpec (and how to run it): the CLI's `run` and the
Python `proctor.eval` call this with the same names, so they build the same spec.

Errors name the options (`max_tokens`, `no_answer`…); the CLI shows them as its flags (`cli.fields`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.options import AGENT_KEYWORDS, BY_NAME, GENERATION_KEYWORDS, OPTIONS, EvalOptions, no_such_option
from ..core.spec import (
    AgentLimits,
    Budget,
    DatasetRef,
    GenerationSpec,
    JudgeSpec,
    ModelSpec,
    Money,
    OptionValue,
    RunSpec,
    ScorerSpec,
    ShardSpec,
    StopRule,
)
from ..metrics.human_labels import read_human_labels
from ..scoring.logprob import Norm
from ..scoring.reasoning import parse_extra_body
from ..util.errors import ProctorError, brief
from .pricing import parse_money, resolve_price
from .shard import Shard

#: every keyword an evaluation takes (the CLI's flags without their dashes)
OPTION_NAMES = frozenset(BY_NAME)

_TUPLES = tuple(o.name for o in OPTIONS if o.kind == "texts")
_PATHS = tuple(o.name for o in OPTIONS if o.kind == "path")
_MONEY = tuple(o.name for o in OPTIONS if o.kind == "money")


def eval_options(**given: Any) -> EvalOptions:
    """`EvalOptions` from keywords (None: not given); a bad one is a ProctorError naming it (`max_tokens: …`)."""
    unknown = [name for name in given if name not in BY_NAME]
    if unknown:
        raise ProctorError(no_such_option(unknown[0], BY_NAME))
    for o in OPTIONS:
        value = given.get(o.name)
        if o.choices and isinstance(value, str):
            given[o.name] = value.strip().lower()
            if given[o.name] not in o.choices:
                raise ProctorError(f"{o.name} must be {' or '.join(o.choices)}, not {given[o.name]!r}")
    for name in _TUPLES:
        if isinstance(given.get(name), str):
            given[name] = (given[name],)
        elif isinstance(given.get(name), list):
            given[name] = tuple(given[name])
    for name in _PATHS:
        if isinstance(given.get(name), Path):
            given[name] = str(given[name])
    for name in _MONEY:
        if isinstance(given.get(name), int | float | Decimal):
            given[name] = str(given[name])
    if not given.get("system"):
        given.pop("system", None)  # "" is no system prompt
    if isinstance(given.get("extra_body"), str):
        given["extra_body"] = parse_extra_body(given["extra_body"])
    try:
        return EvalOptions(**{k: v for k, v in given.items() if v is not None})
    except ValidationError as e:
        raise ProctorError(brief(e)) from None


def build_spec(dataset: str, model: str, options: EvalOptions,
               model_options: Mapping[str, OptionValue] | None = None) -> RunSpec:
    """The RunSpec that `options` describe for `dataset` and `model` (not yet resolved)."""
    backend = dict(model_options or {})
    price = _price(model, options, bool(backend.get("batch")))
    try:
        return RunSpec(
            dataset=DatasetRef(name=dataset, data_file=options.data_file, seed=options.seed, limit=options.limit,
                               limit_per_category=options.limit_per_category, fewshot_from=options.fewshot_from,
                               prompt_options=_prompt_options(options)),
            model=ModelSpec(spec=model, options=backend, api_key_env=options.api_key_env),
            scorer=ScorerSpec(mode=options.mode, prompt_kind=options.prompt, format=options.format,
                              shots=options.shots, answer_rule=options.answer_rule, extract=options.extract,
                              no_answer=options.no_answer, truncated_as=options.truncated_as,
                              judge_agreement=options.judge_agreement, exec_limits=options.exec_limits,
                              test_imports=options.test_imports or None,
                              second_ask=False if options.no_second_ask else None),
            generation=options.generation, epochs=options.epochs, shard=_shard(options.shard),
            judge=_judge(options, model, price), price=price,
            budget=Budget(max_cost=parse_money(options.max_cost, "max_cost")) if options.max_cost else None,
            cluster=options.cluster, unsafe_exec=options.unsafe_exec, stop_when=stop_rule(options),
            agent=agent_limits(options),
            human_labels=read_human_labels(options.human_labels) if options.human_labels is not None else None)
    except ValidationError as e:
        raise ProctorError(brief(e)) from None


def agent_limits(options: EvalOptions) -> AgentLimits | None:
    """The agent limits the options give, the rest AgentLimits' defaults; None when none is given (resolve then
    gives an agent kind's run the defaults)."""
    given = {field: getattr(options, name) for name, field in AGENT_KEYWORDS.items() if getattr(options, name) is not None}
    if not given:
        return None
    try:
        return AgentLimits(**given)
    except ValidationError as e:
        name = {v: k for k, v in AGENT_KEYWORDS.items()}
        problem = e.errors()[0]
        field = str(problem["loc"][0]) if problem["loc"] else ""
        raise ProctorError(f"{name.get(field, field)}: {problem['msg']}") from None


def _prompt_options(options: EvalOptions) -> dict[str, str]:
    """The options a benchmark's loader takes besides the data: LiveCodeBench's `after`, GPQA's `sampler`."""
    return {k: v for k, v in (("after", options.after), ("sampler", options.sampler)) if v}


def stop_rule(options: EvalOptions) -> StopRule | None:
    """`stop_when_decided` with its `baseline` and `max_drop` (points) as the spec's StopRule (None without it)."""
    if not options.stop_when_decided:
        if options.baseline is not None or options.max_drop is not None:
            raise ProctorError("baseline: a baseline and max_drop go with stop_when_decided (a finished run is gated "
                               "with `proctor gate`)")
        return None
    if options.baseline is None or options.max_drop is None:
        raise ProctorError("stop_when_decided: give the baseline run and the max_drop allowed (points)")
    return StopRule(baseline=options.baseline, max_drop=options.max_drop / 100)


def with_prices(spec: RunSpec, options: EvalOptions) -> RunSpec:
    """`spec` with its model's price (the options' or the price table's) and the budget the options set."""
    price = _price(spec.model.spec, options, bool(spec.model.options.get("batch")))
    budget = Budget(max_cost=parse_money(options.max_cost, "max_cost")) if options.max_cost else None
    return spec.model_copy(update={"price": price, "budget": budget})


def suite_spec(paths: Sequence[str | Path], model: str, *, norm: str = "sum", softmax_temperature: float = 1.0,
               join: str = "newline", model_options: Mapping[str, OptionValue] | None = None) -> RunSpec:
    """The RunSpec of scoring probsem suites (`proctor score`): a directory, or a prompt file and its suite
    files, scored by log-probability with the normalisation, softmax temperature and join given."""
    if norm not in {n.value for n in Norm}:
        raise ProctorError(f"norm must be one of {', '.join(n.value for n in Norm)}, got {norm!r}")
    if join not in ("newline", "space"):
        raise ProctorError(f"join must be newline or space, got {join!r}")
    if not softmax_temperature > 0 or softmax_temperature == float("inf"):
        raise ProctorError(f"softmax_temperature must be a positive number, got {softmax_temperature}")
    if not paths:
        raise ProctorError("paths: give a directory of suites, or a prompt file and its suite files")
    try:
        return RunSpec(dataset=DatasetRef(name=str(paths[0]), files=tuple(str(p) for p in paths[1:])),
                       model=ModelSpec(spec=model, options=dict(model_options or {})),
                       scorer=ScorerSpec(mode="logprob", norm=norm, softmax_temperature=softmax_temperature,
                                         join=join))  # type: ignore[arg-type]  # join checked above
    except ValidationError as e:
        raise ProctorError(brief(e)) from None


def _price(model: str, options: EvalOptions, batch: bool) -> Money | None:
    """The model's price: the options' own, else the price table's (None when unknown)."""
    prices = Path(options.prices) if options.prices else None
    price = resolve_price(
        model, prices_file=prices, batch=batch,
        price_in=parse_money(options.price_in, "price_in") if options.price_in is not None else None,
        price_out=parse_money(options.price_out, "price_out") if options.price_out is not None else None)
    if price is None and prices is not None:
        raise ProctorError(f"{prices}: no price for {model} (add it under models:, by spec, name or glob)")
    return price


def _judge(options: EvalOptions, model: str, price: Money | None) -> JudgeSpec | None:
    """The judge with its own endpoint and key variable (never the model's); its price from the table."""
    if options.judge is None:
        return None
    if options.judge == model and not options.judge_base_url:
        judge_price = price  # the model grading itself, at the vendor's endpoint (or its own --judge-base-url)
    else:
        judge_price = resolve_price(options.judge, prices_file=Path(options.prices) if options.prices else None)
    # only what the user gave: the rest is the benchmark judge's (else proctor's), filled once by run/resolve.py
    given = {name: value for name, value in (("temperature", options.judge_temperature),
                                             ("max_tokens", options.judge_max_tokens)) if value is not None}
    try:  # checked by the spec's own ranges, named by their options (`judge_temperature: …`)
        settings = GenerationSpec.model_validate(given) if given else None
    except ValidationError as e:
        raise ProctorError("judge_" + brief(e)) from None
    return JudgeSpec(model=options.judge, base_url=options.judge_base_url, api_key_env=options.judge_api_key_env,
                     price=judge_price, settings=settings)


def _shard(text: str | None) -> ShardSpec | None:
    if text is None:
        return None
    shard = Shard.parse(text)
    return ShardSpec(index=shard.index, count=shard.count)


def split_options(given: Mapping[str, Any], backend_fields: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Keywords split into (evaluation options, backend options): a name the model's backend takes is its."""
    evaluation = {k: v for k, v in given.items() if k in OPTION_NAMES}
    backend = {k: v for k, v in given.items() if k not in evaluation and k in backend_fields}
    unknown = sorted(set(given) - set(evaluation) - set(backend))
    if unknown:
        text = no_such_option(unknown[0], [*OPTION_NAMES, *backend_fields])
        raise ProctorError(text if text.endswith("?)") else f"{text} (the model's backend takes: "
                           f"{', '.join(backend_fields) or 'none'})")
    return evaluation, backend


__all__ = ["GENERATION_KEYWORDS", "OPTION_NAMES", "EvalOptions", "build_spec", "eval_options", "split_options", "suite_spec",
           "with_prices"]
