"""`Builtin`: the metadata a benchmark file declares about itself (the registry only gathers them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..scoring.extract import AnswerRule
from .hub import HubSource, Loaded


@dataclass(frozen=True)
class Builtin:
    """One built-in benchmark: how to load it, where it lives, how many questions to expect."""

    name: str
    loader: Callable[..., Loaded]  # (data_file=None, seed=0) -> Loaded
    source: HubSource
    size: int
    description: str
    # default generation budget (a user's --max-tokens wins), as the benchmark's authors or reports publish it
    max_tokens: int | None = None
    # each prompt kind's answer rule: the reference rule (a name in proctor.scoring.extract.ANSWER_RULES, the
    # parser behind the authors' published numbers) for the kinds its authors' code reads with it; None for
    # proctor's own kinds, read by proctor's reader alone. Every kind the benchmark offers is listed. A rule
    # outside that table (a benchmark's own grader: IFEval, BBH) is given as the AnswerRule itself.
    answer_rules: Mapping[str, str | AnswerRule | None] = field(default_factory=dict)
    # the item attribute whose items share errors (proctor.data.tasks.Task.cluster): intervals count its clusters
    cluster: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source.repo,
            "config": self.source.config,
            "split": self.source.split,
            "size": self.size,
            "gated": self.source.gated,
            "url": self.source.url,
            "description": self.description,
            "max_tokens": self.max_tokens,
            "answer_rules": {k: r.name if isinstance(r, AnswerRule) else r for k, r in self.answer_rules.items()},
        }
