"""Every command in the README's ```bash blocks works as written on the bundled examples.

The commands run in order, through bash (globs, `;`, line continuations as a user's shell would), from a
scratch copy of the repository's `examples/`, with `proctor` on PATH. The one stand-in: the README's
`http://localhost:8000/v1` and the OpenAI/Anthropic APIs are a real local server (`proctor.testing`)
answering every request with a fixed reply that is both an extractable answer and a judge's grade.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from test_first_hour import make_sandbox

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LOCAL_SERVER = "http://localhost:8000/v1"  # the README's placeholder for "your server"
REPLY = "The answer is (A).\nGRADE: CORRECT"

# Commands not run here, each with its reason. Keep this list tiny and honest.
SKIPPED = {
    "make demo": "run on a fresh clone by the release check (it creates .venv and installs packages)",
    "make test": "this test suite itself",
}


def readme_commands(text: str) -> list[str]:
    """The commands of every ```bash block: continuation lines joined, comments and blank lines dropped."""
    out: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        joined = re.sub(r"\s*\\\n\s*", " ", block)
        for line in joined.splitlines():
            cmd = _strip_comment(line).strip()
            if cmd:
                out.append(cmd)
    return out


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a `#` outside quotes, after whitespace or at the start)."""
    quote: str | None = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def test_readme_commands_are_parsed() -> None:
    cmds = readme_commands(README.read_text(encoding="utf-8"))
    assert cmds[:2] == ["make demo", "make test"]  # the README opens with the two entry points
    assert sum(c.startswith("proctor ") for c in cmds) >= 12
    assert all(c in SKIPPED or c.startswith("proctor ") for c in cmds), [c for c in cmds if not c.startswith("proctor")]
    assert readme_commands("```bash\nproctor a \\\n    --b 'x # y'  # note\n```") == ["proctor a --b 'x # y'"]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A scratch working directory with the bundled examples and a `proctor` executable on PATH."""
    return make_sandbox(tmp_path)


@pytest.mark.long
def test_every_readme_command_runs_on_the_bundled_examples(sandbox: Path) -> None:
    from proctor.testing.server import serve

    cmds = [c for c in readme_commands(README.read_text(encoding="utf-8")) if c not in SKIPPED]
    with serve(responder=f"fixed={REPLY}") as srv:
        env = {
            **os.environ,
            "PATH": f"{sandbox / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
            "PROCTOR_STORE": str(sandbox / "store.sqlite"),
            "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-test",
            "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "sk-ant-test",
            "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "COLUMNS": "120",
        }
        for cmd in cmds:
            line = cmd.replace(LOCAL_SERVER, srv.base_url)
            res = subprocess.run(["bash", "-c", line], cwd=sandbox, env=env, capture_output=True, text=True,
                                 timeout=600, check=False)
            assert res.returncode == 0, f"$ {cmd}\nexit {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
            assert "Traceback" not in res.stderr, f"$ {cmd}\n{res.stderr[-3000:]}"
    assert (sandbox / "out" / "report.html").stat().st_size > 10_000
    assert (sandbox / "runs" / "mc-logprob" / "samples.jsonl").exists()


def test_the_readme_says_what_a_new_user_needs_beyond_the_two_commands() -> None:
    """#32.28: after `make demo`, how to get `proctor` on PATH; that the browser tests need Chromium; the
    bundled stand-in server that makes the API examples runnable; the disk space the test venvs take."""
    text = README.read_text(encoding="utf-8")
    head = text.split("## Why proctor")[0]
    assert ".venv/bin/proctor" in head and "source .venv/bin/activate" in head
    assert "Chromium" in head and "PROCTOR_CHROMIUM" in head
    assert "python -m proctor.testing`" in text
    assert re.search(r"about \d+ GB of disk", head)


def test_the_stand_in_server_the_readme_names_starts() -> None:
    """The README's `python -m proctor.testing` is a command that runs (its --help), with nothing on stderr (the
    module path `proctor.testing.server` run with -m printed runpy's warning of a module imported twice)."""
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    res = subprocess.run([sys.executable, "-m", "proctor.testing", "--help"], capture_output=True, text=True,
                         env=env, timeout=60, check=False)
    assert res.returncode == 0 and "--port" in res.stdout and res.stderr == ""


def test_the_python_section_leads_with_proctor_eval_and_its_example_runs(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """#41.22: the README's Python line listed get_model, evaluate, read_run… and not `proctor.eval`, the one call
    that runs what `proctor run` runs. It names it first, and its ```python example runs as written."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("Python: "):text.index("## Layout")]
    assert section.index("proctor.eval`") < section.index("proctor.evaluate`") and "eval_spec" in section
    (block,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROCTOR_STORE", str(tmp_path / "store.sqlite"))
    exec(compile(block, "README.md", "exec"), {})  # noqa: S102  # our own documentation, run as a reader would
    assert len(list((tmp_path / "runs").iterdir())) == 1
