import subprocess
import sys

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
