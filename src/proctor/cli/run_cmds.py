"""`proctor run`: evaluate one or more datasets with one model, by generation or by log-likelihood."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import DEFAULT_MAX_ERROR_RATE, ProctorError
from . import options
from .options import (
    ENABLE_THINKING_HELP,
    EXTRA_BODY_HELP,
    REASONING_EFFORT_HELP,
    SYSTEM_HELP,
    THINKING_BUDGET_HELP,
    with_model_options,
)

DEFAULT_MAX_TOKENS = 1024  # when neither --max-tokens nor the benchmark gives a budget

if TYPE_CHECKING:
    from decimal import Decimal

    from ..models.base import GenerationSettings, Model
    from ..pricing import Price
    from ..runlog import RunLog
    from ..runner import RunConfig, RunState
    from ..tasks import Task


RUN_EXAMPLES = """Examples (on the bundled examples, offline):

  proctor tiny-model out/tiny
  proctor run examples/items/demo.jsonl --model hf:out/tiny --limit 4
  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model hf:out/tiny --mode logprob
  proctor run examples/questions/demo.json --model scripted:first --epochs 2 --temperature 0.7
"""
TINY_EXAMPLES = """Example:

  proctor tiny-model out/tiny
  proctor run examples/items/demo.jsonl --model hf:out/tiny --limit 4
"""
GENERATION = "Generation (--mode generate)"


Datasets = Annotated[list[str] | None, typer.Argument(
    metavar="DATASET...", show_default=False,
    help="Built-in benchmark names (`proctor datasets`) or files/directories in any proctor format (required "
         "unless --config).")]
RunModel = Annotated[str | None, typer.Option(
    "--model", "-m", metavar="SPEC", show_default=False,
    help="Model: hf:PATH-OR-HUB-ID, openai:MODEL, anthropic:MODEL, vllm:PATH-OR-HUB-ID or scripted:RULE (required unless --config).")]
ShardOpt = Annotated[str | None, typer.Option(
    "--shard", metavar="K/N", help="Run only shard K of N (items split by id hash; each shard its own run "
                                   "directory; `proctor merge` combines them; default: the whole run).")]
LlmwcConfig = Annotated[Path | None, typer.Option(
    "--config", metavar="LLMWC.yaml",
    help="An llm-wc config: run every model it lists, write llm-wc's results layout (default: none).")]
RunMode = Annotated[str, typer.Option(metavar="generate|logprob", help=(  # checked by cli.checks (did you mean)
    "generate: ask for an answer and extract it; logprob: score each choice's log-probability."))]
PromptKind = Annotated[str | None, typer.Option(metavar="KIND", help=(
    "Prompt kind: zero_shot, chain_of_thought, five_shot… (default: the dataset's first; generate mode)."))]
LimitPerCategory = Annotated[int | None, typer.Option(
    metavar="N", help="At most N items per category (default: all).")]
Epochs = Annotated[int, typer.Option(metavar="K", help="Ask each item K times (mean@K, pass@K).")]
Temperature = Annotated[float, typer.Option(
    metavar="NUMBER", help="Sampling temperature (0: greedy).", rich_help_panel=GENERATION)]
TopP = Annotated[float | None, typer.Option(metavar="NUMBER", help=(
    "Nucleus sampling: sample from the most likely tokens that add up to this probability (default: off)."),
    rich_help_panel=GENERATION)]
MaxTokens = Annotated[int | None, typer.Option(metavar="N", help=(
    f"Longest answer, in tokens (default: the benchmark's, e.g. aime-2025 32768; else {DEFAULT_MAX_TOKENS})."),
    rich_help_panel=GENERATION)]
REASONING = "Reasoning and extra sampling settings (--mode generate)"
ReasoningEffort = Annotated[str | None, typer.Option(
    metavar="LEVEL", help=REASONING_EFFORT_HELP[:-1] + " (default: none).", rich_help_panel=REASONING)]
EnableThinking = Annotated[bool | None, typer.Option(
    "--enable-thinking/--disable-thinking", help=ENABLE_THINKING_HELP[:-1] + " (default: the model's).",
    rich_help_panel=REASONING)]
ThinkingBudget = Annotated[int | None, typer.Option(
    metavar="N", min=1, help=THINKING_BUDGET_HELP[:-1] + " (default: off).", rich_help_panel=REASONING)]
TopK = Annotated[int | None, typer.Option(
    metavar="N", min=1, help="Sample from the N most likely tokens (default: off).", rich_help_panel=REASONING)]
MinP = Annotated[float | None, typer.Option(metavar="NUMBER", min=0.0, max=1.0, help=(
    "Drop tokens less likely than this share of the top token's probability (default: off)."),
    rich_help_panel=REASONING)]
PresencePenalty = Annotated[float | None, typer.Option(
    metavar="NUMBER", help="Presence penalty sent to the model (default: none).", rich_help_panel=REASONING)]
FrequencyPenalty = Annotated[float | None, typer.Option(
    metavar="NUMBER", help="Frequency penalty sent to the model (default: none).", rich_help_panel=REASONING)]
System = Annotated[str | None, typer.Option(
    metavar="TEXT", help=SYSTEM_HELP[:-1] + " (default: none).", rich_help_panel=REASONING)]
ExtraBody = Annotated[str | None, typer.Option(
    metavar="JSON", help=EXTRA_BODY_HELP[:-1] + " (default: none).", rich_help_panel=REASONING)]
TruncatedAsOpt = Annotated[str, typer.Option(metavar="wrong|excluded", help=(
    "How accuracy counts a truncated answer (token limit, unclosed thought)."), rich_help_panel=REASONING)]
SCORING = "Scoring"
ExtractOpt = Annotated[str, typer.Option(metavar="reference|robust", help=(
    "Which reading scores: the benchmark's reference answer rule (its authors' parser) or proctor's robust "
    "reader; both run on every answer and their disagreements are reported as ambiguous."),
    rich_help_panel=SCORING)]
NoAnswerOpt = Annotated[str, typer.Option(metavar="wrong|guess", help=(
    "How accuracy counts an answer no rule found: wrong, or guess (1/k credit for k options, the expected "
    "value of a random guess)."), rich_help_panel=SCORING)]
COST = "Cost"
Prices = Annotated[Path | None, typer.Option(metavar="YAML", help=(
    "Price table (default: $PROCTOR_PRICES, else ~/.config/proctor/prices.yaml)."), rich_help_panel=COST)]
PriceIn = Annotated[str | None, typer.Option(metavar="MONEY", help=(
    "Money per million input tokens, with --price-out (default: from the price table)."), rich_help_panel=COST)]
PriceOut = Annotated[str | None, typer.Option(metavar="MONEY", help=(
    "Money per million output tokens, with --price-in (default: from the price table)."), rich_help_panel=COST)]
MaxCost = Annotated[str | None, typer.Option(metavar="MONEY", help=(
    "Stop before a request could cross this amount; needs prices and --max-tokens (default: no limit)."),
    rich_help_panel=COST)]
Stop = Annotated[list[str] | None, typer.Option(
    metavar="TEXT", help="Stop sequence; repeat for several (default: none).", rich_help_panel=GENERATION)]
GenSeed = Annotated[int | None, typer.Option(
    metavar="N", help="Sampling seed sent to the model (default: none).", rich_help_panel=GENERATION)]
Judge = Annotated[str | None, typer.Option(metavar="SPEC", help=(
    "Model that grades prose answers (open-ended items need one; default: none)."), rich_help_panel=GENERATION)]
JudgeAgreement = Annotated[int, typer.Option(metavar="N", help=(
    "Also judge the first N exact-answer items; report judge/exact-match agreement."), rich_help_panel=GENERATION)]


def register(app: typer.Typer) -> None:
    app.command("run", epilog=RUN_EXAMPLES)(run)
    app.command("tiny-model", epilog=TINY_EXAMPLES)(tiny_model)


def tiny_model(
    out: Annotated[Path, typer.Argument(metavar="DIR", help="Directory to write the model and tokenizer to.",
                                        show_default=False)],
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of the random weights.")] = 0,
    architecture: Annotated[str, typer.Option(metavar="llama|gpt2", help="Model architecture.")] = "llama",
) -> None:
    """Build a tiny random-weight model and tokenizer (no download) to try proctor offline: --model hf:DIR.

    Its accuracy is chance; its log-probabilities are exact."""
    from ..tiny import build_tiny_model

    path = build_tiny_model(out, seed=seed, architecture=architecture)
    typer.echo(f"tiny model ready: hf:{path}")


@with_model_options
def run(
    datasets: Datasets = None,
    model: RunModel = None,
    mode: RunMode = "generate",
    prompt: PromptKind = None,
    limit: options.Limit = None,
    limit_per_category: LimitPerCategory = None,
    seed: options.ChoiceSeed = 0,
    data_file: options.DataFile = None,
    epochs: Epochs = 1,
    temperature: Temperature = 0.0,
    top_p: TopP = None,
    max_tokens: MaxTokens = None,
    stop: Stop = None,
    gen_seed: GenSeed = None,
    reasoning_effort: ReasoningEffort = None,
    enable_thinking: EnableThinking = None,
    thinking_budget: ThinkingBudget = None,
    top_k: TopK = None,
    min_p: MinP = None,
    presence_penalty: PresencePenalty = None,
    frequency_penalty: FrequencyPenalty = None,
    system: System = None,
    extra_body: ExtraBody = None,
    truncated_as: TruncatedAsOpt = "wrong",
    extract: ExtractOpt = "reference",
    no_answer: NoAnswerOpt = "wrong",
    judge: Judge = None,
    judge_agreement: JudgeAgreement = 0,
    prices: Prices = None,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    max_cost: MaxCost = None,
    out: options.Out = None,
    runs_root: options.RunsRoot = Path("runs"),
    store: options.Store = None,
    no_cache: options.NoCache = False,
    no_history: options.NoHistory = False,
    progress: options.ShowProgress = None,
    max_error_rate: options.MaxErrorRate = DEFAULT_MAX_ERROR_RATE,
    shard: ShardOpt = None,
    llmwc_config: LlmwcConfig = None,
    model_options: options.ModelOptions | None = None,
) -> None:
    """Evaluate DATASETs with a model; print accuracy with a 95% CI and write a run directory.

    Exit status: 0 done; 1 finished but nothing was scored or more than --max-error-rate of the samples
    errored; 2 refused before or stopped early (bad input, or the first answers all failed); 3 stopped by
    --max-cost."""
    from ..benchmarks.registry import BUILTINS
    from .checks import check_run_args

    given = model_options or options.ModelOptions({})
    http = {k: given.set().get(k) for k in ("concurrency", "timeout", "max_retries")}
    if llmwc_config is not None:  # llm-wc (proctor.llmwc): the config names the benchmark and the models
        from .llmwc_cmds import ConfigRunOptions, backend_options, refuse_unapplied, run_config

        refuse_unapplied()
        status = run_config(llmwc_config, ConfigRunOptions(
            model=model, data_file=data_file, out=out, store=store, progress=progress, use_cache=not no_cache,
            record_history=not no_history, max_tokens=max_tokens, prices=prices, max_cost=max_cost,
            max_error_rate=max_error_rate, http=backend_options(given)))
        if status:
            raise typer.Exit(status)
        return
    if not datasets or model is None:
        raise ProctorError("give DATASETs and --model (or --config LLMWC.yaml)")
    check_run_args(  # before torch is imported or a model loads: a typo costs milliseconds
        datasets=datasets, builtins=list(BUILTINS), model=model, judge=judge, mode=mode, prompt=prompt,
        limit=limit, limit_per_category=limit_per_category, epochs=epochs, temperature=temperature, top_p=top_p,
        max_tokens=max_tokens, data_file=data_file, **http)
    from ..shard import Shard

    the_shard = Shard.parse(shard) if shard is not None else None  # before a model loads, too
    from ..benchmarks.registry import load_task
    from ..models import GenerationSettings
    from ..reasoning import TruncatedAs
    from ..runner import RunConfig
    from .options import reasoning_settings

    if data_file is not None and len(datasets) > 1:
        raise ProctorError("--data-file applies to one dataset at a time")
    reasoning = reasoning_settings(
        model, reasoning_effort=reasoning_effort, enable_thinking=enable_thinking, thinking_budget=thinking_budget,
        top_k=top_k, min_p=min_p, presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
        system=system, extra_body=extra_body, max_tokens=max_tokens,
    )
    given.check_applicable([model, judge])
    price, cost_limit = _prices(model, prices, price_in, price_out, max_cost, bool(given.set().get("batch")))
    judge_price = _judge_price(judge, model, price, prices)
    settings = GenerationSettings(
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, stop=tuple(stop or ()), seed=gen_seed,
        **reasoning,
    )
    tasks = [  # the data first: a missing file or the Hub's answer comes before any model loads
        load_task(name, data_file=data_file, seed=seed, limit=limit, limit_per_category=limit_per_category)
        for name in datasets
    ]
    config = RunConfig(
        mode=mode,  # type: ignore[arg-type]  # checked above
        prompt_kind=prompt, settings=settings, epochs=epochs, judge_agreement=judge_agreement,
        runs_root=runs_root, use_cache=not no_cache, store_path=store, record_history=not no_history,
        progress=progress, command=["proctor", *sys.argv[1:]], truncated_as=TruncatedAs.parse(truncated_as).value,
        extract=extract.strip().lower(), no_answer=no_answer.strip().lower(),
        price=price, max_cost=cost_limit, judge_price=judge_price, shard=the_shard,
    )
    status = _run_tasks(tasks, _Models(model, judge, given), config, out, max_error_rate)
    if status:
        raise typer.Exit(status)


class _Models:
    """The model and the judge, each with the options its backend takes, loaded the first time a run needs
    them (a run with nothing left to ask never loads a local model)."""

    def __init__(self, model: str, judge: str | None, given: options.ModelOptions) -> None:
        self.model_spec, self.judge_spec, self.given = model, judge, given
        self._loaded: tuple[Model, Model | None] | None = None

    def load(self) -> tuple[Model, Model | None]:
        from ..models import get_model

        if self._loaded is None:
            the_model = get_model(self.model_spec, **self.given.for_spec(self.model_spec))
            the_judge = get_model(self.judge_spec, **self.given.for_spec(self.judge_spec)) if self.judge_spec else None
            self._loaded = (the_model, the_judge)
        return self._loaded


def say_resume(state: RunState) -> None:
    """On stderr, for a run found half or wholly done: `note: resuming DIR: 10/16 done, 6 to ask`."""
    line = state.resume_line()
    if line is not None:
        from ..termsafe import plain
        from .messages import note

        note(plain(line))


def _run_tasks(tasks: list[Task], models: _Models, config: RunConfig, out: Path | None, max_error_rate: float) -> int:
    """Evaluate each task (its own run directory under `out` when there are several); the worst exit status.

    Every task is checked and its resume state found before the first model loads."""
    from ..models.vllm_engine import kept_running
    from ..pricing import token_counter
    from ..prompts import bind_tokenizer, kind_settings
    from ..runner import accuracy_line, evaluate, finish_done_run, plan_run
    from ..safepath import safe_component
    from ..termsafe import plain
    from .summary import print_results

    planned = []
    for task in tasks:
        run_dir = out if (out is not None and len(tasks) == 1) else (
            out / safe_component(task.name) if out is not None else None)  # a name from data stays inside -o
        settings = budget_for(task, kind_settings(task.prompts, config.prompt_kind or task.prompts.kinds[0],
                                                  config.settings))  # the kind's stop, e.g. tiger-local's
        task_config = replace(config, out_dir=run_dir, settings=settings)
        planned.append((task, task_config, plan_run(task, models.model_spec, task_config, models.judge_spec)))
    status, kept = 0, False
    with ExitStack() as engines:  # a managed vLLM engine serves every dataset, then stops (kept_running)
        for task, task_config, state in planned:
            _hint_suites(task, task_config)
            say_resume(state)
            if state.left == 0 and state.total:  # a shard whose bucket is empty still writes its (empty) run
                log = finish_done_run(state, task_config)
            else:
                the_model, the_judge = models.load()
                if not kept:
                    engines.enter_context(kept_running(the_model))
                    kept = True
                bind_tokenizer(task.prompts, token_counter(the_model))
                log = evaluate(task, the_model, replace(task_config, judge=the_judge))
            if log.results is not None:
                print_results(log)
                typer.echo(plain(f"{task.name}: {accuracy_line(log.results)}  → {log.path}"))  # names from data
            status = max(status, error_status(log, max_error_rate))
    return status


def _hint_suites(task: Task, config: RunConfig) -> None:
    """Before generating for probsem suites: say that they are meant to be scored by log-probability."""
    from ..scoring.suites import is_suite_item

    if config.mode == "generate" and task.items and all(is_suite_item(it) for it in task.items):
        from .messages import hint

        source = _relative(str(task.source.get("path") or task.name))
        hint(f"{task.name} is a probsem suite, scored by log-probability as probsem does: proctor score "
             f"{source} --model MODEL (or run --mode logprob); generating answers instead")


def _relative(path: str) -> str:
    """`path` relative to the working directory when it is inside it (what the user typed, usually)."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


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


def _judge_price(judge: str | None, model: str, price: Price | None, prices: Path | None) -> Price | None:
    """The judge's price: the model's when the judge is the model, else the price table's (None when unknown)."""
    from ..pricing import resolve_price

    if judge is None:
        return None
    if judge == model:
        return price
    return resolve_price(judge, prices_file=prices)


def error_status(log: RunLog, max_error_rate: float) -> int:
    """Print each distinct error message with its count (stderr); 1 when the run must not pass as fine."""
    from .messages import count, error, note, warning

    if log.results is None:
        return 1
    errors, overall = log.results.errors, log.results.overall
    n, n_errors = overall.n, sum(errors.values())
    if errors:
        from ..runner import error_groups

        groups = error_groups(errors)  # one line per kind: the same message but for its numbers
        lines = [f"{g.count:>6} × {_printable(g.describe())[:300]}" for g in groups[:10]]
        if len(groups) > 10:
            lines.append(f"… and {len(groups) - 10} other kinds of error (see {log.path}/samples.jsonl)")
        warning("\n".join([f"{log.path}: {count(n_errors, 'errored sample')} (a re-run retries them):", *lines]))
    if not n and log.manifest.shard:  # hash buckets can be empty: `merge` still needs this shard's directory
        note(f"{log.path}: shard {log.manifest.shard} holds none of the items; it is complete (merge it with the others)")
        return 0
    if not overall.n_scored and not overall.n_unscored:
        error(f"{log.path}: nothing was scored")
        return 1
    if n and n_errors / n > max_error_rate:
        error(f"{log.path}: {n_errors} of {n} samples errored ({n_errors / n:.0%} > --max-error-rate "
              f"{max_error_rate:.0%}); run the same command again to retry them")
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
