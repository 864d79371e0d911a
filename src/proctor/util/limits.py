"""Parsing limits: no input file, line, JSON document or YAML document can exhaust memory or the stack.

Every limit can be raised through an environment variable when a legitimate input needs it; going past
one is a `path:line: message` (exit 2), never a traceback or a runaway process.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import InputError


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError.at(name, f"expected a whole number, got {raw!r}") from None
    if value < 1:
        raise InputError.at(name, f"must be at least 1, got {value}")
    return value


def max_file_bytes() -> int:
    """Largest input file read (PROCTOR_MAX_FILE_BYTES, default 4 GiB)."""
    return _env_int("PROCTOR_MAX_FILE_BYTES", 4 << 30)


def max_record_bytes() -> int:
    """Largest run-directory JSON record read (checksums, signature, manifest, shard and plan files, batch state:
    PROCTOR_MAX_RECORD_BYTES, default 512 MiB): each is parsed whole, so a sparse or endless file must stop first."""
    return _env_int("PROCTOR_MAX_RECORD_BYTES", 512 << 20)


def max_member_bytes() -> int:
    """Largest member of a zip archive (an Inspect `.eval`) once inflated (PROCTOR_MAX_MEMBER_BYTES, default 256 MiB)."""
    return _env_int("PROCTOR_MAX_MEMBER_BYTES", 256 << 20)


def max_line_bytes() -> int:
    """Longest JSONL line (PROCTOR_MAX_LINE_BYTES, default 64 MiB)."""
    return _env_int("PROCTOR_MAX_LINE_BYTES", 64 << 20)


MAX_JSON_DEPTH = 200  # nested arrays/objects; deeper input is refused before it is parsed or walked
_NOT_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\[\]{}"]+')  # strings, and all but brackets


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON `text` nests arrays/objects more than `limit` deep, found without recursion.

    Strings are dropped and the brackets left are peeled one innermost level per pass (`[]`, `{}`): a
    document still holding brackets after `limit` passes that each removed some is deeper than `limit`.
    Each pass is a C-speed scan; ordinary data (a few levels) takes a few passes.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", text)
    for _ in range(limit):
        peeled = brackets.replace("[]", "").replace("{}", "")
        if peeled == brackets or not peeled:
            return False  # balanced and shallow, or malformed (the parser says how)
        brackets = peeled
    return True


def check_json_depth(text: str, path: str | Path, line: int | None = None) -> None:
    """Refuse JSON nested more than MAX_JSON_DEPTH deep before a parser or a walker recurses into it."""
    if json_depth_exceeds(text):
        raise InputError.at(path, f"JSON nested deeper than {MAX_JSON_DEPTH} levels", line)


MAX_YAML_NODES = 1_000_000  # nodes after expanding aliases (billion laughs expands to 10^9)
MAX_YAML_DEPTH = 200
_YAML_INT = "tag:yaml.org,2002:int"


def yaml_load(text: str, path: str | Path) -> Any:
    """`yaml.safe_load` with aliases, expanded size and depth bounded; refusals are `InputError`s.

    PyYAML shares an aliased node instead of copying it, so a billion-laughs document parses quickly and
    explodes only when walked; the expanded size is measured on the node graph before anything is built.
    """
    return yaml_load_located(text, path)[0]


def yaml_load_located(text: str, path: str | Path) -> tuple[Any, Callable[[Sequence[int | str]], int | None]]:
    """`yaml_load`, plus a function giving the line of a location path (`("models", 1, "name")`) in the text:
    the deepest node on the path that exists, from the YAML node marks."""
    import yaml

    node = yaml_compose(text, path)
    if node is None:
        return None, lambda loc: None
    with _yaml_refusals(path):
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_document(node), lambda loc: _yaml_line(node, loc)
        finally:
            loader.dispose()


def _yaml_line(root: Any, loc: Sequence[int | str]) -> int | None:
    """1-based line of the deepest node of `root` along `loc` (mapping keys, sequence indices)."""
    import yaml

    node = root
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if getattr(k, "value", None) == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            child = node.value[part]
        if child is None:
            break
        node = child
    return int(node.start_mark.line) + 1


def yaml_compose(text: str, path: str | Path) -> Any:
    """The YAML node graph of `text` (lines kept, for `path:line:` messages), bounded as `yaml_load` bounds it;
    None for an empty document."""
    import yaml

    with _yaml_refusals(path):
        loader = yaml.SafeLoader(text)  # the reader refuses control characters already here
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_yaml_graph(node, path)
            return node
        finally:
            loader.dispose()


@contextmanager
def _yaml_refusals(path: str | Path) -> Iterator[None]:
    """PyYAML's errors and a stack overflow while reading `path` as `InputError`s."""
    import yaml

    try:
        yield
    except RecursionError:
        raise InputError.at(path, f"YAML nested too deeply (limit {MAX_YAML_DEPTH})") from None
    except yaml.YAMLError as e:
        raise _malformed(path, e) from None


def _malformed(path: str | Path, e: Exception) -> InputError:
    """`path:line: malformed YAML: problem`, the line from the error's mark when it has one."""
    mark = getattr(e, "problem_mark", None)
    return InputError.at(path, f"malformed YAML: {getattr(e, 'problem', None) or e}",
                         mark.line + 1 if mark is not None else None)


def _check_yaml_graph(root: Any, path: str | Path) -> None:
    """Refuse recursive aliases, nesting deeper than MAX_YAML_DEPTH and more than MAX_YAML_NODES expanded."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node: Any, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        line = node.start_mark.line + 1
        if key in on_path:
            raise InputError.at(path, "YAML alias refers to itself (a recursive structure)", line)
        if depth > MAX_YAML_DEPTH:
            raise InputError.at(path, f"YAML nested deeper than {MAX_YAML_DEPTH} levels", line)
        on_path.add(key)
        total = 1
        value = node.value
        if node.tag == _YAML_INT and len(value) > sys.get_int_max_str_digits():
            raise InputError.at(path, f"YAML integer of {len(value):,} characters (at most "
                                      f"{sys.get_int_max_str_digits():,} digits)", line)
        if isinstance(value, list):
            for child in value:
                pairs = child if isinstance(child, tuple) else (child,)
                total += sum(size(c, depth + 1) for c in pairs)
                if total > MAX_YAML_NODES:
                    raise InputError.at(path, f"YAML expands to more than {MAX_YAML_NODES:,} nodes "
                                              "(aliases that multiply, e.g. a billion-laughs document)", line)
        on_path.discard(key)
        sizes[key] = total
        return total

    size(root, 0)


__all__ = ["MAX_JSON_DEPTH", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "check_json_depth", "max_file_bytes", "max_line_bytes", "max_record_bytes",
           "yaml_compose", "yaml_load", "yaml_load_located"]
