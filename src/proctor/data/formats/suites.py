"""Prompts and test suites in probsem's layout: `<P>.txt` is a prompt, `<P>_<T>.json` its suite `T`.

A suite file is one JSON object: `pretext` and `posttext` (strings, optional, default ""), `context`
(a list of `{"text": str, "expected": int}`; `expected` indexes `queries`, -1 = not scored) and
`queries` (distinct, non-empty strings). Problems are reported as `path:line: field: message`, with the
line of the offending field in the JSON text where it can be found, and every problem at once.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ...util.errors import InputError, Problem
from ...util.textio import load_json, read_text, write_json_atomic, write_text_atomic
from ..records import ContextCase, Prompt, TestSuite

_KEYS = ("pretext", "context", "posttext", "queries")


def read_prompt(path: str | Path) -> Prompt:
    """A prompt file: its whole text (BOM and CRLF normalized), named after the file stem."""
    p = Path(path)
    return Prompt(name=p.stem, text=read_text(p))


def suite_name(path: str | Path, prompt: str | None = None) -> str:
    """`T` of `<P>_<T>.json`: the part after `prompt + "_"` if given, else after the last underscore."""
    stem = Path(path).stem
    if prompt is not None and stem.startswith(prompt + "_") and len(stem) > len(prompt) + 1:
        return stem[len(prompt) + 1 :]
    return stem.rsplit("_", 1)[-1]


def read_suite(path: str | Path, prompt: str | None = None) -> TestSuite:
    """Read and validate one suite file; raise InputError listing every problem."""
    p = Path(path)
    data = load_json(p)
    text = read_text(p)
    problems: list[Problem] = []
    locate = _Locator(text)

    def bad(message: str, field: str, *where: str | int) -> None:
        problems.append(Problem(str(p), locate(where), message, field))

    if not isinstance(data, dict):
        raise InputError.at(p, "a suite must be a JSON object with pretext, context, posttext and queries", 1)
    for key in data:
        if key not in _KEYS:
            bad(f"unknown key (expected {', '.join(_KEYS)})", key, key)
    for key in ("pretext", "posttext"):
        if not isinstance(data.get(key, ""), str):
            bad("must be a string", key, key)
    queries = data.get("queries")
    if "queries" not in data:
        bad("missing", "queries")
    elif not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        bad("must be a list of strings", "queries", "queries")
        queries = None
    else:
        if not queries:
            bad("must not be empty", "queries", "queries")
        for i, q in enumerate(queries):
            if not q.strip():
                bad("empty query", f"queries[{i}]", "queries")
        dup = sorted(q for q, n in Counter(queries).items() if n > 1)
        if dup:
            bad(f"queries must be distinct; repeated: {dup}", "queries", "queries")
    contexts = data.get("context")
    cases: list[ContextCase] = []
    if "context" not in data:
        bad("missing", "context")
    elif not isinstance(contexts, list) or not contexts:
        bad("must be a non-empty list of {text, expected} objects", "context", "context")
    else:
        for i, c in enumerate(contexts):
            field = f"context[{i}]"
            if not isinstance(c, dict):
                bad("must be an object with text and expected", field, "context", i)
                continue
            extra = sorted(set(c) - {"text", "expected"})
            if extra:
                bad(f"unknown keys {extra} (expected text, expected)", field, "context", i)
            t, e = c.get("text"), c.get("expected")
            if not isinstance(t, str):
                bad("missing or not a string", f"{field}.text", "context", i, "text")
            if not isinstance(e, int) or isinstance(e, bool):
                bad("missing or not an integer", f"{field}.expected", "context", i, "expected")
            elif queries is not None and not -1 <= e < len(queries):
                bad(f"{e} is out of range for {len(queries)} queries (0..{len(queries) - 1}, or -1 for not scored)",
                    f"{field}.expected", "context", i, "expected")
            elif isinstance(t, str):
                cases.append(ContextCase(text=t, expected=e))
    if problems:
        raise InputError(problems)
    return TestSuite(
        name=suite_name(p, prompt),
        pretext=data.get("pretext", ""),
        context=cases,
        posttext=data.get("posttext", ""),
        queries=list(queries or []),
    )


def read_prompt_dir(directory: str | Path) -> list[tuple[Prompt, list[TestSuite]]]:
    """Every `<P>.txt` in `directory` with its `<P>_<T>.json` suites (each suite goes to its longest `P`)."""
    d = Path(directory)
    if not d.is_dir():
        raise InputError.at(d, "not a directory")
    prompts = {p.stem: p for p in sorted(d.glob("*.txt"))}
    if not prompts:
        raise InputError.at(d, "no prompt files (<P>.txt) found")
    owned: dict[str, list[Path]] = {name: [] for name in prompts}
    for js in sorted(d.glob("*.json")):
        owners = [name for name in prompts if js.stem.startswith(name + "_") and len(js.stem) > len(name) + 1]
        if owners:
            owned[max(owners, key=len)].append(js)
    problems: list[Problem] = []
    out: list[tuple[Prompt, list[TestSuite]]] = []
    for name, path in prompts.items():
        suites: list[TestSuite] = []
        for js in owned[name]:
            try:
                suites.append(read_suite(js, prompt=name))
            except InputError as e:
                problems.extend(e.problems)
        out.append((read_prompt(path), suites))
    if problems:
        raise InputError(problems)
    return out


def write_prompt(path: str | Path, prompt: Prompt) -> None:
    """Write the prompt text exactly (atomic)."""
    write_text_atomic(path, prompt.text)


def write_suite(path: str | Path, suite: TestSuite) -> None:
    """Write a suite in probsem's JSON layout (atomic; the name lives in the file name, not the file)."""
    data: dict[str, Any] = {
        "pretext": suite.pretext,
        "context": [{"text": c.text, "expected": c.expected} for c in suite.context],
        "posttext": suite.posttext,
        "queries": list(suite.queries),
    }
    write_json_atomic(path, data)


class _Locator:
    """Best-effort line of a field: follow keys (`"key":`) and list indexes (the i-th `"next_key"` or `{`).

    Match positions are found once per (pattern, start) and line numbers by bisection, so locating
    every one of N bad contexts costs O(N) in all, not O(N) each.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.matches: dict[tuple[str, int], list[int]] = {}

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def _after(self, pattern: str, pos: int) -> list[int]:
        key = (pattern, pos)
        if key not in self.matches:
            self.matches[key] = [m.start() for m in re.compile(pattern).finditer(self.text, pos)]
        return self.matches[key]

    def __call__(self, where: tuple[str | int, ...]) -> int | None:
        if not where:
            return None
        pos, i = 0, 0
        while i < len(where):
            step = where[i]
            if isinstance(step, str):
                m = re.compile(re.escape(json.dumps(step)) + r"\s*:").search(self.text, pos)
                if m is None:
                    break
                pos = m.start()
                i += 1
            else:  # list index: the (step+1)-th object of the list, or of the next key inside it
                target = where[i + 1] if i + 1 < len(where) else None
                pattern = re.escape(json.dumps(target)) + r"\s*:" if isinstance(target, str) else r"\{"
                found = self._after(pattern, pos + 1)
                if step >= len(found):
                    return self.line(found[-1] if found else pos)
                pos = found[step]
                i += 2 if isinstance(target, str) else 1
        return self.line(pos)


def sanitize_filename(text: str) -> str:
    """probsem's own rule for output names: path-unsafe characters (and a leading/trailing space or dot)
    become '-'."""
    return re.sub(r"^[ .]|[/<>:\"\\\\|?*]+|[ .]$", "-", text)


def model_slug(model: str) -> str:
    """The model as probsem names it: the name without proctor's backend prefix (`hf:`, `openai:`…)."""
    backend, sep, name = model.partition(":")
    return name if sep and backend.isidentifier() and name else model


def results_stem(prompt: str, suite: str, model: str | None) -> str:
    """`<prompt>_<suite>_<model-slug>_results`, as probsem names its outputs (one set per model, so
    results of several models accumulate in one directory); without a model, `<prompt>_<suite>_results`."""
    run_id = f"{prompt}_{suite}" if model is None else f"{prompt}_{suite}_{model_slug(model)}"
    return f"{sanitize_filename(run_id)}_results"


def write_prompt_suites(out_dir: str | Path, pairs: list[tuple[Prompt, list[TestSuite]]]) -> list[Path]:
    """probsem's input layout: `<P>.txt` for each prompt and `<P>_<T>.json` for each of its suites."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError.at(out, "exists and is not a directory")
    written: list[Path] = []
    for prompt, suites in pairs:
        for suite in suites:
            if not suite.name:
                raise InputError.at(f"{prompt.name}_?.json", "a suite needs a name for its file <P>_<T>.json")
            path = out / f"{prompt.name}_{suite.name}.json"
            write_suite(path, suite)
            written.append(path)
        write_prompt(out / f"{prompt.name}.txt", prompt)
        written.append(out / f"{prompt.name}.txt")
    return written
