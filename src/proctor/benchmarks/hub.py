"""Fetching upstream rows: from the Hugging Face Hub (revision pinned and recorded) or a local file.

Local files are read in the upstream schema: `.parquet` (pyarrow), `.csv` (the stdlib, multi-line
cells allowed), `.jsonl` and `.json` (JSON Lines, or one JSON array of rows as TIGER-Lab dumps
MMLU-Pro), and MathArena's on-disk competition layout (a directory with `answers.csv` — `id,answer` —
and `problems/<id>.tex`, optionally `problem_types.csv` and `source.csv`), read as its hub columns
`problem_idx, problem, answer, problem_type`. Hub access imports `datasets` and `huggingface_hub`
lazily and turns every failure — gated, refused token, offline, missing — into a
`DatasetAccessError` whose message says what to do, never a traceback.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.formats.jsonrows import iter_records
from ..data.records import Dataset, Question
from ..data.tasks import PromptBuilder
from ..util.errors import DatasetAccessError, InputError, Problem
from ..util.textio import read_text

OFFLINE_ENV = ("PROCTOR_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
FILE_SUFFIXES = (".parquet", ".csv", ".jsonl", ".json")


@dataclass(frozen=True)
class HubSource:
    """Where a benchmark lives upstream."""

    repo: str
    split: str
    config: str | None = None
    gated: bool = False
    revision: str | None = None  # a pinned commit (benchmark spec files); None: the hub's current one

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo}"

    def provenance(self, revision: str | None) -> dict[str, Any]:
        """Where rows came from: repo, config, split and the pinned revision (None for a local file)."""
        return {"source": self.repo, "config": self.config, "split": self.split, "revision": revision}


@dataclass
class Rows:
    """Upstream rows plus the provenance that identifies exactly which data they are."""

    rows: list[dict[str, Any]]
    provenance: dict[str, Any] = field(default_factory=dict)
    path: str = "<hub>"  # for error messages: the data file, or repo/config/split
    lines: list[int] | None = None  # the line each row starts on (csv, jsonl); None for parquet / hub

    def where(self, index: int, column: str | None = None) -> tuple[int | None, str]:
        """(line, field) locating row `index` for an error: the file line when known, else `row N`."""
        if self.lines is not None:
            return self.lines[index], column or "row"
        label = f"row {index + 1}"
        return None, f"{label}: {column}" if column else label

    def error(self, index: int, message: str, column: str | None = None) -> Problem:
        line, where = self.where(index, column)
        return Problem(self.path, line, message, where)


@dataclass
class Loaded:
    """What a benchmark loader returns: the seed-001 dataset, how to prompt for it, where it came from."""

    dataset: Dataset
    prompts: PromptBuilder
    provenance: dict[str, Any]
    choice_order_seed: int | None = None
    code: Any = None  # a code benchmark's tests (proctor.scoring.execute.scorer.CodeTests): its answers are run


def is_offline() -> bool:
    """True when the environment forbids hub access (PROCTOR_OFFLINE, HF_HUB_OFFLINE, HF_DATASETS_OFFLINE)."""
    return any(os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on") for k in OFFLINE_ENV)


def file_sha256(path: str | Path) -> str:
    """The content hash of a file, or of a directory's files (relative names and bytes, in name order)."""
    h = hashlib.sha256()
    p = Path(path)
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    for file in files:
        if p.is_dir():
            h.update(file.relative_to(p).as_posix().encode() + b"\0")
        with open(file, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def read_rows(path: str | Path) -> tuple[list[dict[str, Any]], list[int] | None]:
    """Rows of a local upstream-schema file (parquet, csv or jsonl) and the line each starts on."""
    p = Path(path)
    if not p.exists():
        raise InputError.at(p, "no such file")
    if p.is_dir():
        if (p / "answers.csv").is_file():
            return read_matharena_dir(p)
        raise InputError.at(p, "is a directory, expected a .parquet, .csv, .jsonl or .json file (or MathArena's "
                               "layout: answers.csv + problems/<id>.tex)")
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        return _read_parquet(p)
    if suffix == ".csv":
        return _read_csv(p)
    if suffix in (".jsonl", ".json"):
        return _read_jsonl(p)
    raise InputError.at(
        p, f"unsupported data file type {suffix or '(none)'}; expected .parquet, .csv or .jsonl"
    )


def _read_parquet(p: Path) -> tuple[list[dict[str, Any]], None]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow comes with the hub extra
        raise InputError.at(p, "reading parquet needs pyarrow: pip install 'proctor-eval[hub]'") from None
    try:
        # a batch at a time: reading the whole table first held it beside its rows (+90 MB at 12,000 MMLU-Pro rows)
        rows: list[dict[str, Any]] = [row for batch in pq.ParquetFile(p).iter_batches(batch_size=1024, use_threads=False)
                                      for row in batch.to_pylist()]
    except Exception as e:  # noqa: BLE001 - pyarrow raises several unrelated types for a corrupt file
        raise InputError.at(p, f"not a readable parquet file: {e}") from None
    if not rows:
        raise InputError.at(p, "empty file: no rows")
    return rows, None


def _read_csv(p: Path) -> tuple[list[dict[str, Any]], list[int]]:
    text = read_text(p)
    if not text.strip():
        raise InputError.at(p, "empty file")
    reader = csv.DictReader(io.StringIO(text))
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    try:
        start = 2
        for r in reader:
            rows.append(dict(r))
            lines.append(start)
            start = reader.line_num + 1
    except csv.Error as e:
        raise InputError.at(p, f"malformed CSV: {e}", reader.line_num) from None
    if not rows:
        raise InputError.at(p, "no rows after the header")
    return rows, lines


def _read_jsonl(p: Path) -> tuple[list[dict[str, Any]], list[int]]:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    problems: list[Problem] = []
    for record in iter_records(p, problems):
        if not isinstance(record.value, dict):
            problems.append(Problem(str(p), record.line, "expected a JSON object per row"))
            continue
        rows.append(record.value)
        lines.append(record.line)
    if problems:
        raise InputError(problems)
    return rows, lines


def read_matharena_dir(p: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """MathArena's competition directory as hub rows (`problem_idx, problem, answer, problem_type`, and
    `source` when `source.csv` is there); lines are those of `answers.csv`."""
    answers, lines = _read_csv(p / "answers.csv")
    extra = {name: _by_id(p / f"{name}.csv", column) for name, column in (("problem_types", "type"),
                                                                            ("source", "source"))}
    rows: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for row, line in zip(answers, lines):
        ident = str(row.get("id", "")).strip()
        tex = p / "problems" / f"{ident}.tex"
        if not ident.isdigit() or "answer" not in row:
            problems.append(Problem(str(p / "answers.csv"), line, "expected the columns id (an integer) and answer"))
            continue
        if not tex.is_file():
            problems.append(Problem(str(p / "answers.csv"), line, f"problems/{ident}.tex: no such file "
                                                                  "(image-only problems are not supported)"))
            continue
        out: dict[str, Any] = {"problem_idx": int(ident), "problem": read_text(tex), "answer": row["answer"],
                               "problem_type": extra["problem_types"].get(ident)}
        if ident in extra["source"]:
            out["source"] = extra["source"][ident]
        rows.append(out)
    if problems:
        raise InputError(problems)
    order = sorted(range(len(rows)), key=lambda i: rows[i]["problem_idx"])
    return [rows[i] for i in order], [lines[i] for i in order]


def _by_id(path: Path, column: str) -> dict[str, Any]:
    """An optional MathArena side table (`id,<column>`); a type list cell becomes a list of names."""
    if not path.is_file():
        return {}
    rows, _ = _read_csv(path)
    out: dict[str, Any] = {}
    for row in rows:
        value = row.get(column)
        if column == "type" and isinstance(value, str):
            value = [t.strip() for t in value.replace('"', "").replace("[", "").replace("]", "").split(",") if t.strip()]
        out[str(row.get("id", "")).strip()] = value
    return out


def load_file(path: str | Path, source: HubSource) -> Rows:
    """Rows from a local file, with its path and content hash as provenance."""
    p = Path(path)
    rows, lines = read_rows(p)
    return Rows(
        rows=rows,
        lines=lines,
        path=str(p / "answers.csv") if p.is_dir() else str(p),
        provenance={
            **source.provenance(None),
            "data_file": str(p.resolve()),
            "data_file_sha256": file_sha256(p),
        },
    )


def _access_hint(source: HubSource) -> str:
    if source.gated:
        return (
            f"{source.repo} is gated: sign in at {source.url}, accept its terms, create a token at "
            "https://huggingface.co/settings/tokens and set HF_TOKEN=<token> (or run `hf auth login`); "
            "or download the file yourself and pass --data-file PATH (parquet, csv or jsonl)"
        )
    return f"check your connection, or download the split from {source.url} and pass --data-file PATH"


def load_hub(source: HubSource) -> Rows:
    """Rows of `source` from the Hub, pinned to the current commit sha, which is recorded."""
    where = f"{source.repo}" + (f" ({source.config})" if source.config else "") + f" split {source.split}"
    if is_offline():
        raise DatasetAccessError(
            f"cannot fetch {where}: hub access is disabled (offline); {_access_hint(source)}"
        )
    try:
        import datasets
        from huggingface_hub import HfApi
    except ImportError:
        raise DatasetAccessError(
            f"fetching {where} needs the hub extra: pip install 'proctor-eval[hub]'; or pass --data-file PATH"
        ) from None
    token = os.environ.get("HF_TOKEN") or None
    try:
        revision = source.revision or HfApi().dataset_info(source.repo, token=token).sha
        ds = datasets.load_dataset(
            source.repo, source.config, split=source.split, revision=revision, token=token
        )
    except Exception as e:  # noqa: BLE001 - the hub raises many types (gated, 401, 404, network)
        raise DatasetAccessError(
            f"cannot fetch {where}: {_describe(e, source)}; {_access_hint(source)}"
        ) from None
    return Rows(
        rows=list(ds.to_list()),
        path=where,
        provenance=source.provenance(revision),
    )


def _describe(e: Exception, source: HubSource) -> str:
    name = type(e).__name__
    text = str(e).strip().splitlines()[0] if str(e).strip() else name
    if "Gated" in name or "gated" in text.lower() or "401" in text or "403" in text:
        return "access refused (gated dataset: missing token, or its terms are not accepted)"
    return f"{name}: {text[:200]}"


def fetch(source: HubSource, data_file: str | Path | None) -> Rows:
    """A local file when given, else the Hub."""
    return load_file(data_file, source) if data_file is not None else load_hub(source)


def require_columns(rows: Rows, columns: tuple[str, ...]) -> None:
    """Fail with one clear message naming every missing upstream column."""
    if not rows.rows:
        raise InputError.at(rows.path, "no rows")
    present = set(rows.rows[0])
    missing = [c for c in columns if c not in present]
    if missing:
        raise InputError.at(
            rows.path,
            f"missing upstream column(s) {', '.join(repr(c) for c in missing)}; found {sorted(present)}",
            line=None,
        )


def convert_rows(rows: Rows, columns: tuple[str, ...], convert: Callable[[dict[str, Any]], Question]) -> list[Question]:
    """`convert` over every row once the columns are there; every row that fails (ValueError, TypeError) is
    reported, all at once."""
    out, problems = _convert_each(rows, columns, convert)
    if problems:
        raise InputError(problems)
    return out


def convert_rows_skipping(
    rows: Rows, columns: tuple[str, ...], convert: Callable[[dict[str, Any]], Question]
) -> tuple[list[Question], list[Problem]]:
    """`convert` over every row, keeping the rows that convert and naming the others (to skip with a
    warning); refused, every problem listed, only when no row converts."""
    out, problems = _convert_each(rows, columns, convert)
    if problems and not out:
        raise InputError(problems)
    return out, problems


def _convert_each(
    rows: Rows, columns: tuple[str, ...], convert: Callable[[dict[str, Any]], Question]
) -> tuple[list[Question], list[Problem]]:
    require_columns(rows, columns)
    problems: list[Problem] = []
    out: list[Question] = []
    for i, row in enumerate(rows.rows):
        try:
            out.append(convert(row))
        except (ValueError, TypeError) as e:
            problems.append(rows.error(i, reason(e)))
    return out, problems


def parse_list_cell(text: str, field: str) -> Any:
    """A CSV cell holding a JSON or Python list literal, parsed (the caller checks the type)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise ValueError(f"{field}: not a list: {text[:60]!r}") from None


def reason(e: Exception) -> str:
    """A one-line reason for a row that failed validation (pydantic errors without their banner)."""
    from pydantic import ValidationError

    if isinstance(e, ValidationError):
        return "; ".join(
            (".".join(str(x) for x in err["loc"]) + ": " if err["loc"] else "")
            + err["msg"].removeprefix("Value error, ")
            for err in e.errors()
        )
    return str(e).splitlines()[0] if str(e) else type(e).__name__
