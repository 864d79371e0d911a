"""`run --dry-run`: each dataset's requests, prompt tokens, most output tokens and cost range (proctor.estimate);
nothing is sent, nothing is written, no run directory or history entry is made."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ..runner import RunConfig
    from ..tasks import Task
    from .run_cmds import _Models


def show_dry_run(tasks: list[Task], models: _Models, config: RunConfig) -> None:
    """Print what each task's run would ask, with the settings the run would use (its token budget, the
    prompt kind's stop) and the prompts it would build (fitted to the model's tokenizer where a kind does)."""
    from ..estimate import estimate_run
    from ..pricing import token_counter
    from ..prompts import bind_tokenizer, kind_settings
    from ..termsafe import plain
    from .run_cmds import budget_for

    model = models.load()[0]  # for its tokenizer: nothing is sent to it
    for task in tasks:
        settings = budget_for(task, kind_settings(task.prompts, config.prompt_kind or task.prompts.kinds[0],
                                                  config.settings))
        bind_tokenizer(task.prompts, token_counter(model))
        estimate = estimate_run(task, model, models.model_spec, replace(config, settings=settings))
        for line in estimate.lines():
            typer.echo(plain(line))
