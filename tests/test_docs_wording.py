"""What the docs say of proctor itself matches proctor: the store's file name, and no release after the
version it is (#32.32)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from proctor.run.store import STORE_FILENAME

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
VERSION = tuple(int(p) for p in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"].split(".")[:2])
# "before 0.2", "since proctor 0.3", "proctor 0.2 wrote": a release named (a 0.x number after these words)
RELEASE = re.compile(r"\b(?:before|since|until|as of|release|version) (?:proctor )?(0)\.(\d+)\b(?![.\d%×])|"
                     r"\bproctor (0)\.(\d+)\b(?![.\d])")


def test_the_docs_name_the_store_file_proctor_writes() -> None:
    text = "\n".join(p.read_text() for p in PAGES)
    assert "history.db" not in text
    assert STORE_FILENAME in text


def test_the_docs_speak_of_no_release_after_the_current_version() -> None:
    later = []
    for page in PAGES:
        for lineno, line in enumerate(page.read_text().splitlines(), start=1):
            for m in RELEASE.finditer(line):
                groups = m.groups()
                major, minor = (int(g) for g in (groups[0:2] if groups[0] else groups[2:4]))
                if (major, minor) > VERSION:
                    later.append(f"{page.relative_to(ROOT)}:{lineno}: {m[0]}")
    assert later == []
