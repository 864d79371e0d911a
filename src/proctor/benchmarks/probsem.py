"""probsem test suites as one Task: `DIR`, or `PROMPT_FILE SUITE_FILE...`, scored by log-probability."""

from __future__ import annotations

from pathlib import Path

from ..data.formats.convert import suite_to_items
from ..data.formats.suites import read_prompt, read_prompt_dir, read_suite
from ..data.prompts import ItemPromptBuilder
from ..data.records import Prompt, TestSuite
from ..data.tasks import Task
from ..scoring.suites import SUITE_CLUSTER, ScoreOptions, SuiteScorer
from ..util.errors import InputError
from .hub import file_sha256

Groups = list[tuple[Prompt, list[TestSuite]]]


def load_suites(paths: list[Path]) -> tuple[Groups, list[Path]]:
    """(prompt, suites) groups and every input file read, from `DIR` or `PROMPT_FILE SUITE_FILE...`."""
    if len(paths) == 1 and paths[0].is_dir():
        groups = [(p, s) for p, s in read_prompt_dir(paths[0]) if s]
        if not groups:
            raise InputError.at(paths[0], "no suite files (<P>_<T>.json) next to any prompt (<P>.txt)")
        files = [paths[0] / f"{p.name}.txt" for p, _ in groups]
        files += [paths[0] / f"{p.name}_{s.name}.json" for p, ss in groups for s in ss]
        return groups, files
    if len(paths) < 2:
        raise InputError.at(paths[0], "give a directory, or a prompt file followed by at least one suite file")
    prompt = read_prompt(paths[0])
    problems = []
    suites = []
    for sp in paths[1:]:
        try:
            suites.append(read_suite(sp, prompt=prompt.name))
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        raise InputError(problems)
    names = [s.name for s in suites]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError.at(paths[1], f"suite names repeat: {dup} (names come from <P>_<T>.json)")
    return [(prompt, suites)], list(paths)


def suite_task(groups: Groups, files: list[Path], options: ScoreOptions) -> Task:
    """One Task over every context of every suite, carrying the suite scorer."""
    names = list(dict.fromkeys(p.name for p, _ in groups))
    items = [it for prompt, suites in groups for s in suites for it in suite_to_items(prompt, s)]
    source = {"source": "probsem", "files": [str(f) for f in files], "sha256": {str(f): file_sha256(f) for f in files}}
    return Task("+".join(names), items, ItemPromptBuilder(), source=source, scorer=SuiteScorer(options),
                cluster=SUITE_CLUSTER)


def load_suite_task(paths: list[Path], options: ScoreOptions) -> Task:
    """The suites at `paths` as one Task scored with `options`."""
    groups, files = load_suites(paths)
    return suite_task(groups, files, options)
