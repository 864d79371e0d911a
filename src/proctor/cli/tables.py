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
from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

PIPED_WIDTH = 110  # piped output is not cut at 80 columns either (as `run`)
FOLDING_ROOM = 12  # the least width a folding column (prose, a category name) is left before rows become blocks


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


def fits(table: Table, out: Console) -> bool:
    """Whether `table` (after `fit`) fits `out`'s width with its whole columns whole: when it does not, rich
    would cut them, so the caller shows its rows another way (one block per row)."""
    keep = sum(c.min_width or 0 for c in table.columns if c.no_wrap)
    folding = sum(1 for c in table.columns if not c.no_wrap) * FOLDING_ROOM
    gaps = max(len(table.columns) - 1, 0)
    natural = Measurement.get(out, out.options.update_width(1 << 16), table).maximum
    return min(natural, keep + folding + gaps) <= out.width


def blocks(table: Table, width: int) -> Group:
    """`table`'s rows one block each: the first cell, then `header value` pairs packed into lines of `width`,
    a line breaking only between pairs, never inside a number, id or name (for a terminal too narrow)."""
    title = [Text.from_markup(str(table.title), style="bold")] if table.title else []
    headers = [_plain(c.header) for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    rows = []
    for i in range(table.row_count):
        first, *rest = (" ".join(_plain(column[i]).split("\n")) for column in cells)
        lines: list[str] = []
        for pair in (f"{h} {v}" for h, v in zip(headers[1:], rest, strict=True) if v):
            if lines and len(lines[-1]) + 3 + len(pair) <= width:
                lines[-1] += " · " + pair
            else:
                lines.append("  " + pair)
        rows.append(Text.assemble((f"{headers[0]} {first}", "bold"), *("\n" + line for line in lines)))
    return Group(*title, *rows)


def _plain(cell: object) -> str:
    return Text.from_markup(cell).plain if isinstance(cell, str) else cell.plain if isinstance(cell, Text) else str(cell)


def show(table: Table, whole: Iterable[str], out: Console) -> None:
    """`table` with its `whole` columns whole when it fits `out`, else its rows as blocks (`blocks`)."""
    fit(table, whole)
    if not fits(table, out):
        out.print(blocks(table, out.width))
        return
    if table.title:  # on its own line, the console's width: a compact table would fold it to its own width
        out.print(Text.from_markup(str(table.title), style="bold"))
        table.title = None
    out.print(table)


__all__ = ["PIPED_WIDTH", "blocks", "console", "fit", "fits", "print_table", "show", "whole_table"]
