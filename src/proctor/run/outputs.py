"""The pipeline's last step: what a run writes besides its run directory (probsem's CSVs, llm-wc's results
directory, a run exported to another tool's format), declared in `RunOptions.outputs`.

Each output is a small object with a `name` and `write(runs)`: it is given every finished run of the call (its
resolved spec, its Task and its run log) once all of them are done, and returns the paths it wrote. The command
line and `proctor.eval` put the same objects in the same `RunOptions`, so they write the same files; the objects
themselves live beside the tool whose format they write (`proctor.interop`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..core.spec import RunSpec
from ..data.tasks import Task
from ..log.runlog import RunLog


@dataclass(frozen=True)
class Finished:
    """One finished run of a pipeline call: its resolved spec, the Task it ran, its run log."""

    spec: RunSpec
    task: Task
    log: RunLog


class RunOutput(Protocol):
    """Files written from the finished runs of one pipeline call (after all of them)."""

    @property
    def name(self) -> str:
        """What the files are, for the caller's messages (`probsem`, `llm-wc results`…)."""
        ...

    def write(self, runs: Sequence[Finished]) -> list[Path]:
        """Write the files; their paths."""
        ...


def write_outputs(outputs: Sequence[RunOutput], runs: Sequence[Finished],
                  wrote: Callable[[RunOutput, list[Path]], None] = lambda output, paths: None) -> None:
    """Write every output, in order; `wrote` hears each one's paths."""
    for output in outputs:
        wrote(output, output.write(runs))


__all__ = ["Finished", "RunOutput", "write_outputs"]
