"""`run --baseline RUN --max-drop D --stop-when-decided`: ask the items in a seeded random order, a batch at a time,
and stop once the anytime-valid confidence sequence for candidate − baseline (`proctor.stats.sequential`) decides
the gate: GO (its lower end above −D) or NO-GO (its upper end below −D).

The order is the spec's (`StopRule.order_seed`), so a resumed run asks the same items next. After each batch the
sequence is computed afresh from the longest prefix of the order whose items are all asked (every epoch): a run
killed in the middle of a batch, resumed, looks at the same numbers. Each item's difference is its score here (epochs
averaged, counted as the run's truncation and no-answer policies count it) minus its score in the baseline; items
not scored in the baseline are left out of the sequence. An errored sample never counts toward a decision: GO must
hold with every errored sample counted wrong, NO-GO with every one counted right (a stated bound); a resume asks the
errored samples again before its first look, so the same command again retries them. The decision, the items used and the
sequence's bounds are recorded in the manifest (`proctor.log.sequential.SequentialRecord`); `gate` reads them.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..core.spec import RunSpec, StopRule
from ..data.records import Item
from ..data.tasks import Task
from ..log.runlog import Manifest, Outcome, Sample
from ..log.sequential import SequentialRecord
from ..log.setting import setting_key, setting_label, spec_setting
from ..stats.sequential import METHOD, Look, SequenceDecision, look
from ..util.errors import ProctorError
from .store import RunScores, Store, default_store_path, item_scores, load_run_scores
from .verify import unchanged

T = TypeVar("T")
Ask = Callable[[list[tuple[Item, int]], int], Awaitable[dict[str, Sample]]]  # a part of the plan → its samples


def load_baseline(spec: RunSpec, task: Task, store: Path | None = None) -> RunScores:
    """The baseline's per-item scores; refused (one line naming --baseline) when it cannot be paired with this run."""
    rule = _rule(spec)
    if spec.shard is not None:
        raise ProctorError("stop_when_decided: a stopped run is one directory: not with --shard or --shards")
    try:
        if Path(rule.baseline).is_dir():
            if (problem := unchanged(rule.baseline)) is not None:
                raise ProctorError(f"does not verify ({problem}): a baseline is held to its checksums")
            base = load_run_scores(rule.baseline)
        else:
            with Store(store or default_store_path()) as st:
                base = load_run_scores(rule.baseline, st)
    except ProctorError as e:
        raise ProctorError(f"baseline: {rule.baseline}: {e}") from None
    if base.run.n_errors:  # its errored items drop out of the pairs: each could be one the candidate answers wrong
        raise ProctorError(f"baseline: {rule.baseline} has {base.run.n_errors:,} errored sample(s): the sequence "
                           "would pair the rest only; resume the baseline (its own run command) first")
    if not {it.identifier for it in task.items} & base.items.keys():
        raise ProctorError(f"baseline: {rule.baseline} scored none of {task.name}'s items")
    _same_data(rule.baseline, task, base)
    mine = spec_setting(spec)
    if base.run.setting and base.run.setting_key != setting_key(mine):
        raise ProctorError(f"baseline: {rule.baseline} ran another setting ({base.run.setting_label} vs "
                           f"{setting_label(mine)}): the sequence pairs runs of one setting")
    return base


def _same_data(given: str, task: Task, base: RunScores) -> None:
    """Refuse a baseline over other data: another content hash, or items this data does not hold (a difference
    between runs of other items measures the items, not the models)."""
    have = base.run.dataset_hash
    if have is not None and have != task.content_hash:
        raise ProctorError(f"baseline: {given} evaluated other data ({base.run.dataset} content hash {have[:23]}, "
                           f"{task.name} now {task.content_hash[:23]}): the sequence pairs runs of the same items")
    mine = {it.identifier for it in task.items}
    other = sorted(base.items.keys() - mine)
    if other:
        raise ProctorError(f"baseline: {given} scored {len(other):,} item(s) {task.name} does not hold (e.g. "
                           f"{other[0]}): the sequence pairs runs of the same items")


def scores_digest(base: RunScores) -> str:
    """sha256 of a baseline's per-item scores: what the looks read, recorded so that a later look or `gate` finds
    a baseline changed since."""
    rows = sorted((i, s.score) for i, s in base.items.items())
    return "sha256:" + hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


def check_record(run_dir: Path, record: SequentialRecord, base: RunScores) -> None:
    """Refuse a recorded decision that does not verify: the run directory's files changed since its checksums
    (a hand-edited manifest: NO-GO → GO), or a baseline whose scores changed since the looks read them."""
    problem = unchanged(run_dir)
    if problem is not None:
        raise ProctorError(f"{run_dir}: its --stop-when-decided decision does not verify ({problem}); run "
                           "`proctor verify` on it, or ask it afresh in a new directory")
    if record.baseline_scores is not None and record.baseline_scores != scores_digest(base):
        raise ProctorError(f"baseline: {record.baseline}: its scores changed since {run_dir}'s sequence looked at "
                           f"them ({record.baseline_scores[:23]}, now {scores_digest(base)[:23]}): the decision "
                           "does not hold; ask it afresh in a new directory")


def _rule(spec: RunSpec) -> StopRule:
    if spec.stop_when is None:
        raise ProctorError("internal: no stop rule in the spec")
    return spec.stop_when


def asking_order(items: Sequence[T], seed: int) -> list[T]:
    """The items in the order they are asked: shuffled by `seed` (the same seed, the same order)."""
    order = list(items)
    random.Random(seed).shuffle(order)
    return order


def recorded_stop(manifest: Manifest | None, spec: RunSpec) -> SequentialRecord | None:
    """The stop a run directory recorded, when this spec asks for the same rule (then nothing more is asked)."""
    rule = spec.stop_when
    got = manifest.sequential if manifest is not None else None
    if rule is None or got is None or not got.stopped:
        return None
    same = (got.baseline, got.max_drop, got.alpha, got.order_seed) == (rule.baseline, rule.max_drop, rule.alpha,
                                                                       rule.order_seed)
    return got if same else None


def stopped_line(run_dir: Path, record: SequentialRecord) -> str:
    """What a resume of a stopped run says: that it stopped, and that nothing is asked again."""
    return (f"{run_dir} stopped at {record.decision} after {record.items_asked:,} of {record.items_total:,} items "
            "(--stop-when-decided); nothing asked again (the same command without --stop-when-decided asks the rest)")


class _Sequence:
    """The looks of one run: its order, the baseline's scores, and the samples so far."""

    def __init__(self, spec: RunSpec, items: Sequence[Item], base: RunScores, samples: Mapping[str, Sample]) -> None:
        self.rule, self.epochs, self.base = _rule(spec), spec.epochs, base
        self.setting = spec_setting(spec)
        self.order = asking_order(items, self.rule.order_seed)
        self.samples = dict(samples)
        self.looks = self.errored = 0

    def asked(self, item: Item) -> bool:
        return all(f"{item.identifier}#{e}" in self.samples for e in range(self.epochs))

    def prefix(self) -> int:
        """How many items of the order are asked, from its start without a gap."""
        n = 0
        while n < len(self.order) and self.asked(self.order[n]):
            n += 1
        return n

    def look(self) -> tuple[Look, int]:
        """The sequence on the asked prefix: (its look, the prefix's length). An errored sample never counts toward
        a decision: GO must hold with every one counted wrong, NO-GO with every one counted right."""
        n = self.prefix()
        asked = self.order[:n]
        samples = [self.samples[f"{it.identifier}#{e}"] for it in asked for e in range(self.epochs)]
        self.errored = sum(s.outcome is Outcome.ERROR for s in samples)
        low = self._look(asked, samples, 0.0)
        high = self._look(asked, samples, 1.0) if self.errored else low
        go, no_go = low.decision == "GO", high.decision == "NO-GO"
        decision: SequenceDecision = "GO" if go and not no_go else "NO-GO" if no_go and not go else "INCONCLUSIVE"
        self.looks += 1
        return Look(decision, low.n, low.ci_low, high.ci_high), n

    def _look(self, asked: Sequence[Item], samples: Sequence[Sample], errored_as: float) -> Look:
        """The sequence with each errored sample counted as `errored_as` (0: wrong, 1: right)."""
        filled = (s if s.outcome is not Outcome.ERROR else s.model_copy(update={
            "outcome": Outcome.CORRECT if errored_as else Outcome.WRONG, "score": errored_as}) for s in samples)
        mine = item_scores(filled, self.setting)
        diffs = [mine[it.identifier].score - self.base.items[it.identifier].score for it in asked
                 if it.identifier in mine and it.identifier in self.base.items]
        try:
            return look(np.array(diffs, dtype=float), self.rule.max_drop, self.rule.alpha)
        except ValueError as e:
            raise ProctorError(f"stop_when_decided: {e}") from None

    def record(self, got: Look, n: int) -> SequentialRecord:
        decided = got.decision != "INCONCLUSIVE"
        return SequentialRecord(
            decision=got.decision, stopped=decided and n < len(self.order), items_asked=n, items_paired=got.n,
            items_total=len(self.order), samples_errored=self.errored, looks=self.looks, ci_low=got.ci_low, ci_high=got.ci_high,
            alpha=self.rule.alpha, max_drop=self.rule.max_drop, baseline=self.rule.baseline,
            baseline_run_id=self.base.run.run_id, baseline_scores=scores_digest(self.base), order_seed=self.rule.order_seed, method=METHOD)


async def ask_until_decided(spec: RunSpec, items: Sequence[Item], done: Mapping[str, Sample], base: RunScores,
                            ask: Ask, errored: Sequence[str] = ()) -> tuple[dict[str, Sample], SequentialRecord]:
    """Ask `items` (all epochs) in the spec's order, `look_every` items at a time, looking after each batch (and
    once before, at what a resumed run already holds, its `errored` sample ids asked again first); stop when the
    sequence decides. Returns the samples asked in this session and how the sequence ended."""
    seq = _Sequence(spec, items, base, done)
    by_id = {it.identifier: it for it in items}
    again = [(by_id[i], int(e)) for i, _, e in (sid.rpartition("#") for sid in errored) if i in by_id]
    asked: dict[str, Sample] = await ask(again, len(seq.samples)) if again else {}
    seq.samples |= asked
    got, n = seq.look()
    position = n
    while got.decision == "INCONCLUSIVE" and position < len(seq.order):
        batch: list[Item] = []
        while position < len(seq.order) and len(batch) < seq.rule.look_every:
            if not seq.asked(seq.order[position]):
                batch.append(seq.order[position])
            position += 1
        plan = [(it, e) for it in batch for e in range(seq.epochs) if f"{it.identifier}#{e}" not in seq.samples]
        new = await ask(plan, len(seq.samples)) if plan else {}
        asked |= new
        seq.samples |= new
        got, n = seq.look()
    return asked, seq.record(got, n)


__all__ = ["ask_until_decided", "asking_order", "check_record", "load_baseline", "recorded_stop", "scores_digest", "stopped_line"]
