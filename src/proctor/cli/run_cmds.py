"""`proctor run`: evaluate one or more datasets with one model, by generation or by log-likelihood."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.spec import DEFAULT_MAX_TOKENS, RunSpec
from ..log.runlog import RunLog
from ..util.errors import DEFAULT_MAX_ERROR_RATE, InputError, ProctorError
from ..util.termsafe import plain
from . import executor_cmds as ex
from . import options
from . import retry_opts as retry
from .checks import check_run_args
from .fields import with_flags
from .llmwc_cmds import ConfigRunOptions, backend_options, refuse_unapplied, run_config
from .messages import hint, note
from .options import (
    ENABLE_THINKING_HELP,
    EXTRA_BODY_HELP,
    REASONING_EFFORT_HELP,
    SYSTEM_HELP,
    THINKING_BUDGET_HELP,
    check_sendable,
    with_model_options,
)
from .outcome import error_status
from .summary import finished_line, print_results

if TYPE_CHECKING:
    from ..data.tasks import Task
    from ..run.outputs import RunOutput
    from ..run.pipeline import RunOptions
    from ..run.runner import RunState

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
DATA = "Which items"
PROMPT = "Prompt"
JUDGE = "Judge (grades prose answers)"
OUTPUT = options.OUTPUT
SCORING = "Scoring"


Datasets = Annotated[list[str] | None, typer.Argument(
    metavar="DATASET...", show_default=False,
    help="Built-in benchmark names (`proctor datasets`) or files/directories in any proctor format (required "
         "unless --config).")]
RunModel = Annotated[str | None, typer.Option(
    "--model", "-m", metavar="SPEC", show_default=False,
    help="Model: hf:PATH-OR-HUB-ID, openai:MODEL, anthropic:MODEL, vllm:PATH-OR-HUB-ID or scripted:RULE (required unless --config).")]
ShardOpt = Annotated[str | None, typer.Option(
    "--shard", metavar="K/N", help="Run only shard K of N (items split by id hash; each shard its own run "
                                   "directory; `proctor merge` combines them; default: the whole run).", rich_help_panel=DATA)]
After = Annotated[str | None, typer.Option("--after", metavar="YYYY-MM-DD", help=(
    "LiveCodeBench: evaluate only problems dated on or after this day, after a model's training cutoff "
    "(default: every problem)"), rich_help_panel=DATA)]
UnsafeExec = Annotated[bool, typer.Option("--unsafe-exec", help=(
    "Code benchmarks: execute model code without a sandbox when bubblewrap is unavailable (recorded in the "
    "manifest; by default such a run is refused)"))]
ExecLimitsOpt = Annotated[str | None, typer.Option("--exec-limits", metavar="authors|proctor", help=(
    "Code: the authors' harness's limits or proctor's stricter ones (default: authors)"),
    show_default=False, rich_help_panel=SCORING)]
TestImports = Annotated[bool, typer.Option("--test-imports", help=(
    "MBPP: also run its test_imports (bigcode does not)"), rich_help_panel=SCORING)]
LlmwcConfig = Annotated[Path | None, typer.Option(
    "--config", metavar="LLMWC.yaml",
    help="An llm-wc config: run every model it lists, write llm-wc's results layout (default: none).")]
ExportTo = Annotated[list[str] | None, typer.Option(
    "--export", metavar="FORMAT:DIR", show_default=False,
    help="When the runs are done, also write them as FORMAT into DIR, as `proctor export RUN --to FORMAT -o DIR`"
         " would (llmwc, probsem, inspect, eee; repeatable; default: none).")]
RunMode = Annotated[str | None, typer.Option(metavar="generate|logprob", help=(  # checked by cli.checks
    "generate: ask for an answer and extract it; logprob: score each choice's log-probability (default: the "
    "benchmark's, e.g. logprob for arc-challenge, hellaswag, mmlu; else generate)."), show_default=False, rich_help_panel=PROMPT)]
Shots = Annotated[int | None, typer.Option(metavar="K", help=(
    "Few-shot examples before each question (spec benchmarks: from the split or file their `fewshot` names; "
    "item data: from --fewshot-from; default: the prompt kind's own count). Part of the run's identity."), rich_help_panel=PROMPT)]
FewshotFrom = Annotated[Path | None, typer.Option(metavar="PATH", help=(
    "Item data: the file (any proctor format) few-shot examples come from (default: the dataset itself, never "
    "the item asked)."), show_default=False, rich_help_panel=PROMPT)]
FormatOpt = Annotated[str | None, typer.Option("--format", metavar="completion|chat", help=(
    "How a prompt with examples is sent: one plain text (completion, with no chat template) or chat turns "
    "(each example a user/assistant turn). Part of the run's identity (default: completion for spec "
    "benchmarks, as lm-eval; chat for item data)."), show_default=False, rich_help_panel=PROMPT)]
PromptKind = Annotated[str | None, typer.Option(metavar="KIND", help=(
    "Prompt kind: zero_shot, chain_of_thought, five_shot and others (default: the dataset's first; generate mode)."), rich_help_panel=PROMPT)]
LimitPerCategory = Annotated[int | None, typer.Option(
    metavar="N", help="At most N items per category (default: all).", rich_help_panel=DATA)]
Epochs = Annotated[int, typer.Option(metavar="K", help="Ask each item K times (mean@K, pass@K).", rich_help_panel=PROMPT)]
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
    rich_help_panel=options.SWITCHES)]
ThinkingBudget = Annotated[int | None, typer.Option(
    metavar="N", help=THINKING_BUDGET_HELP[:-1] + " (default: off).", rich_help_panel=REASONING)]
TopK = Annotated[int | None, typer.Option(
    metavar="N", help="Sample from the N most likely tokens (default: off).", rich_help_panel=REASONING)]
MinP = Annotated[float | None, typer.Option(metavar="NUMBER", help=(
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
    "How accuracy counts a truncated answer (token limit, unclosed thought)."), rich_help_panel=SCORING)]
ExtractOpt = Annotated[str, typer.Option(metavar="reference|robust", help=(
    "Which reading scores: the benchmark's reference answer rule (its authors' parser) or proctor's robust "
    "reader; both run on every answer and their disagreements are reported as ambiguous."),
    rich_help_panel=SCORING)]
NoAnswerOpt = Annotated[str | None, typer.Option(metavar="wrong|guess", help=(
    "How accuracy counts an answer no rule found: wrong, or guess (1/k credit for k options, the expected "
    "value of a random guess); part of the run's identity (default: as the benchmark's authors count it for "
    "the prompt kind, e.g. MMLU-Pro's TIGER-Lab kinds: guess; else wrong)."), rich_help_panel=SCORING)]
AnswerRuleOpt = Annotated[str | None, typer.Option(metavar="NAME", help=(
    "The reference answer rule that reads the answers, e.g. llm-wc-mcqa (llm-wc's) or matharena-aime "
    "(default: the prompt kind's own)."), rich_help_panel=SCORING)]
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
    "Model that grades prose answers (open-ended items need one; default: none)."), rich_help_panel=JUDGE)]
JudgeBaseUrl = Annotated[list[str] | None, typer.Option(metavar="URL", help=(
    "The judge's own server base URL; repeat to spread its load (default: its backend's environment variable, "
    "else the vendor's API; never the model's --base-url)."), rich_help_panel=JUDGE)]
JudgeApiKeyEnv = Annotated[str | None, typer.Option(metavar="VAR", help=(
    "Environment variable holding the judge's API key (default: its backend's own, e.g. OPENAI_API_KEY)."),
    rich_help_panel=JUDGE)]
JudgeTemperature = Annotated[float | None, typer.Option(metavar="NUMBER", help=(
    "The judge's sampling temperature (default: the benchmark judge's, else 0, greedy)."), rich_help_panel=JUDGE)]
JudgeMaxTokens = Annotated[int | None, typer.Option(metavar="N", help=(
    "The judge's longest reply, in tokens (default: the benchmark judge's, else 1024)."), rich_help_panel=JUDGE)]
JudgeAgreement = Annotated[int, typer.Option(metavar="N", help=(
    "Also judge the first N exact-answer items; report judge/exact-match agreement."), rich_help_panel=JUDGE)]
STOPPING = "Stop when decided"
Baseline = Annotated[str | None, typer.Option("--baseline", metavar="RUN", help=(
    "With --stop-when-decided: the run (directory or recorded run id) this one is held to (default: none)."),
    rich_help_panel=STOPPING)]
MaxDrop = Annotated[float | None, typer.Option("--max-drop", metavar="POINTS", help=(
    "With --stop-when-decided: the largest drop from the baseline allowed, in points (default: none)."),
    rich_help_panel=STOPPING)]
StopWhenDecided = Annotated[bool, typer.Option("--stop-when-decided", help=(
    "Ask the items in a seeded random order and stop once an anytime-valid confidence sequence for candidate − "
    "baseline decides: GO (exit 0) or NO-GO (exit 1); `proctor gate` reads the decision."),
    rich_help_panel=STOPPING)]


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
    from ..models.tiny import build_tiny_model  # transformers: only for this command

    path = build_tiny_model(out, seed=seed, architecture=architecture)
    typer.echo(f"tiny model ready: hf:{path}")


@with_model_options
@options.panels(limit=DATA, seed=DATA, data_file=DATA, cluster=SCORING, max_error_rate=SCORING, out=OUTPUT,
                runs_root=OUTPUT, store=OUTPUT, no_cache=OUTPUT, no_history=OUTPUT, progress=options.SWITCHES)
def run(
    datasets: Datasets = None, model: RunModel = None, mode: RunMode = None, prompt: PromptKind = None,
    shots: Shots = None, fmt: FormatOpt = None, fewshot_from: FewshotFrom = None,
    limit: options.Limit = None, limit_per_category: LimitPerCategory = None, seed: options.ChoiceSeed = 0,
    data_file: options.DataFile = None, epochs: Epochs = 1, temperature: Temperature = 0.0, top_p: TopP = None,
    max_tokens: MaxTokens = None, stop: Stop = None, gen_seed: GenSeed = None,
    reasoning_effort: ReasoningEffort = None, enable_thinking: EnableThinking = None,
    thinking_budget: ThinkingBudget = None, top_k: TopK = None, min_p: MinP = None,
    presence_penalty: PresencePenalty = None, frequency_penalty: FrequencyPenalty = None, system: System = None,
    extra_body: ExtraBody = None, truncated_as: TruncatedAsOpt = "wrong", extract: ExtractOpt = "reference",
    no_answer: NoAnswerOpt = None, answer_rule: AnswerRuleOpt = None, judge: Judge = None,
    judge_base_url: JudgeBaseUrl = None, judge_api_key_env: JudgeApiKeyEnv = None,
    judge_temperature: JudgeTemperature = None, judge_max_tokens: JudgeMaxTokens = None,
    judge_agreement: JudgeAgreement = 0, prices: Prices = None, price_in: PriceIn = None,
    price_out: PriceOut = None, max_cost: MaxCost = None, out: options.Out = None,
    runs_root: options.RunsRoot = Path("runs"), store: options.Store = None, no_cache: options.NoCache = False,
    no_history: options.NoHistory = False, progress: options.ShowProgress = None,
    max_error_rate: options.MaxErrorRate = DEFAULT_MAX_ERROR_RATE, shard: ShardOpt = None,
    cluster: options.Cluster = None, dry_run: options.DryRun = False,
    llmwc_config: LlmwcConfig = None, unsafe_exec: UnsafeExec = False, exec_limits: ExecLimitsOpt = None,
    test_imports: TestImports = False, after: After = None, export: ExportTo = None,
    shards: ex.Shards = None, executor: ex.Executor = None,
    retries: ex.Retries = 1, no_wait: ex.NoWait = False, partition: ex.Partition = None, time_min: ex.TimeMin = 60,
    gpus_per_task: ex.GpusPerTask = 0, account: ex.Account = None, sbatch: ex.Sbatch = None,
    image: ex.Image = "proctor:latest", baseline: Baseline = None, max_drop: MaxDrop = None,
    stop_when_decided: StopWhenDecided = False, retry_truncated: retry.RetryTruncated = None,
    model_options: options.ModelOptions | None = None,
) -> None:
    """Evaluate DATASETs with a model; print accuracy with a 95% CI and write a run directory.

    Exit status: 0 done; 1 finished but nothing was scored or more than --max-error-rate of the samples
    errored, or --stop-when-decided decided NO-GO; 2 refused before or stopped early (bad input, or the first
    answers all failed); 3 stopped by --max-cost."""
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from ..run.build import OPTION_NAMES
    from ..run.pipeline import RunOptions

    given = model_options or options.ModelOptions({})
    run_options = RunOptions(out=out, runs_root=runs_root, store=store, use_cache=not no_cache,
                             record_history=not no_history, progress=progress, command=["proctor", *sys.argv[1:]],
                             outputs=exports(export or [], dry_run or shards is not None or executor is not None))
    flags = {k: v for k, v in locals().items() if k in OPTION_NAMES} | {"format": fmt}
    try:
        if llmwc_config is not None and retry_truncated is not None:
            raise ProctorError("--retry-truncated: not with --config (retry one run directory)")
        if llmwc_config is not None:  # llm-wc (proctor.interop.llmwc_config): the config names benchmark, models
            refuse_unapplied()
            status = run_config(llmwc_config, ConfigRunOptions(
                model=model, data_file=data_file, out=out, store=store, progress=progress, use_cache=not no_cache,
                record_history=not no_history, max_tokens=max_tokens, prices=prices, max_cost=max_cost,
                max_error_rate=max_error_rate, http=backend_options(given)))
        else:
            specs = (_specs(datasets or [], model, flags, given) if retry_truncated is None else retry.retry_specs(
                retry_truncated, datasets or [], model, flags, given.set(), store, _elsewhere(shards, executor, dry_run)))
            sharded = ex.settings_of(shards, executor, retries, partition, time_min, gpus_per_task, account, sbatch)
            if sharded is not None and not dry_run:  # the shards on an engine (proctor.run.executors), then one merge
                status = ex.run_sharded(specs, run_options, sharded, wait=not no_wait, image=image,
                                        max_error_rate=max_error_rate)
            elif dry_run:  # what each run would ask and cost: nothing is sent or written
                status = show_estimates(specs, run_options)
            else:
                status = run_and_report(specs, run_options, max_error_rate)
    except ProctorError as e:
        raise with_flags(e) from None
    if status:
        raise typer.Exit(status)


def _specs(datasets: list[str], model: str | None, flags: dict[str, Any], given: options.ModelOptions) -> list[RunSpec]:
    """Check the flags (before anything loads) and build a spec per dataset."""
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from ..benchmarks.registry import benchmark_names, declared_kinds
    from ..data.prompts import CHAIN_OF_THOUGHT, FIVE_SHOT, ZERO_SHOT
    from ..run.build import build_spec, eval_options

    ITEM_KINDS = (ZERO_SHOT, CHAIN_OF_THOUGHT, FIVE_SHOT)  # an item file's (proctor.data.prompts, with its own examples)

    if not datasets or model is None:
        raise ProctorError("give DATASETs and --model (or --config LLMWC.yaml)")
    http: dict[str, Any] = {k: given.set().get(k) for k in ("concurrency", "timeout", "max_retries")}
    check_run_args(  # before torch is imported or a model loads: a typo costs milliseconds
        datasets=datasets, builtins=benchmark_names(), model=model, **{k: flags[k] for k in _CHECKED}, **http,
        prompt_kinds=tuple(dict.fromkeys(kind for d in datasets for kind in declared_kinds([d]) or ITEM_KINDS)))
    if flags["data_file"] is not None and len(datasets) > 1:
        raise ProctorError("--data-file applies to one dataset at a time")
    opts = eval_options(**flags)  # every range is the spec's own, named by its flag (cli.fields)
    check_sendable(model, opts.generation)  # a setting the backend cannot send, by flag
    given.check_applicable([model])  # the model's options are the model's: the judge has its own
    return [build_spec(name, model, opts, given.for_spec(model)) for name in datasets]


def _elsewhere(shards: int | None, executor: str | None, dry_run: bool) -> str | None:
    """The flag that runs specs another way than here, whole (`--retry-truncated` refuses them)."""
    return "--shards" if shards is not None else "--executor" if executor is not None else (
        "--dry-run" if dry_run else None)


_CHECKED = ("judge", "mode", "prompt", "data_file")  # ranges (epochs, temperature…) are the spec models' own


def exports(given: list[str], refused: bool) -> tuple[RunOutput, ...]:
    """`--export FORMAT:DIR` as the pipeline's outputs (`proctor.interop.exporters.Export`)."""
    from ..interop.exporters import Export  # the library's run entry points load when a run starts

    if given and refused:
        raise ProctorError("--export: not with --dry-run, --shards or --executor (export the run directories "
                           "with `proctor export` once they are merged)")
    outputs = []
    for text in given:
        to, sep, where = text.partition(":")
        if not sep or not to or not where:
            raise ProctorError(f"--export {plain(text)!r}: give FORMAT:DIR (e.g. inspect:out/logs)")
        try:
            outputs.append(Export(to.strip().lower(), Path(where)))
        except InputError as e:
            raise ProctorError(f"--export: {e.problems[0].message}") from None
    return tuple(outputs)


def _exported(output: RunOutput, paths: list[Path]) -> None:
    where = f" → {os.path.commonpath(paths)}" if paths else ""
    typer.echo(plain(f"{output.name}: {len(paths)} files{where}"))


def run_and_report(specs: list[RunSpec], run_options: RunOptions, max_error_rate: float) -> int:
    """Run `specs` through the pipeline, printing each run's results as it ends; the worst exit status."""
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from ..run import pipeline
    from ..run.pipeline import Events

    statuses = []

    def finished(log: RunLog) -> None:
        if log.results is not None:
            print_results(log)
            typer.echo(plain(finished_line(log)))
            retry.print_accuracies(log)
        statuses.append(error_status(log, max_error_rate))
        if log.manifest.sequential is not None:  # --stop-when-decided: the decision, exit 1 on NO-GO as `gate`
            typer.echo(plain(log.manifest.sequential.text()))
            statuses.append(1 if log.manifest.sequential.decision == "NO-GO" else 0)

    pipeline.run(specs, run_options, Events(resuming=lambda line: note(plain(line)), hint=_hint_suites,
                                            finished=finished, wrote=_exported))
    return max(statuses, default=0)


def show_estimates(specs: list[RunSpec], run_options: RunOptions) -> int:
    """`--dry-run`: what each spec's run would ask and cost (proctor.run.estimate); nothing is sent or written."""
    from ..run import pipeline  # the library's run entry points load when a run starts

    for estimate in pipeline.estimate(specs, run_options):
        for line in estimate.lines():
            typer.echo(plain(line))
    return 0


def say_resume(state: RunState) -> None:
    """On stderr, for a run found half or wholly done: `note: resuming DIR: 10/16 done, 6 to ask`."""
    line = state.resume_line()
    if line is not None:
        note(plain(line))


def _hint_suites(task: Task, spec: RunSpec) -> None:
    """Before generating for probsem suites: say that they are meant to be scored by log-probability."""
    source = _relative(str(task.source.get("path") or task.name))
    hint(f"{task.name} is a probsem suite, scored by log-probability as probsem does: proctor score "
         f"{source} --model MODEL (or run --mode logprob); generating answers instead")


def _relative(path: str) -> str:
    """`path` relative to the working directory when it is inside it (what the user typed, usually)."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
