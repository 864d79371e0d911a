"""`proctor run`: evaluate one or more datasets with one model, by generation or by log-likelihood."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ProctorError
from .options import (
    ENABLE_THINKING_HELP,
    EXTRA_BODY_HELP,
    REASONING_EFFORT_HELP,
    SYSTEM_HELP,
    THINKING_BUDGET_HELP,
)


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
    datasets: Annotated[list[str], typer.Argument(help="Built-in names (see `proctor datasets`) or paths.")],
    model: Annotated[str, typer.Option("--model", "-m", help="hf:PATH, openai:MODEL, anthropic:MODEL, scripted:RULE")],
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
    max_tokens: Annotated[int | None, typer.Option()] = 1024,
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
    judge: Annotated[str | None, typer.Option(help="Model spec of the LLM judge for prose items.")] = None,
    judge_agreement: Annotated[int, typer.Option(
        help="Also judge the first N exact-answer items and report judge/exact-match agreement.")] = 0,
    base_url: Annotated[list[str] | None, typer.Option(help="Server base URL (repeat to spread load over several).")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once (API backends).")] = 16,
    timeout: Annotated[float, typer.Option(help="Per-request timeout in seconds.")] = 120.0,
    max_retries: Annotated[int, typer.Option(help="Retries on 429/5xx/timeouts before recording an error.")] = 5,
    batch_size: Annotated[int | None, typer.Option(help="Batch size (hf backend).")] = None,
    device: Annotated[str | None, typer.Option(help="cpu, cuda or auto (hf backend).")] = None,
    dtype: Annotated[str | None, typer.Option(help="float32, bfloat16, float16 or auto (hf backend).")] = None,
    trust_remote_code: Annotated[bool, typer.Option(help="Run code shipped with an hf model (off unless asked).")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the request cache.")] = False,
    store: Annotated[Path | None, typer.Option(help="SQLite store for cache and history.")] = None,
    runs_root: Annotated[Path, typer.Option(help="Where default run directories go.")] = Path("runs"),
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress")] = None,
) -> None:
    """Evaluate DATASETS with MODEL; print accuracy with a 95% CI and write the run log."""
    from ..benchmarks.registry import load_task
    from ..models import GenerationSettings, get_model
    from ..runner import RunConfig, accuracy_line, evaluate
    from .options import model_options, reasoning_settings
    from .summary import print_results

    if mode not in ("generate", "logprob"):
        raise ProctorError(f"--mode must be generate or logprob, not {mode!r}")
    if data_file is not None and len(datasets) > 1:
        raise ProctorError("--data-file applies to one dataset at a time")
    reasoning = reasoning_settings(
        model, reasoning_effort=reasoning_effort, enable_thinking=enable_thinking, thinking_budget=thinking_budget,
        top_k=top_k, min_p=min_p, presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
        system=system, extra_body=extra_body, max_tokens=max_tokens,
    )
    kw = model_options(
        model, base_urls=base_url, concurrency=concurrency, timeout=timeout, max_retries=max_retries,
        batch_size=batch_size, device=device, dtype=dtype, trust_remote_code=trust_remote_code,
    )
    the_model = get_model(model, **kw)
    the_judge = get_model(judge, **model_options(judge, base_urls=base_url, concurrency=concurrency,
                                                  timeout=timeout, max_retries=max_retries)) if judge else None
    settings = GenerationSettings(
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, stop=tuple(stop or ()), seed=gen_seed,
        **reasoning,
    )
    tasks = [
        load_task(name, data_file=data_file, seed=seed, limit=limit, limit_per_category=limit_per_category)
        for name in datasets
    ]
    for task in tasks:
        run_dir = out if (out is not None and len(tasks) == 1) else (out / task.name if out is not None else None)
        config = RunConfig(
            mode=mode,  # type: ignore[arg-type]
            prompt_kind=prompt,
            settings=settings,
            epochs=epochs,
            judge=the_judge,
            judge_agreement=judge_agreement,
            out_dir=run_dir,
            runs_root=runs_root,
            use_cache=not no_cache,
            store_path=store,
            progress=progress,
            command=["proctor", *sys.argv[1:]],
        )
        log = evaluate(task, the_model, config)
        if log.results is not None:
            from ..llmwc import write_llmwc_layout

            write_llmwc_layout(log)
            print_results(log)
            typer.echo(f"{task.name}: {accuracy_line(log.results)}  → {log.path}")
