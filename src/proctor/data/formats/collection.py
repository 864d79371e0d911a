"""A folder of several CommonEval datasets (`<folder>/<id>/<id>.yaml`, as CommonEval keeps `data/eng/`).

The Dataset spec's stated purpose is to show "under- or over-represented subject areas": `stats`
over such a folder counts datasets and items per dataset `subject` and flags subjects by the same
half/double-of-uniform rule as categories (`proctor.data.coverage`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...util.errors import InputError, Problem
from ..coverage import Flag, flag_categories
from ..records import ItemSet
from .commoneval import read_commoneval


def dataset_yamls(path: Path) -> list[Path] | None:
    """The dataset YAMLs of a folder holding several CommonEval datasets; None when `path` is not one."""
    if not path.is_dir() or (path / f"{path.name}.yaml").is_file():
        return None
    yamls = sorted(path.glob("*.yaml"))
    nested = sorted(y for d in sorted(path.iterdir()) if d.is_dir() for y in d.glob("*.yaml"))
    if not nested and len(yamls) < 2:
        return None
    return [*yamls, *nested]


def dataset_folder(path: Path) -> list[ItemSet] | None:
    """Every dataset of a folder holding several CommonEval datasets; None when `path` is not one."""
    found = dataset_yamls(path)
    if found is None:
        return None
    problems: list[Problem] = []
    out: list[ItemSet] = []
    for y in found:
        try:
            out.append(read_commoneval(y))
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        raise InputError(problems)
    return out


@dataclass(frozen=True)
class SubjectCoverage:
    """Datasets and items per dataset `subject`, with the subjects flagged under/over-represented."""

    datasets: dict[str, list[str]]
    items: dict[str, int]
    flags: list[Flag]

    def to_json(self) -> dict[str, Any]:
        return {"by_subject": {
            subject: {"datasets": names, "items": self.items[subject]} for subject, names in self.datasets.items()
        }, "flags": [{"subject": f.category, "kind": f.kind, "items": f.count, "share": f.share,
                        "uniform_share": f.uniform_share} for f in self.flags]}

    def render(self) -> str:
        total = sum(self.items.values()) or 1
        width = max((len(s) for s in self.items), default=0)
        lines = ["subjects:"]
        for subject, n in self.items.items():
            names = ", ".join(self.datasets[subject])
            lines.append(f"  {subject:<{width}}  {n:>6}  {100 * n / total:5.1f}%  ({names})")
        for f in self.flags:
            lines.append(f"  {f.kind}-represented subject: {f.category} ({f.count} items, {100 * f.share:.1f}% vs "
                         f"{100 * f.uniform_share:.1f}% uniform)")
        return "\n".join(lines)


def subject_coverage(datasets: list[ItemSet]) -> SubjectCoverage:
    """Group `datasets` by their `subject` attribute (items counted per subject)."""
    names: dict[str, list[str]] = {}
    items: Counter[str] = Counter()
    for ds in datasets:
        subject = str(ds.metadata.get("subject") or "unspecified")
        names.setdefault(subject, []).append(ds.identifier)
        items[subject] += len(ds.items)
    ranked = dict(items.most_common())
    return SubjectCoverage({s: names[s] for s in ranked}, ranked, flag_categories(ranked))
