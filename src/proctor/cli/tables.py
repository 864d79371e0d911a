"""Tables on the terminal that never cut what a user reads or types: names, ids and numbers stay whole.

rich cuts a cell that does not fit with `…`, so at 80 columns `gpqa-dia…` or `[0.00…` was all one saw. `fit`
gives the columns that hold names and numbers the width of their widest cell, on one line, and lets the
others (prose, sources) fold long words onto further lines instead; the table is drawn without outer
borders and with one space between columns, so the whole columns fit at 80 columns where they can.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

PIPED_WIDTH = 110  # piped output is not cut at 80 columns either (as `run`)


def whole_table(title: str | None = None) -> Table:
    """A table drawn compactly: a rule under the header, no outer border, one space between columns."""
    return Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=0)


def _width(cell: object) -> int:
    text = Text.from_markup(cell) if isinstance(cell, str) else cell
    return max((len(line) for line in text.plain.splitlines()), default=0) if isinstance(text, Text) else 0


def fit(table: Table, whole: Iterable[str]) -> Table:
    """`table` with each column whose header is in `whole` kept on one line at its widest cell's width, and
    every other column folding long words rather than cutting them."""
    keep = set(whole)
    for column in table.columns:
        if str(column.header) in keep:
            column.no_wrap = True
            column.min_width = max([_width(column.header), *(_width(c) for c in column.cells)])
        else:
            column.overflow = "fold"
    return table


def console() -> Console:
    """stdout's console: the terminal's width, or PIPED_WIDTH when piped."""
    return Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)


def print_table(table: Table, whole: Iterable[str]) -> None:
    console().print(fit(table, whole))


__all__ = ["PIPED_WIDTH", "console", "fit", "print_table", "whole_table"]
