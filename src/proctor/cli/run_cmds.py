"""`proctor run`: evaluate one or more datasets with one model, by generation or by log-likelihood."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.options import APPLIED, OPTIONS, SCORING, SWITCHES
from ..core.spec import RunSpec
from ..log.runlog import MANIFEST, RunLog, read_manifest
from ..util.errors import InputError, ProctorError
from ..util.termsafe import plain
from . import executor_cmds as ex
from . import options
from . import retry_opts as retry
from .checks import check_request_limits, check_run_args
from .fields import with_flags
from .llmwc_cmds import ConfigRunOptions, backend_options, refuse_unapplied, run_config
from .messages import hint, note
from .options import check_sendable, with_model_options
from .outcome import error_status
from .run_options import Output, Sharding, with_records, with_run_options
from .summary import finished_line, print_results

if TYPE_CHECKING:
    from ..data.tasks import Task
    from ..run.claim import Loaded
    from ..run.outputs import RunOutput
    from ..run.pipeline import Planned, RunOptions
    from ..run.runner import RunState

RUN_EXAMPLES = """Examples (on the bundled examples, offline):

  proctor tiny-model out/tiny
  proctor run examples/items/demo.jsonl --model hf:out/tiny --limit 4
  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model hf:out/tiny --mode logprob
  proctor run examples/questions/demo.json --model scripted:first --epochs 2 --temperature 0.7
"""
OUTPUT = options.OUTPUT
CONFIG_APPLIED = tuple(o.name for o in OPTIONS if o.config == APPLIED)  # `run --config` applies these run options
TINY_EXAMPLES = """Example:

  proctor tiny-model out/tiny
  proctor run examples/items/demo.jsonl --model hf:out/tiny --limit 4
"""
Datasets = Annotated[list[str] | None, typer.Argument(
    metavar="DATASET...", show_default=False,
    help="Built-in benchmark names (`proctor datasets`) or files/directories in any proctor format (required "
         "unless --config).")]
RunModel = Annotated[str | None, typer.Option(
    "--model", "-m", metavar="SPEC", show_default=False,
    help="Model: hf:PATH-OR-HUB-ID, openai:MODEL, anthropic:MODEL, vllm:PATH-OR-HUB-ID or scripted:RULE (required unless --config).")]
LlmwcConfig = Annotated[Path | None, typer.Option(
    "--config", metavar="LLMWC.yaml",
    help="An llm-wc config: run every model it lists, write llm-wc's results layout (default: none).")]


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
@options.panels(out=OUTPUT, runs_root=OUTPUT, store=OUTPUT, no_cache=OUTPUT, no_history=OUTPUT,
                progress=SWITCHES, max_error_rate=SCORING)
@with_records(output=Output, sharding=Sharding, again=retry.Again)
@with_run_options()
def run(datasets: Datasets = None, model: RunModel = None, flags: Mapping[str, Any] | None = None,
        output: Output | None = None, sharding: Sharding | None = None, again: retry.Again | None = None,
        llmwc_config: LlmwcConfig = None, model_options: options.ModelOptions | None = None) -> None:
    """Evaluate DATASETs with a model; print accuracy with a 95% CI and write a run directory.

    Exit status: 0 done; 1 finished but nothing was scored, every answer was cut at the token limit, more \
than --max-error-rate of the samples errored, or --stop-when-decided decided NO-GO; 2 refused before or \
stopped early (bad input, or the first answers all failed); 3 stopped by --max-cost."""
    flags, output, sharding, again = flags or {}, output or Output(), sharding or Sharding(), again or retry.Again()
    given = model_options or options.ModelOptions({})
    try:
        if llmwc_config is not None:  # llm-wc (proctor.interop.llmwc_config): the config names benchmark, models
            if again.retry_truncated is not None or again.budgets is not None:
                raise ProctorError(f"{'--budgets' if again.budgets else '--retry-truncated'}: not with --config "
                                   "(retry one run directory)")
            refuse_unapplied()
            status = run_config(llmwc_config, _config_options(model, flags, output, given))
        elif again.budgets is not None:
            status = _run_ladder(datasets or [], model, flags, output, sharding, again, given)
        else:
            status = _run_specs(datasets or [], model, flags, output, sharding, again.retry_truncated, given)
    except ProctorError as e:
        raise with_flags(e) from None
    if status:
        raise typer.Exit(status)


def _config_options(model: str | None, flags: Mapping[str, Any], output: Output,
                    given: options.ModelOptions) -> ConfigRunOptions:
    """What `run --config` applies of the command line (the table's options marked APPLIED, and the output)."""
    return ConfigRunOptions(
        model=model, out=output.out, store=output.store, progress=output.progress, use_cache=not output.no_cache,
        record_history=not output.no_history, max_error_rate=output.max_error_rate, http=backend_options(given),
        **{name: flags[name] for name in CONFIG_APPLIED})


def _run_specs(datasets: list[str], model: str | None, flags: Mapping[str, Any], output: Output, sharding: Sharding,
               retry_truncated: str | None, given: options.ModelOptions) -> int:
    """Build the specs and run them here, on an executor, or not at all (--dry-run); the exit status."""
    elsewhere = output.dry_run or sharding.shards is not None or sharding.executor is not None
    run_options = _run_options(output, exports_refused=elsewhere)
    specs = (_specs(datasets, model, flags, given) if retry_truncated is None else retry.retry_specs(
        retry_truncated, datasets, model, flags, given.set(), output.store,
        _elsewhere(sharding.shards, sharding.executor, output.dry_run)))
    settings = sharding.settings()
    if output.claim is not None:  # refused unless the resolved spec and its data are the claim's
        if settings is not None or retry_truncated is not None:
            raise ProctorError("--claim: not with --shards, --executor or --retry-truncated (run the claimed spec whole)")
        return run_under_claim(specs, run_options, output)
    if settings is not None and not output.dry_run:  # the shards on an engine (proctor.run.executors), then a merge
        return ex.run_sharded(specs, run_options, settings, wait=not sharding.no_wait, image=sharding.image,
                              max_error_rate=output.max_error_rate)
    if output.dry_run:  # what each run would ask and cost: nothing is sent or written
        return show_estimates(specs, run_options)
    return run_and_report(specs, run_options, output.max_error_rate)


def _run_ladder(datasets: list[str], model: str | None, flags: Mapping[str, Any], output: Output,
                sharding: Sharding, again: retry.Again, given: options.ModelOptions) -> int:
    """`--budgets`: the first run at the first budget, then a retry of each step at the next while any sample is
    still truncated (proctor.run.retry; a ladder killed mid-way resumes step by step with the same command)."""
    from dataclasses import replace

    from ..run import pipeline
    from ..run.retry import retry_spec

    elsewhere = "--retry-truncated" if again.retry_truncated is not None else "--claim" if output.claim else _elsewhere(
        sharding.shards, sharding.executor, output.dry_run)
    if elsewhere is not None:
        raise ProctorError(f"--budgets: not with {elsewhere} (each step retries the one before it, here)")
    budgets = retry.ladder_budgets(again.budgets or "", flags, datasets)
    run_options = _run_options(output, exports_refused=False)
    specs = _specs(datasets, model, {**flags, "max_tokens": budgets[0]}, given)
    statuses: list[int] = []
    for i, budget in enumerate(budgets):
        step = replace(run_options, out=output.out / f"max-tokens-{budget}" if output.out is not None else None)
        planned = pipeline.plan(specs, step)
        if any(p.spec.agent is not None for p in planned):  # the first step's: every later one retries it
            raise ProctorError("--budgets: a trajectory is cut by the agent's limits (--max-turns…), not by "
                               "--max-tokens; raise those and run again")
        logs: list[RunLog] = []
        statuses.append(report_planned(planned, step, output.max_error_rate, logs))
        if i + 1 == len(budgets) or not logs:
            break
        results = logs[0].results
        if results is None or not results.overall.n_truncated:
            note(f"--budgets: nothing truncated at --max-tokens {budget}; the ladder stops there")
            break
        specs = [retry_spec(logs[0].path, budgets[i + 1], given.set())]
    return max(statuses, default=0)


def _run_options(output: Output, exports_refused: bool) -> RunOptions:
    """How `output` says the runs go (directory, store, cache, history, progress, exports), and the command line."""
    from ..run.pipeline import RunOptions  # the library's run entry points load when a run starts

    return RunOptions(out=output.out, runs_root=output.runs_root, store=output.store, use_cache=not output.no_cache,
                      record_history=not output.no_history, progress=output.progress,
                      command=["proctor", *sys.argv[1:]], outputs=exports(output.export or [], exports_refused))


def _specs(datasets: list[str], model: str | None, flags: Mapping[str, Any], given: options.ModelOptions) -> list[RunSpec]:
    """Check the flags (before anything loads) and build a spec per dataset."""
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from ..benchmarks.registry import benchmark_names, declared_kinds
    from ..data.prompts import CHAIN_OF_THOUGHT, FIVE_SHOT, ZERO_SHOT
    from ..run.build import build_spec, eval_options

    ITEM_KINDS = (ZERO_SHOT, CHAIN_OF_THOUGHT, FIVE_SHOT)  # an item file's (proctor.data.prompts, with its own examples)

    if not datasets or model is None:
        raise ProctorError("give DATASETs and --model (or --config LLMWC.yaml)")
    http = given.set()
    check_request_limits(http.get("concurrency"), http.get("timeout"), http.get("max_retries"))
    check_run_args(  # before torch is imported or a model loads: a typo costs milliseconds
        datasets=datasets, builtins=benchmark_names(), model=model, **{k: flags.get(k) for k in _CHECKED},
        prompt_kinds=tuple(dict.fromkeys(kind for d in datasets for kind in declared_kinds([d]) or ITEM_KINDS)))
    if flags.get("data_file") is not None and len(datasets) > 1:
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
    from ..run import pipeline  # the library's run entry points load when a run starts (start-up time)

    return report_planned(pipeline.plan(specs, run_options), run_options, max_error_rate)


def report_planned(planned: list[Planned], run_options: RunOptions, max_error_rate: float,
                   logs: list[RunLog] | None = None) -> int:
    """Run planned specs, printing each run's results as it ends (its log added to `logs`); the worst exit
    status."""
    from ..run import pipeline
    from ..run.pipeline import Events

    statuses = []

    def finished(log: RunLog) -> None:
        if logs is not None:
            logs.append(log)
        if log.results is not None:
            print_results(log)
            typer.echo(plain(finished_line(log)))
            retry.print_accuracies(log)
        statuses.append(error_status(log, max_error_rate))
        if log.manifest.sequential is not None:  # --stop-when-decided: the decision, exit 1 on NO-GO as `gate`
            typer.echo(plain(log.manifest.sequential.text()))
            statuses.append(1 if log.manifest.sequential.decision == "NO-GO" else 0)

    pipeline.execute(planned, Events(resuming=lambda line: note(plain(line)), hint=_hint_suites, finished=finished,
                                     wrote=_exported), outputs=run_options.outputs)
    return max(statuses, default=0)


def show_estimates(specs: list[RunSpec], run_options: RunOptions) -> int:
    """`--dry-run`: what each spec's run would ask and cost (proctor.run.estimate); nothing is sent or written."""
    from ..run import pipeline  # the library's run entry points load when a run starts

    for estimate in pipeline.estimate(specs, run_options):
        for line in estimate.lines():
            typer.echo(plain(line))
    return 0


def run_under_claim(specs: list[RunSpec], run_options: RunOptions, output: Output) -> int:
    """`run --claim`: refused (exit 2, one line) unless the one resolved spec and its data are the claim's; the
    claim's hash goes into the manifest."""
    from ..run import pipeline
    from ..run.claim import check_before_run, read_claim

    assert output.claim is not None
    if len(specs) != 1:
        raise ProctorError("--claim: a claim is about one run: give one DATASET")
    if specs[0].stop_when is not None:
        raise ProctorError("--claim: not with --stop-when-decided (a claim is decided on the whole run's interval)")
    loaded = read_claim(output.claim)
    own = replace(run_options, claim=loaded.record())
    planned = pipeline.plan(specs, own)
    check_before_run(loaded, planned[0].spec, planned[0].task, output.claim)
    _began_under(loaded, planned[0], output.claim)
    if output.dry_run:
        return show_estimates(specs, own)
    return report_planned(planned, own, output.max_error_rate)


def _began_under(loaded: Loaded, planned: Planned, where: Path) -> None:
    """A run already begun is resumed under a claim only when it began under it."""
    run_dir = planned.state.run_dir
    if not (run_dir / MANIFEST).exists():
        return
    began = read_manifest(run_dir).claim
    if began is None or began.sha256 != loaded.sha256:
        what = "under another claim" if began is not None else "without a claim"
        raise InputError.at(where, f"{run_dir} began {what}: a claim is registered before its run begins "
                                   "(choose another -o directory)")


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
