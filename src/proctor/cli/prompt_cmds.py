"""`proctor prompt`: the exact request a run would send for one item, to diff against another harness."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ..benchmarks.registry import Prompting, load_task
from ..core.model import GenerateRequest, request_prompt
from ..core.spec import GenerationSpec
from ..data.prompts import bind_tokenizer, check_kind
from ..data.records import Item
from ..data.tasks import Task
from ..models.openai import TokenSplitter
from ..run.build import eval_options
from ..run.resolve import budget_for
from ..util.errors import ProctorError
from ..util.termsafe import json_safe, plain, plain_text
from .fields import with_flags
from .run_options import with_run_options

#: the run options `prompt` takes (the table's flags, help and defaults: proctor.core.options)
PROMPT_OPTIONS = ("prompt", "shots", "format", "fewshot_from", "data_file", "seed", "temperature", "top_p",
                  "max_tokens", "stop")

ItemId = Annotated[str, typer.Option("--item", metavar="ID", help=(
    "The item: proctor's identifier (e.g. mmlu-pro.70) or the upstream id (question_id, problem_idx, "
    "Record ID)."))]
AsJson = Annotated[bool, typer.Option("--json", help="Print the request as JSON.")]
CotExamples = Annotated[Path | None, typer.Option("--cot-examples", metavar="PATH", help=(
    "GPQA: the authors' chain_of_thought_examples.json (default: one beside --data-file)."))]
Instruction = Annotated[str | None, typer.Option(metavar="TEXT", help=(
    "AIME 2025: the instruction put before the problem (default: llm-wc's)."))]
Tokenizer = Annotated[str | None, typer.Option(metavar="PATH", help=(
    "MMLU-Pro tiger-local: the model's tokenizer (path or hub id) that fits the shots to the prompt budget "
    "(default: none, five shots)."))]


def find_item(task: Task, wanted: str) -> Item:
    """The item whose identifier, or upstream id, is `wanted`; else a clear error naming a few ids."""
    for item in task.items:
        upstream = str(item.metadata.get("question.original_id", ""))
        if wanted in (item.identifier, upstream):
            return item
    some = ", ".join(it.identifier for it in task.items[:3])
    raise ProctorError(f"{task.name} has no item {wanted!r} (its items are named like {some}, or by upstream id)")


def request_for(task: Task, item: Item, kind: str, settings: GenerationSpec) -> dict[str, Any]:
    """The request `proctor run` sends for `item`: messages with roles (a completion: its text, `prompt`), stop
    sequences, generation settings."""
    check_kind(kind, task.prompts.kinds, task.name)
    final = budget_for(task, kind, settings)  # what `run` resolves for the kind
    request = GenerateRequest(task.prompts.messages(item, kind), final, completion=task.sends_text(kind))
    prompt = request_prompt(request)
    return {
        "benchmark": task.name,
        "item": item.identifier,
        "prompt_kind": kind,
        "template_hash": task.prompts.template_hash(kind),
        **({"prompt": prompt, "completion": True} if isinstance(prompt, str) else {"messages": prompt}),
        "settings": final.as_dict(),
    }


@with_run_options(PROMPT_OPTIONS)
def show_prompt(
    dataset: Annotated[str, typer.Argument(metavar="BENCHMARK", help=(
        "A built-in benchmark, a benchmark spec (name or file) or an item file."))],
    item: ItemId,
    flags: Mapping[str, Any] | None = None,
    cot_examples: CotExamples = None,
    instruction: Instruction = None,
    tokenizer: Tokenizer = None,
    as_json: AsJson = False,
) -> None:
    """Print the exact request a run would send for one item: messages with their roles (a completion: its text,
    as sent), stop sequences and generation settings. With --json, machine-readable, to diff against another
    harness."""
    given = flags or {}
    prompt: str | None = given.get("prompt")
    if prompt is not None and not prompt.strip():  # '' is no kind, never "the default one"
        raise ProctorError("--prompt: empty; name a prompt kind (or leave the option out for the default)")
    try:  # the spec's own checks, as `run`'s, before the data is read; errors name the flags
        checked = eval_options(**{k: given.get(k) for k in ("temperature", "top_p", "max_tokens", "stop", "shots")})
    except ProctorError as e:
        raise with_flags(e) from None
    task = load_task(dataset, data_file=given.get("data_file"), seed=given.get("seed", 0),
                     prompt_options={"cot_examples": cot_examples, "instruction": instruction},
                     prompting=Prompting(shots=checked.shots, fmt=given.get("format"),
                                         fewshot_from=given.get("fewshot_from"), prompt_kind=prompt))
    if tokenizer is not None:
        splitter = TokenSplitter(tokenizer)
        bind_tokenizer(task.prompts, lambda text: len(splitter.encode(text)))
    kind = task.prompts.kinds[0] if prompt is None else prompt
    check_kind(kind, task.prompts.kinds, task.name)  # a wrong kind is named before a wrong item
    request = request_for(task, find_item(task, item), kind, checked.generation)
    if as_json:  # text from data never reaches the terminal raw (the JSON value is the same)
        typer.echo(json_safe(json.dumps(request, indent=2, ensure_ascii=False)))
        return
    typer.echo(plain(f"# {request['benchmark']} · {request['item']} · prompt {request['prompt_kind']} "
                     f"({request['template_hash']})"))
    typer.echo("# settings: " + json_safe(json.dumps(request["settings"], ensure_ascii=False)))
    if "prompt" in request:  # a completion: one text, no roles, no chat template
        typer.echo("--- text (a completion: sent as it is, no chat template) ---")
        typer.echo(plain_text(request["prompt"]))
    for m in request.get("messages", ()):
        typer.echo(f"--- {plain(m['role'])} ---")
        typer.echo(plain_text(m["content"]))


def register(app: typer.Typer) -> None:
    """Add `prompt` to `app`."""
    app.command("prompt", epilog=(
        "Examples:\n\n  proctor prompt mmlu-pro --data-file examples/upstream/mmlu_pro --item 100 --prompt tiger-local "
        "--json\n\n  proctor prompt mmlu-pro --data-file examples/upstream/mmlu_pro --item 100\n"))(show_prompt)
