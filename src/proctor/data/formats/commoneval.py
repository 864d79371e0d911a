"""CommonEval dataset directories: `<dir>/<id>.yaml` metadata plus items in `<id>.jsonl` or shards.

The YAML is CommonEval's Dataset (v3.3, `dataset.md`): required `identifier`, `created`, `creator`,
`description`, `hasPart`, `source`, `subject` (and `language`, `license`, which CommonEval's own code
defaults: a warning when absent); optional `contributor`, `datePublished`, `licenseNotes`,
`metadataVersion`, `publisher`, `sourceProcess`, `taskPrompt`, `title`, `version`; other attributes are
kept. Attribute names match case-insensitively (a warning when two spellings of one name appear).
`created` is a past date, `datePublished` lies between it and today, and `hasPart` names
`<id>.jsonl`, or `<id>_000.jsonl`, `<id>_001.jsonl`, … in order, each present.

`title`, `description`, `taskPrompt` and `version` land on `ItemSet`'s fields, the rest in its
`metadata` under their canonical names. A directory read unchanged is written back byte for byte.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...util.errors import InputError, Problem
from ...util.limits import yaml_load
from ...util.safepath import is_inside
from ...util.textio import atomic_directory, read_text
from ..records import IDENTIFIER_RE, Item, ItemSet
from .dialects import Dialect, item_dialect, render_lines
from .items import check_unique_identifiers, parse_item_lines

_FIELDS = {"identifier": "identifier", "title": "name", "description": "description",
           "taskPrompt": "task_prompt", "version": "version"}
REQUIRED = ("identifier", "created", "creator", "description", "hasPart", "source", "subject")
DEFAULTED = ("language", "license")  # required by the spec, defaulted by CommonEval's code
# every attribute of the spec, in the order CommonEval's code (`Dataset.asdict`) writes them
STANDARD = ("identifier", "contributor", "created", "creator", "datePublished", "description", "hasPart",
            "language", "license", "licenseNotes", "metadataVersion", "publisher", "source", "sourceProcess",
            "subject", "taskPrompt", "title", "version")
_CANONICAL = {name.lower(): name for name in STANDARD}
RESERVED_KEYS = frozenset(_FIELDS) | {"hasPart"}
_SHARD_RE = re.compile(r"_(\d{3,})\.jsonl$")


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]
    """Double-quotes strings holding Unicode line breaks (PyYAML mangles them in other styles)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = '"' if any(c in value for c in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


@dataclass(eq=False)
class DatasetSpelling:
    """A dataset as read: its YAML bytes, what they meant, its parts and the warnings found."""

    raw: bytes
    meaning: dict[str, Any]
    parts: list[tuple[str, int]]
    dialect: Dialect | None
    warnings: list[Problem] = field(default_factory=list)


def dataset_warnings(items: ItemSet) -> list[Problem]:
    """Warnings found reading `items` (duplicate attribute spellings, missing language/license)."""
    spelling = items.spelling
    return list(spelling.warnings) if isinstance(spelling, DatasetSpelling) else []


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
    data = yaml_load(text, path)  # aliases, expansion and depth bounded; malformed YAML is `path:line:`
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


def canonical_attributes(raw: dict[str, Any], where: str, warnings: list[Problem]) -> dict[str, Any]:
    """Attribute names matched case-insensitively to the spec's spelling; unknown names kept as written."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        name = _CANONICAL.get(str(key).lower(), str(key))
        if name in spelled:
            warnings.append(Problem(where, None, f"{key!r} and {spelled[name]!r} are one attribute "
                                                 f"(names match case-insensitively): {key!r} wins", name))
        spelled[name] = str(key)
        out[name] = value
    return out


def _date(meta: dict[str, Any], key: str, where: str, problems: list[Problem]) -> dt.date | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        problems.append(Problem(where, None, f"{value!r} is not a date (YYYY-MM-DD)", key))
        return None


def check_dates(meta: dict[str, Any], where: str, problems: list[Problem]) -> None:
    """`created` is not in the future; `datePublished` is not before `created` nor in the future."""
    today = dt.date.today()
    created = _date(meta, "created", where, problems)
    published = _date(meta, "datePublished", where, problems)
    if created is not None and created > today:
        problems.append(Problem(where, None, f"{created} is in the future", "created"))
    if published is not None and published > today:
        problems.append(Problem(where, None, f"{published} is in the future", "datePublished"))
    if published is not None and created is not None and published < created:
        problems.append(Problem(where, None, f"{published} is before created ({created})", "datePublished"))


def check_required(meta: dict[str, Any], where: str, problems: list[Problem], warnings: list[Problem]) -> None:
    for key in REQUIRED:
        if key != "hasPart" and meta.get(key) in (None, "", []):  # hasPart: checked with the files
            problems.append(Problem(where, None, "required attribute is missing (CommonEval dataset spec)", key))
    for key in DEFAULTED:
        if meta.get(key) in (None, ""):
            warnings.append(Problem(where, None, "missing: the spec requires it (CommonEval's code assumes "
                                                 + ("'eng')" if key == "language" else "'CC-BY-NC-SA-4.0')"), key))


def expected_part_names(ident: str, n: int) -> list[str]:
    """`<id>.jsonl` for one part, `<id>_000.jsonl`, `<id>_001.jsonl`, … for several."""
    return [f"{ident}.jsonl"] if n == 1 else [f"{ident}_{i:03d}.jsonl" for i in range(n)]


def _found_parts(base: Path, ident: str) -> list[str]:
    names = [f.name for f in base.glob(f"{ident}*.jsonl")
             if f.name == f"{ident}.jsonl" or (_SHARD_RE.search(f.name) and f.name.startswith(f"{ident}_"))]
    return sorted(names)


def _part_files(yaml_path: Path, meta: dict[str, Any], ident: str, problems: list[Problem]) -> list[Path]:
    base, where = yaml_path.parent, str(yaml_path)
    has_part = meta.get("hasPart")
    if has_part is None:
        found = _found_parts(base, ident)
        hint = f": add hasPart: {found}" if found else ""
        problems.append(Problem(where, None, f"required attribute is missing{hint}", "hasPart"))
        return []
    if isinstance(has_part, str):
        has_part = [has_part]
    if not isinstance(has_part, list) or not has_part or not all(isinstance(x, str) for x in has_part):
        problems.append(Problem(where, None, "must be a non-empty list of file names", "hasPart"))
        return []
    outside = [name for name in has_part if not is_inside(base, name)]
    for name in outside:
        problems.append(Problem(where, None, f"{name}: must be a file inside the dataset directory", "hasPart"))
    if outside:
        return []
    expected = expected_part_names(ident, len(has_part))
    if has_part != expected:
        problems.append(Problem(where, None, f"{has_part} should be {expected} (the spec's naming: <id>.jsonl, "
                                             "or <id>_NNN.jsonl from 000 for several files)", "hasPart"))
    missing = [name for name in has_part if not (base / name).is_file()]
    for name in missing:
        problems.append(Problem(where, None, f"{name}: no such file", "hasPart"))
    return [base / name for name in has_part if name not in missing]


def _itemset_fields(meta: dict[str, Any], where: str, problems: list[Problem]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, attr in _FIELDS.items():
        value = meta.get(key)
        if value is not None and not isinstance(value, (str, int, float)):
            problems.append(Problem(where, None, "must be a string", key))
        elif value is not None:
            fields[attr] = str(value)
    return fields


def read_commoneval(path: str | Path) -> ItemSet:
    """Read a CommonEval dataset (the directory or its YAML); raise `InputError` listing every problem."""
    yaml_path = find_yaml(path)
    where = str(yaml_path)
    problems: list[Problem] = []
    warnings: list[Problem] = []
    meta = canonical_attributes(_load_yaml(yaml_path), where, warnings)
    ident = str(meta.get("identifier", yaml_path.stem))
    if "identifier" in meta and ident.casefold() != yaml_path.stem.casefold():
        problems.append(Problem(where, None, f"{ident!r} does not match the file name {yaml_path.name}",
                                "identifier"))
    check_required(meta, where, problems, warnings)
    check_dates(meta, where, problems)
    fields = _itemset_fields(meta, where, problems)
    fields["identifier"] = yaml_path.stem
    extra = {k: _plain(v) for k, v in meta.items() if k not in RESERVED_KEYS}
    located: list[tuple[Path, int, Item]] = []
    parts: list[tuple[str, int]] = []
    for part in _part_files(yaml_path, meta, yaml_path.stem, problems):
        rows = parse_item_lines(part, problems)
        parts.append((part.name, len(rows)))
        located.extend((part, line, item) for line, item in rows)
    problems.extend(check_unique_identifiers(located))
    if problems:
        raise InputError(problems)
    itemset = ItemSet(**fields, metadata=extra, items=[item for _, _, item in located])
    dialect = _yaml_dialect(meta, itemset.items)
    itemset.with_spelling(DatasetSpelling(yaml_path.read_bytes(), _meaning(itemset), parts, dialect, warnings))
    return itemset


def _yaml_dialect(meta: dict[str, Any], items: Sequence[Item]) -> Dialect | None:
    if not set(meta) <= set(STANDARD):
        return Dialect.SPEC
    dialects = {item_dialect(it, Dialect.SPEC) for it in items if it.spelling is not None}
    return dialects.pop() if len(dialects) == 1 else None


def _meaning(items: ItemSet) -> dict[str, Any]:
    return items.model_dump(exclude={"items"})


# --- writing ---------------------------------------------------------------------------------


def _chunks(items: ItemSet, shard_size: int | None) -> dict[str, list[Item]]:
    ident, rows = items.identifier, items.items
    spelling = items.spelling
    if shard_size is None and isinstance(spelling, DatasetSpelling) and sum(n for _, n in spelling.parts) == len(
            rows) and [name for name, _ in spelling.parts] == expected_part_names(ident, len(spelling.parts)):
        out: dict[str, list[Item]] = {}
        start = 0
        for name, n in spelling.parts:  # the source's own sharding
            out[name] = rows[start:start + n]
            start += n
        return out
    if shard_size is None or len(rows) <= shard_size:
        return {f"{ident}.jsonl": rows}
    return {f"{ident}_{n:03d}.jsonl": rows[i:i + shard_size] for n, i in enumerate(range(0, len(rows), shard_size))}


def _header(items: ItemSet, part_names: list[str]) -> dict[str, Any]:
    header: dict[str, Any] = {"identifier": items.identifier}
    for key, attr in _FIELDS.items():
        value = getattr(items, attr)
        if key != "identifier" and value is not None:
            header[key] = value
    header["hasPart"] = part_names
    header.update(items.metadata)
    return header


def _check_header(header: dict[str, Any], where: str) -> None:
    problems: list[Problem] = []
    check_required(header, where, problems, [])
    check_dates(header, where, problems)
    if problems:
        raise InputError(problems)


def commoneval_yaml(header: dict[str, Any], notes: list[str]) -> str:
    """The dataset YAML as CommonEval's code writes it: its attributes only, in its order, dates quoted."""
    out: dict[str, Any] = {}
    for key in STANDARD:
        if key in header:
            value = header[key]
            out[key] = value.isoformat() if isinstance(value, dt.date) else value
    dropped = [k for k in header if k not in STANDARD]
    if dropped:
        notes.append(f"{header['identifier']}.yaml: attributes {dropped} dropped (CommonEval's reader refuses "
                     "attributes outside its Dataset; write --dialect spec to keep them)")
    if not isinstance(out.get("source"), str) and out.get("source") is not None:
        out["source"] = yaml.safe_dump(out["source"], default_flow_style=True, width=1_000_000).strip()
    return str(yaml.dump(out, sort_keys=False))


def commoneval_files(items: ItemSet, shard_size: int | None = None, dialect: Dialect | None = None,
                     notes: list[str] | None = None) -> dict[str, bytes]:
    """File name → bytes for a CommonEval directory holding `items` (YAML last).

    `dialect` None keeps what was read (spec for records that were never read from a file).
    """
    notes = notes if notes is not None else []
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
    chunks = _chunks(items, shard_size)
    header = _header(items, list(chunks))
    _check_header(header, f"{ident}.yaml")
    spelling = items.spelling
    own = spelling.dialect if isinstance(spelling, DatasetSpelling) else None
    files = {name: render_lines(chunk, dialect, own or Dialect.SPEC) for name, chunk in chunks.items()}
    files[f"{ident}.yaml"] = _yaml_bytes(items, header, dialect, notes)
    return files


def _yaml_bytes(items: ItemSet, header: dict[str, Any], dialect: Dialect | None, notes: list[str]) -> bytes:
    spelling = items.spelling
    if isinstance(spelling, DatasetSpelling):
        same_parts = [n for n, _ in spelling.parts] == header["hasPart"]
        if same_parts and spelling.meaning == _meaning(items) and dialect in (None, spelling.dialect):
            return spelling.raw
        dialect = dialect or spelling.dialect
    if dialect is Dialect.COMMONEVAL:
        return commoneval_yaml(header, notes).encode("utf-8")
    text = yaml.dump(header, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    return str(text).encode("utf-8")


def write_commoneval(out_dir: str | Path, items: ItemSet, shard_size: int | None = None,
                     dialect: Dialect | None = None, notes: list[str] | None = None) -> list[Path]:
    """Write `items` as a CommonEval directory; a new directory appears whole or not at all.

    Into an existing directory each file is replaced atomically, the YAML last, and stale shards of
    the same dataset are removed. Returns the paths written; `notes` collects what could not be kept.
    """
    out = Path(out_dir)
    files = commoneval_files(items, shard_size, dialect, notes)
    ident = items.identifier

    def carry(name: str) -> bool:  # other datasets' files and the user's own stay; this dataset's are rewritten
        own = name == f"{ident}.yaml" or name == f"{ident}.jsonl" or bool(
            name.startswith(f"{ident}_") and _SHARD_RE.search(name))
        return not own and name not in files

    with atomic_directory(out, carry) as tmp:  # swapped in whole: never a mix of old and new items
        for name, data in files.items():
            (tmp / name).write_bytes(data)
    return [out / name for name in files]


def complete_metadata(items: ItemSet, meta: dict[str, str], source: str, notes: list[str]) -> ItemSet:
    """`items` with the attributes given (`--meta KEY=VALUE`, names matched case-insensitively) and every
    required attribute the source lacks filled in, each fill named in `notes`."""
    given = canonical_attributes(meta, "--meta", [])
    fields = {attr: given.pop(key) for key, attr in _FIELDS.items() if key in given and key != "identifier"}
    given.pop("identifier", None)
    metadata = {**items.metadata, **given}
    if isinstance(metadata.get("source"), dict):  # a benchmark's provenance: keep it, under another name
        metadata["sourceProvenance"] = metadata.pop("source")
    categories = {it.category for it in items.items}
    fills = {
        "created": dt.date.today().isoformat(),
        "creator": "unknown",
        "description": fields.get("name") or items.name or f"{items.identifier}, converted by proctor from {source}",
        "source": source,
        "subject": next(iter(categories)) if len(categories) == 1 and None not in categories else "unspecified",
        "language": "eng",  # what CommonEval's code assumes when it is missing
    }
    description = fields.get("description") or items.description
    for key, value in fills.items():
        present = description if key == "description" else metadata.get(key)
        if present in (None, ""):
            if key == "description":
                fields["description"] = value
            else:
                metadata[key] = value
            notes.append(f"{key}: not in the source, set to {value!r} (give --meta {key}=VALUE)")
    if not fields and metadata == items.metadata:
        return items
    return items.model_copy(update={**fields, "metadata": metadata})
