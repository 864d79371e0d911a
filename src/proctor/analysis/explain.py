"""Why two runs' numbers differ: `proctor explain A B`.

Two kinds of evidence, put side by side:

* what differs between the runs as a whole — every manifest field (the RunSpec's settings, the backend identity:
  dtype, engine, weights; the answer rule; the data's content hash), grouped by what it touches;
* what differs item by item — the prompts sent (the first differing prompt is shown, with where it first
  differs) and the flipped samples (right in one run, wrong in the other), each put down to one cause: an error or
  truncation on one side, the same raw output read differently, a different output to a different prompt, a
  different output to the same prompt.

Each cause carries its share of the score difference (its samples' net A − B, in points of the shared samples),
and the causes are ranked by it; the run-level differences that can produce a cause are listed with it. The
paired difference of the two runs and its 95% interval are `proctor.stats.comparison.paired_difference`'s, as `compare`
reports them. An imported run (lm-eval, Inspect, llm-wc) is a run directory like any other and can be one side.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from ..log.runlog import MANIFEST, Outcome, RunLog, Sample
from ..metrics.results import read_run
from ..run.store import item_scores
from ..stats.comparison import PairedDifference, paired_difference
from ..util.textio import read_json_record

# manifest fields that say when, where and by whom, not what was evaluated
_VOLATILE = ("run_id", "started_at", "finished_at", "provenance.git_sha", "provenance.host", "provenance.proctor_version",
             "dataset.path", "command", "runlog_version", "cost", "status", "interrupted", "elapsed_s")

# what a field touches: the first group whose words the field's path holds
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("data", ("content_hash", "dataset.sha256", "revision", "data_file", "limit", "subjects", "n_items", "dataset.seed",
              "dataset.name")),
    ("answer rule", ("answer_rule", "extract", "no_answer", "truncated_as", "norm", "join", "metric")),
    ("prompt", ("prompt", "template", "shots", "format", "system", "fewshot", "choice_order")),
    ("backend", ("backend", "dtype", "engine", "weights", "device", "batch", "gpu", "chat_template", "max_length",
                 "model.settings", "capabilities")),
    ("generation", ("generation", "temperature", "max_tokens", "top_p", "top_k", "stop", "reasoning", "thinking",
                    "epochs")),
    ("model", ("model", "judge")),
)

# which run-level groups can cause which kind of flip
CAUSES = {
    "error or truncation on one side": ("backend", "generation", "model"),
    "same output, read differently": ("answer rule",),
    "different prompt, different output": ("prompt", "data"),
    "same prompt, different output": ("model", "backend", "generation"),
}


class Difference(BaseModel):
    """One manifest field on which the runs differ."""

    group: str
    field: str
    a: Any = None
    b: Any = None


class FlipCause(BaseModel):
    """The flipped samples put down to one cause, and their share of the score difference."""

    cause: str
    n: int  # flipped samples
    a_ahead: int  # of them, right (or better) in A
    b_ahead: int
    points: float  # their net A − B over the shared samples, in points
    sample_ids: list[str]
    settings: list[str]  # the differing fields that can produce this cause


class PromptDifference(BaseModel):
    """The first shared sample whose prompt differs: both prompts and where they part."""

    sample_id: str
    offset: int
    a: str
    b: str


class Explanation(BaseModel):
    """What `proctor explain` found (see the module doc)."""

    a: str
    b: str
    n_shared: int  # samples both runs hold
    difference: PairedDifference | None  # A − B on their shared scored items, with its 95% interval
    differences: list[Difference]
    prompts_differ: int
    first_prompt: PromptDifference | None
    causes: list[FlipCause]  # ranked by |points|
    only_in_a: int
    only_in_b: int

    def lines(self) -> Iterator[str]:
        """The explanation as text, most important first."""
        d = self.difference
        if d is not None:
            yield (f"A − B: {100 * d.diff:+.1f} points [{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}] on {d.n:,} "
                   f"shared items (paired 95% interval)")
        yield f"{self.n_shared:,} shared samples; {sum(c.n for c in self.causes):,} flipped"
        for rank, c in enumerate(self.causes, 1):
            why = f" ← {', '.join(c.settings)}" if c.settings else ""
            yield (f"{rank}. {c.cause}: {c.n} flipped ({c.a_ahead} to A, {c.b_ahead} to B), {c.points:+.1f} points"
                   f"{why}")
        if not self.causes:
            yield "no sample flipped"
        by_group: dict[str, list[Difference]] = {}
        for diff in self.differences:
            by_group.setdefault(diff.group, []).append(diff)
        for group, diffs in by_group.items():
            yield f"{group}: {len(diffs)} field(s) differ"
            for diff in diffs:
                yield f"  {diff.field}: A {_short(diff.a)}; B {_short(diff.b)}"
        if not self.differences:
            yield "no setting differs"
        if self.first_prompt is not None:
            p = self.first_prompt
            yield f"prompts differ on {self.prompts_differ:,} shared samples; the first, {p.sample_id}, at character {p.offset}:"
            yield f"  A: {_short(p.a[max(0, p.offset - 40):p.offset + 80])}"
            yield f"  B: {_short(p.b[max(0, p.offset - 40):p.offset + 80])}"
        if self.only_in_a or self.only_in_b:
            yield f"left out: {self.only_in_a} sample(s) only in A, {self.only_in_b} only in B"


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _flat(d: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(d, dict) and d:
        for k, v in d.items():
            yield from _flat(v, f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, d


def group_of(field: str) -> str:
    """What a manifest field touches (`GROUPS`); "settings" when nothing more specific."""
    leaf = field.lower()
    for group, words in GROUPS:
        if any(w in leaf for w in words):
            return group
    return "settings"


def manifest_differences(a: dict[str, Any], b: dict[str, Any]) -> list[Difference]:
    """Every manifest field whose values differ (the spec's copy of a field the manifest also holds shown once)."""
    fa, fb = dict(_flat(a)), dict(_flat(b))
    seen: set[tuple[str, str, str]] = set()
    out = []
    for key in [*fa, *(k for k in fb if k not in fa)]:
        if any(key == v or key.startswith(v + ".") for v in _VOLATILE):
            continue
        va, vb = fa.get(key), fb.get(key)
        if va == vb:
            continue
        once = (key.rsplit(".", 1)[-1], json.dumps(va, sort_keys=True, default=str),
                json.dumps(vb, sort_keys=True, default=str))
        if once in seen:
            continue
        seen.add(once)
        out.append(Difference(group=group_of(key), field=key, a=va, b=vb))
    return out


def _prompt_text(s: Sample) -> str:
    return s.prompt if isinstance(s.prompt, str) else json.dumps(s.prompt, ensure_ascii=False, default=str)


def _offset(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


_BAD = (Outcome.ERROR, Outcome.TRUNCATED)


def flip_cause(a: Sample, b: Sample, same_prompt: bool) -> str | None:
    """Why two runs' answers to one sample differ in credit (None: they do not)."""
    sa, sb = a.score or 0.0, b.score or 0.0
    bad = (a.outcome in _BAD) != (b.outcome in _BAD)
    if sa == sb and not bad:
        return None
    if a.outcome in _BAD or b.outcome in _BAD:
        return "error or truncation on one side"
    if a.raw_output is not None and a.raw_output == b.raw_output:
        return "same output, read differently"
    return "same prompt, different output" if same_prompt else "different prompt, different output"


def explain_logs(a: RunLog, b: RunLog, n_boot: int = 2000, seed: int = 0) -> Explanation:
    """Explain how run `a` differs from run `b` (see the module doc)."""
    ma, mb = read_json_record(a.path / MANIFEST), read_json_record(b.path / MANIFEST)
    differences = manifest_differences(ma, mb)
    sa_by = {s.sample_id: s for s in a.samples}
    sb_by = {s.sample_id: s for s in b.samples}
    shared = [k for k in sa_by if k in sb_by]
    flips: dict[str, list[tuple[str, float]]] = {}
    prompts_differ, first = 0, None
    for sid in shared:
        x, y = sa_by[sid], sb_by[sid]
        px, py = _prompt_text(x), _prompt_text(y)
        same = px == py
        if not same:
            prompts_differ += 1
            if first is None:
                first = PromptDifference(sample_id=sid, offset=_offset(px, py), a=px, b=py)
        cause = flip_cause(x, y, same)
        if cause is not None:
            flips.setdefault(cause, []).append((sid, (x.score or 0.0) - (y.score or 0.0)))
    n = max(len(shared), 1)
    groups_seen = {d.group for d in differences}
    causes = [
        FlipCause(cause=cause, n=len(got), a_ahead=sum(d > 0 for _, d in got), b_ahead=sum(d < 0 for _, d in got),
                  points=100 * sum(d for _, d in got) / n, sample_ids=[sid for sid, _ in got],
                  settings=[d.field for d in differences if d.group in CAUSES[cause] and d.group in groups_seen])
        for cause, got in flips.items()
    ]
    causes.sort(key=lambda c: (-abs(c.points), -c.n, c.cause))
    return Explanation(a=str(a.path), b=str(b.path), n_shared=len(shared), difference=_paired(a, b, n_boot, seed),
                       differences=differences, prompts_differ=prompts_differ, first_prompt=first, causes=causes,
                       only_in_a=len(sa_by.keys() - sb_by.keys()), only_in_b=len(sb_by.keys() - sa_by.keys()))


def _paired(a: RunLog, b: RunLog, n_boot: int, seed: int) -> PairedDifference | None:
    """A − B on the items both scored, with `compare`'s paired interval (None: no shared scored item)."""
    ia, ib = item_scores(a.samples), item_scores(b.samples)
    items = sorted(ia.keys() & ib.keys())
    if not items:
        return None
    return paired_difference("overall", np.array([ia[i].score for i in items]), np.array([ib[i].score for i in items]),
                             n_boot, seed)


def explain_runs(a: str | Path, b: str | Path, n_boot: int = 2000, seed: int = 0) -> Explanation:
    """`explain_logs` of two run directories."""
    return explain_logs(read_run(a), read_run(b), n_boot, seed)


__all__ = ["CAUSES", "Difference", "Explanation", "FlipCause", "PromptDifference", "explain_logs", "explain_runs",
           "flip_cause", "group_of", "manifest_differences"]
