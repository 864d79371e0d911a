"""`proctor run`: evaluate one or more datasets with one model, by generation or by log-likelihood."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import ProctorError
from .options import (
    ENABLE_THINKING_HELP,
    EXTRA_BODY_HELP,
    REASONING_EFFORT_HELP,
    SYSTEM_HELP,
    THINKING_BUDGET_HELP,
)

if TYPE_CHECKING:
    from decimal import Decimal

    from ..models.base import GenerationSettings, Model
    from ..pricing import Price
    from ..runlog import RunLog
    from ..runner import RunConfig
    from ..tasks import Task


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("tiny-model")(tiny_model)


def tiny_model(
    out: Annotated[Path, typer.Argument(help="Directory to write the model and tokenizer to.")],
    seed: Annotated[int, typer.Option(help="Weight initialisation seed.")] = 0,
    architecture: Annotated[str, typer.Option(help="llama or gpt2")] = "llama",
) -> None:
    """Build a tiny random-weight model and tokenizer (no download) to try proctor offline: --model hf:OUT.

    Its accuracy is chance; its log-probabilities are exact."""
    from ..tiny import build_tiny_model

    path = build_tiny_model(out, seed=seed, architecture=architecture)
    typer.echo(f"tiny model ready: hf:{path}")


def run(
    datasets: Annotated[list[str] | None, typer.Argument(help="Built-in names (see `proctor datasets`) or paths.")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="hf:PATH, openai:MODEL, anthropic:MODEL, scripted:RULE")] = None,
    mode: Annotated[str, typer.Option(help="generate (answer extraction) or logprob (score each choice)")] = "generate",
    prompt: Annotated[str | None, typer.Option(help="zero_shot, chain_of_thought, five_shot, …")] = None,
    limit: Annotated[int | None, typer.Option(help="Evaluate the first N items only.")] = None,
    limit_per_category: Annotated[int | None, typer.Option(help="At most N items per category.")] = None,
    seed: Annotated[int, typer.Option(help="Choice-order seed (GPQA shuffling).")] = 0,
    data_file: Annotated[Path | None, typer.Option(help="Local file in the upstream schema (offline).")] = None,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Run directory (default: runs/<dataset>__<model>__<hash>).")] = None,
    epochs: Annotated[int, typer.Option(help="Repeat each item K times (mean@K, pass@K).")] = 1,
    temperature: Annotated[float, typer.Option()] = 0.0,
    top_p: Annotated[float | None, typer.Option()] = None,
    max_tokens: Annotated[int | None, typer.Option(
        help=f"Output token limit (default: the benchmark's, e.g. aime-2025 32768; else {DEFAULT_MAX_TOKENS}).")] = None,
    stop: Annotated[list[str] | None, typer.Option(help="Stop sequence (repeatable).")] = None,
    gen_seed: Annotated[int | None, typer.Option(help="Sampling seed sent to the model.")] = None,
    reasoning_effort: Annotated[str | None, typer.Option(help=REASONING_EFFORT_HELP)] = None,
    enable_thinking: Annotated[bool | None, typer.Option("--enable-thinking/--disable-thinking",
                                                         help=ENABLE_THINKING_HELP)] = None,
    thinking_budget: Annotated[int | None, typer.Option(min=1, help=THINKING_BUDGET_HELP)] = None,
    top_k: Annotated[int | None, typer.Option(min=1)] = None,
    min_p: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    presence_penalty: Annotated[float | None, typer.Option()] = None,
    frequency_penalty: Annotated[float | None, typer.Option()] = None,
    system: Annotated[str | None, typer.Option(help=SYSTEM_HELP)] = None,
    extra_body: Annotated[str | None, typer.Option(help=EXTRA_BODY_HELP)] = None,
    truncated_as: Annotated[str, typer.Option(
        help="How accuracy counts a truncated answer (token limit, unclosed thought): wrong or excluded.")] = "wrong",
    prices: Annotated[Path | None, typer.Option(help="Price table YAML (default $PROCTOR_PRICES, "
                                                     "~/.config/proctor/prices.yaml).")] = None,
    price_in: Annotated[str | None, typer.Option(help="Money per million input tokens (with --price-out).")] = None,
    price_out: Annotated[str | None, typer.Option(help="Money per million output tokens (with --price-in).")] = None,
    max_cost: Annotated[str | None, typer.Option(
        help="Stop before a request could cross this amount (needs prices and --max-tokens); resume continues.")] = None,
    batch: Annotated[bool, typer.Option("--batch", help="Send the run through the provider's batch API "
                                        "(openai:, anthropic:); a killed run picks its batches up again.")] = False,
    batch_poll_interval: Annotated[float | None, typer.Option(help="Seconds between batch status checks.")] = None,
    judge: Annotated[str | None, typer.Option(help="Model spec of the LLM judge for prose items.")] = None,
    judge_agreement: Annotated[int, typer.Option(
        help="Also judge the first N exact-answer items and report judge/exact-match agreement.")] = 0,
    base_url: Annotated[list[str] | None, typer.Option(help="Server base URL (repeat to spread load over several).")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Requests in flight at once (API backends; default 32 openai, 16 anthropic).")] = None,
    timeout: Annotated[float | None, typer.Option(help="Per-request timeout in seconds (API backends; default 120, anthropic 300).")] = None,
    max_retries: Annotated[int | None, typer.Option(help="Retries on 429/5xx/timeouts before recording an error (default 5).")] = None,
    batch_size: Annotated[int | None, typer.Option(help="Batch size (hf backend).")] = None,
    device: Annotated[str | None, typer.Option(help="cpu, cuda or auto (hf backend).")] = None,
    dtype: Annotated[str | None, typer.Option(help="float32, bfloat16, float16 or auto (hf backend).")] = None,
    trust_remote_code: Annotated[bool, typer.Option(help="Run code shipped with an hf model (off unless asked).")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the request cache.")] = False,
    store: Annotated[Path | None, typer.Option(help="SQLite store for cache and history.")] = None,
    no_history: Annotated[bool, typer.Option("--no-history", help="Do not record the run in the history store.")] = False,
    runs_root: Annotated[Path, typer.Option(help="Where default run directories go.")] = Path("runs"),
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress")] = None,
    max_error_rate: Annotated[float, typer.Option(
        help="Exit 1 when more than this share of samples errored (or nothing was scored).")] = 0.1,
    llmwc_config: Annotated[Path | None, typer.Option(
        "--config", help="An llm-wc config: run every model it lists, write llm-wc's results layout.")] = None,
) -> None:
    """Evaluate DATASETS with MODEL; print accuracy with a 95% CI and write the run log.

    Exit status: 0 done; 1 finished but nothing was scored or more than --max-error-rate of the samples
    errored; 2 refused before or stopped early (bad input, or the first answers all failed)."""
    if llmwc_config is not None:  # llm-wc (proctor.llmwc): the config names the benchmark and the models
        from .llmwc_cmds import run_config

        run_config(llmwc_config, out, data_file, store, progress, concurrency, timeout, max_retries)
        return
    if not datasets or model is None:
        raise ProctorError("give DATASETS and --model (or --config LLMWC.yaml)")
    from ..benchmarks.registry import BUILTINS
    from .checks import check_run_args

    check_run_args(  # before torch is imported or a model loads: a typo costs milliseconds
        datasets=datasets, builtins=list(BUILTINS), model=model, judge=judge, mode=mode, prompt=prompt, limit=limit,
        limit_per_category=limit_per_category, epochs=epochs, temperature=temperature, top_p=top_p,
        max_tokens=max_tokens, concurrency=concurrency, timeout=timeout, max_retries=max_retries,
        data_file=data_file)
    from ..benchmarks.registry import load_task
    from ..models import GenerationSettings
    from ..reasoning import TruncatedAs
    from ..runner import RunConfig
    from .options import reasoning_settings

    if mode not in ("generate", "logprob"):
        raise ProctorError(f"--mode must be generate or logprob, not {mode!r}")
    if data_file is not None and len(datasets) > 1:
        raise ProctorError("--data-file applies to one dataset at a time")
    reasoning = reasoning_settings(
        model, reasoning_effort=reasoning_effort, enable_thinking=enable_thinking, thinking_budget=thinking_budget,
        top_k=top_k, min_p=min_p, presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
        system=system, extra_body=extra_body, max_tokens=max_tokens,
    )
    if not 0.0 <= max_error_rate <= 1.0:
        raise ProctorError(f"--max-error-rate must be between 0 and 1, got {max_error_rate}")
    the_model, the_judge = _models(model, judge, base_urls=base_url, concurrency=concurrency, timeout=timeout,
                                   max_retries=max_retries, batch_size=batch_size, device=device, dtype=dtype,
                                   trust_remote_code=trust_remote_code, batch=batch,
                                   batch_poll_interval=batch_poll_interval)
    price, cost_limit = _prices(model, prices, price_in, price_out, max_cost, batch)
    settings = GenerationSettings(
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, stop=tuple(stop or ()), seed=gen_seed,
        **reasoning,
    )
    tasks = [
        load_task(name, data_file=data_file, seed=seed, limit=limit, limit_per_category=limit_per_category)
        for name in datasets
    ]
    config = RunConfig(
        mode=mode,  # type: ignore[arg-type]
        prompt_kind=prompt, settings=settings, epochs=epochs, judge=the_judge, judge_agreement=judge_agreement,
        runs_root=runs_root, use_cache=not no_cache, store_path=store, record_history=not no_history,
        progress=progress, command=["proctor", *sys.argv[1:]], truncated_as=TruncatedAs.parse(truncated_as).value,
        price=price, max_cost=cost_limit,
    )
    status = _run_tasks(tasks, the_model, config, out, max_error_rate)
    if status:
        raise typer.Exit(status)


def _models(model: str, judge: str | None, **given: Any) -> tuple[Model, Model | None]:
    """The model and the judge, each with the options its backend takes (an option neither takes: error)."""
    from ..models import get_model
    from .options import check_applicable, model_options

    check_applicable([model, judge], **given)
    the_model = get_model(model, **model_options(model, **given))
    return the_model, (get_model(judge, **model_options(judge, **given)) if judge else None)


def _run_tasks(tasks: list[Task], model: Model, config: RunConfig, out: Path | None, max_error_rate: float) -> int:
    """Evaluate each task (its own run directory under `out` when there are several); the worst exit status."""
    from ..llmwc import write_llmwc_layout
    from ..runner import accuracy_line, evaluate
    from ..safepath import safe_component
    from ..termsafe import plain
    from .summary import print_results

    status = 0
    for task in tasks:
        run_dir = out if (out is not None and len(tasks) == 1) else (
            out / safe_component(task.name) if out is not None else None)  # a name from data stays inside -o
        log = evaluate(task, model, replace(config, out_dir=run_dir, settings=budget_for(task, config.settings)))
        if log.results is not None:
            write_llmwc_layout(log, task)
            print_results(log)
            typer.echo(plain(f"{task.name}: {accuracy_line(log.results)}  → {log.path}"))  # names from data
        status = max(status, error_status(log, max_error_rate))
    return status


DEFAULT_MAX_TOKENS = 1024  # when neither --max-tokens nor the benchmark gives a budget


def budget_for(task: Task, settings: GenerationSettings) -> GenerationSettings:
    """`settings` with the task's own token budget when --max-tokens was not given (the benchmark's
    default, else DEFAULT_MAX_TOKENS)."""
    if settings.max_tokens is not None:
        return settings
    return replace(settings, max_tokens=task.default_max_tokens or DEFAULT_MAX_TOKENS)


def _prices(spec: str, prices: Path | None, price_in: str | None, price_out: str | None, max_cost: str | None,
            batch: bool) -> tuple[Price | None, Decimal | None]:
    """The model's price (None when unknown) and the --max-cost limit, from the options."""
    from ..pricing import parse_money, resolve_price

    price = resolve_price(spec, prices_file=prices, batch=batch,
                          price_in=None if price_in is None else parse_money(price_in, "--price-in"),
                          price_out=None if price_out is None else parse_money(price_out, "--price-out"))
    if price is None and prices is not None:
        raise ProctorError(f"{prices}: no price for {spec} (add it under models:, by spec, name or glob)")
    return price, None if max_cost is None else parse_money(max_cost, "--max-cost")


def error_status(log: RunLog, max_error_rate: float) -> int:
    """Print each distinct error message with its count (stderr); 1 when the run must not pass as fine."""
    if log.results is None:
        return 1
    errors, overall = log.results.errors, log.results.overall
    n, n_errors = int(overall.get("n") or 0), sum(errors.values())
    if errors:
        typer.echo(f"{log.path}: {n_errors} errored samples (a re-run retries them):", err=True)
    for message, count in list(errors.items())[:10]:
        typer.echo(f"  {count:>6} × {_printable(message)[:300]}", err=True)
    if len(errors) > 10:
        typer.echo(f"  … and {len(errors) - 10} other error messages (see {log.path}/samples.jsonl)", err=True)
    if not overall.get("n_scored") and not overall.get("n_unscored"):
        typer.echo(f"{log.path}: nothing was scored", err=True)
        return 1
    if n and n_errors / n > max_error_rate:
        typer.echo(f"{log.path}: {n_errors} of {n} samples errored ({n_errors / n:.0%} > --max-error-rate "
                   f"{max_error_rate:.0%}); run the same command again to retry them", err=True)
        return 1
    return 0


def finish(log: RunLog, max_error_rate: float) -> None:
    """End a one-run command: the error summary, and exit 1 when `error_status` says so."""
    status = error_status(log, max_error_rate)
    if status:
        raise typer.Exit(status)


def _printable(text: str) -> str:
    """Control characters from a server's message shown escaped, never sent raw to the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
