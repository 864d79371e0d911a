"""CommonEval dataset directories: `<dir>/<id>.yaml` metadata plus items in `<id>.jsonl` or shards.

The YAML follows CommonEval's Dataset (identifier, title, description, taskPrompt, version, hasPart,
and free keys such as creator, created, license, which land in `ItemSet.metadata`). Items live in
`<id>.jsonl`, or in shards `<id>_000.jsonl`, `<id>_001.jsonl`, … named by `hasPart` (or found by name
when `hasPart` is absent).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError, Problem
from ..limits import yaml_load
from ..records import IDENTIFIER_RE, Item, ItemSet
from ..safepath import is_inside
from ..textio import atomic_directory, read_text
from .items import check_unique_identifiers, item_lines, parse_item_lines

_FIELDS = {"identifier": "identifier", "title": "name", "description": "description",
           "taskPrompt": "task_prompt", "version": "version"}
RESERVED_KEYS = frozenset(_FIELDS) | {"hasPart"}
_SHARD_RE = re.compile(r"_(\d{3,})\.jsonl$")


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]
    """Double-quotes strings holding Unicode line breaks (PyYAML mangles them in other styles)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = '"' if any(c in value for c in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def find_yaml(path: str | Path) -> Path:
    """The dataset's `<id>.yaml`, given the directory or the YAML file itself."""
    p = Path(path)
    if p.is_file():
        if p.suffix != ".yaml":
            raise InputError.at(p, "expected a CommonEval dataset directory or its <id>.yaml")
        return p
    if not p.is_dir():
        raise InputError.at(p, "no such file or directory")
    yamls = sorted(p.glob("*.yaml"))
    if not yamls:
        raise InputError.at(
            p, "not a CommonEval dataset: no <id>.yaml with the dataset metadata in this directory"
        )
    if len(yamls) > 1:
        named = p / f"{p.name}.yaml"
        if named in yamls:
            return named
        names = ", ".join(y.name for y in yamls)
        raise InputError.at(p, f"several dataset YAML files ({names}): name one of them")
    return yamls[0]


def _load_yaml(path: Path) -> dict[str, Any]:
    text = read_text(path)
    if not text.strip():
        raise InputError.at(path, "empty file")
    try:
        data = yaml_load(text, path)  # aliases, expansion and depth bounded
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError.at(path, f"malformed YAML: {getattr(e, 'problem', None) or e}", line) from None
    if not isinstance(data, dict):
        raise InputError.at(path, "expected a mapping of dataset metadata")
    return data


def _plain(value: Any) -> Any:
    """YAML dates become ISO strings so metadata stays JSON-friendly."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _part_files(yaml_path: Path, meta: dict[str, Any], ident: str, problems: list[Problem]) -> list[Path]:
    base = yaml_path.parent
    has_part = meta.get("hasPart")
    if has_part is not None:
        if not isinstance(has_part, list) or not all(isinstance(x, str) for x in has_part):
            problems.append(Problem(str(yaml_path), None, "must be a list of file names", "hasPart"))
            return []
        outside = [name for name in has_part if not is_inside(base, name)]
        for name in outside:
            problems.append(Problem(str(yaml_path), None, f"{name}: must be a file inside the dataset directory",
                                    "hasPart"))
        has_part = [name for name in has_part if name not in outside]
        missing = [name for name in has_part if not (base / name).is_file()]
        for name in missing:
            problems.append(Problem(str(yaml_path), None, f"{name}: no such file", "hasPart"))
        return [base / name for name in has_part if name not in missing]
    single = base / f"{ident}.jsonl"
    shards = sorted(
        (int(m.group(1)), f)
        for f in base.glob(f"{ident}_*.jsonl")
        if (m := _SHARD_RE.search(f.name)) and f.name == f"{ident}_{m.group(1)}.jsonl"
    )
    if single.is_file() and shards:
        problems.append(Problem(str(base), None, f"both {single.name} and shards {ident}_NNN.jsonl: keep one"))
        return []
    if single.is_file():
        return [single]
    if not shards:
        problems.append(Problem(str(base), None, f"no items: expected {ident}.jsonl or {ident}_000.jsonl, …"))
        return []
    for expected, (number, f) in enumerate(shards):
        if number != expected:
            problems.append(Problem(str(f), None, f"shard numbers must run 000, 001, … without gaps; "
                                                  f"expected {ident}_{expected:03d}.jsonl"))
            return []
    return [f for _, f in shards]


def read_commoneval(path: str | Path) -> ItemSet:
    """Read a CommonEval dataset (the directory or its YAML); raise `InputError` listing every problem."""
    yaml_path = find_yaml(path)
    meta = _load_yaml(yaml_path)
    problems: list[Problem] = []
    ident = str(meta.get("identifier", yaml_path.stem))
    if ident != yaml_path.stem:
        problems.append(Problem(str(yaml_path), None,
                                f"{ident!r} does not match the file name {yaml_path.name}", "identifier"))
    fields: dict[str, Any] = {}
    for key, attr in _FIELDS.items():
        value = meta.get(key)
        if value is not None and not isinstance(value, (str, int, float)):
            problems.append(Problem(str(yaml_path), None, "must be a string", key))
        elif value is not None:
            fields[attr] = str(value)
    fields["identifier"] = yaml_path.stem
    extra = {k: _plain(v) for k, v in meta.items() if k not in RESERVED_KEYS}
    located: list[tuple[Path, int, Item]] = []
    for part in _part_files(yaml_path, meta, yaml_path.stem, problems):
        located.extend((part, line, item) for line, item in parse_item_lines(part, problems))
    problems.extend(check_unique_identifiers(located))
    if problems:
        raise InputError(problems)
    return ItemSet(**fields, metadata=extra, items=[item for _, _, item in located])


def commoneval_files(items: ItemSet, shard_size: int | None = None) -> dict[str, str]:
    """File name → text for a CommonEval directory holding `items` (YAML last)."""
    ident = items.identifier
    if not IDENTIFIER_RE.fullmatch(ident):
        raise InputError.at(ident, "dataset identifier must use only letters, digits, '-', '_' and '.'",
                            field="identifier")
    clash = sorted(RESERVED_KEYS & set(items.metadata))
    if clash:
        raise InputError.at(f"{ident}.yaml", f"metadata keys {clash} clash with dataset fields", field="metadata")
    dup = check_unique_identifiers((f"{ident}.jsonl", i + 1, it) for i, it in enumerate(items.items))
    if dup:
        raise InputError(dup)
    if shard_size is not None and shard_size < 1:
        raise InputError.at("--shard-size", "must be at least 1")
    rows = items.items
    if shard_size is None or len(rows) <= shard_size:
        chunks = {f"{ident}.jsonl": rows}
    else:
        chunks = {f"{ident}_{n:03d}.jsonl": rows[i:i + shard_size]
                  for n, i in enumerate(range(0, len(rows), shard_size))}
    header: dict[str, Any] = {"identifier": ident}
    for key, attr in _FIELDS.items():
        value = getattr(items, attr)
        if key != "identifier" and value is not None:
            header[key] = value
    header["hasPart"] = list(chunks)
    header.update(items.metadata)
    files = {name: item_lines(chunk) for name, chunk in chunks.items()}
    files[f"{ident}.yaml"] = yaml.dump(header, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    return files


def write_commoneval(out_dir: str | Path, items: ItemSet, shard_size: int | None = None) -> list[Path]:
    """Write `items` as a CommonEval directory; a new directory appears whole or not at all.

    Into an existing directory each file is replaced atomically, the YAML last, and stale shards of
    the same dataset are removed. Returns the paths written.
    """
    out = Path(out_dir)
    files = commoneval_files(items, shard_size)
    ident = items.identifier

    def carry(name: str) -> bool:  # other datasets' files and the user's own stay; this dataset's are rewritten
        own = name == f"{ident}.yaml" or name == f"{ident}.jsonl" or bool(
            name.startswith(f"{ident}_") and _SHARD_RE.search(name))
        return not own and name not in files

    with atomic_directory(out, carry) as tmp:  # swapped in whole: never a mix of old and new items
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8", newline="\n")
    return [out / name for name in files]
