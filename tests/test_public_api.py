import subprocess
import sys

import pytest

import proctor


def test_all_names_exist_and_are_sorted() -> None:
    for name in proctor.__all__:
        assert hasattr(proctor, name), name
    assert list(proctor.__all__) == sorted(proctor.__all__)


def test_import_is_light() -> None:
    """`import proctor` must not pull torch, transformers, datasets or the HTTP client (aiohttp)."""
    code = ("import sys, proctor; bad=[m for m in ('torch','transformers','datasets','aiohttp') if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_run_entry_points_are_exported_and_load_on_first_use() -> None:
    """`evaluate`, `Task`, `RunOptions`, `Scorer` are public; `import proctor` alone does not import the runner."""
    code = ("import sys, proctor; before = 'proctor.run.runner' in sys.modules; "
            "from proctor import RunOptions, Scorer, Task, evaluate; "
            "from proctor.run.runner import RunOptions as R; from proctor.run.pipeline import evaluate as e; "
            "from proctor.data.tasks import Task as T; from proctor.scoring.base import Scorer as S; "
            "print(before, (RunOptions, Scorer, Task, evaluate) == (R, S, T, e), 'evaluate' in dir(proctor))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]
    assert {"eval", "eval_async", "evaluate"} <= set(proctor.__all__)  # help(proctor) shows the entry points
    with pytest.raises(AttributeError, match="no_such_name"):
        proctor.no_such_name  # noqa: B018


def test_cli_commands_are_registered_once() -> None:
    """main() runs many times in one process (tests, notebooks): the command list must not grow."""
    from proctor.cli import app, main

    main(["version"])
    n = len(app.registered_commands)
    for _ in range(3):
        main(["version"])
    assert len(app.registered_commands) == n
    names = [c.name or c.callback.__name__ for c in app.registered_commands]  # type: ignore[union-attr]
    assert len(names) == len(set(names))


def test_help_is_short_and_starts_with_an_example() -> None:
    """help(proctor) was 8,000 lines with no example: now the entry points and an example that runs."""
    import pydoc

    text = pydoc.render_doc(proctor, renderer=pydoc.plaintext)
    assert len(text.splitlines()) < 200  # was 8,000
    assert "proctor.eval(" in text.split("FUNCTIONS")[0]
