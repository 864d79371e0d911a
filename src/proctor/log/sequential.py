"""What a `run --stop-when-decided` recorded in its manifest: how its confidence sequence for candidate − baseline
ended (`proctor.stats.sequential`), so that the run, `gate` and a resume all read the same decision."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Partial(BaseModel):
    """A run stopped early (`run --stop-when-decided`): the same evaluation as the complete run of its id, on `asked`
    of its `total` items. The history keeps it beside the complete run, never over it, and never ranks it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    asked: int = Field(ge=0)
    total: int = Field(ge=0)

    @property
    def label(self) -> str:
        """`partial 150/400`: how every view marks it."""
        return f"partial {self.asked:,}/{self.total:,}"


class SequentialRecord(BaseModel):
    """The sequence's last look: GO or NO-GO when it stopped the run, INCONCLUSIVE when every item was asked first."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    decision: Literal["GO", "NO-GO", "INCONCLUSIVE"]
    stopped: bool  # True: items were left unasked because the sequence decided
    items_asked: int = Field(ge=0)  # items of the order asked (every epoch of each), errored ones included
    items_paired: int = Field(ge=0)  # of those, scored here and in the baseline: the sequence's length
    items_total: int = Field(ge=0)  # the run's items
    samples_errored: int = Field(default=0, ge=0)  # of the asked, errored: counted wrong for GO, right for NO-GO
    looks: int = Field(ge=0)
    ci_low: float  # candidate − baseline (a proportion), the sequence's bounds at its last look
    ci_high: float
    alpha: float
    max_drop: float  # a proportion
    baseline: str  # as given (a directory or a run id)
    baseline_run_id: str
    baseline_scores: str | None = None  # sha256 of the baseline's per-item scores the looks read (`scores_digest`)
    order_seed: int
    method: str

    @property
    def partial(self) -> Partial | None:
        """The items asked of the items the run has, when the sequence stopped it early; None when it asked all."""
        return Partial(asked=self.items_asked, total=self.items_total) if self.stopped else None

    def text(self) -> str:
        """`stopped at NO-GO after 40 of 100 items: candidate − baseline 95% confidence sequence [-43.9, -12.8] …`."""
        how = (f"stopped at {self.decision} after {self.items_asked:,} of {self.items_total:,} items" if self.stopped
               else f"{self.decision} after all {self.items_total:,} items")
        return (f"{how}: candidate − baseline {100 * (1 - self.alpha):.4g}% confidence sequence "
                f"[{100 * self.ci_low:+.1f}, {100 * self.ci_high:+.1f}] points vs the allowed drop "
                f"−{100 * self.max_drop:.1f} on {self.items_paired:,} paired item(s), anytime-valid "
                f"(baseline {self.baseline_run_id[:12]}){self._errored()}")

    def _errored(self) -> str:
        return (f"; {self.samples_errored:,} errored sample(s) counted wrong for GO and right for NO-GO (the same "
                "command again asks them again)" if self.samples_errored else "")


__all__ = ["Partial", "SequentialRecord"]
