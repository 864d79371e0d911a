"""Running untrusted code contained: bubblewrap, or (`--unsafe-exec`) a bare subprocess.

`Bubblewrap` runs one program in a fresh namespace sandbox: no network (its own empty network namespace), a
read-only root made of the host's /usr, /etc and /lib* only, fresh size-limited tmpfs as the working directory,
/tmp and a private /dev/shm (/dev itself read-only), the program's files read-only under /input, a clean
environment (PATH, HOME, LANG and nothing else: no API keys, no proctor variables), its own PID namespace (killing
its init kills every process it made, daemons included), and limits set by `prlimit` inside: CPU seconds, address
space, processes (RLIMIT_NPROC, counted per user: as root each execution gets a user id of its own), file size.
A seccomp filter refuses what no limit counts (`memfd_create` files, SysV shared memory) and new namespaces
(a user namespace of its own could mount an unbounded tmpfs): `seccomp_filter`, x86_64 and aarch64. The wall limit is enforced from outside. Standard output and error go to
host files the program cannot see; their size is bounded by the file-size limit. A bubblewrap that ends without
reporting its program's exit (its own set-up failed) is the execution's error, not the program's failure.

`Unsafe` runs the same program as a plain subprocess with the same limits and environment but no namespace:
only with `--unsafe-exec`, when no sandbox is available (what it hides and what it cannot: its docstring).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Protocol

from ...core.spec import Sandbox
from ...log.runlog import ExecLimit
from ...util.errors import ProctorError

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap)"
SANDBOX_PYTHON = ("/usr/bin/python3", "/usr/local/bin/python3")  # an interpreter any user can run
TAIL_CHARS = 2000  # the stderr tail kept in a sample's record
# the sandbox's PID 1: a shell that runs the program as its child (the kernel spares a namespace's init the
# signals a limit sends, SIGXCPU and SIGKILL included) and exits with its status
INIT = ("/bin/sh", "-c", '"$@"; exit $?', "init")
_UID_BASE = 1_900_000_000  # as root, each execution runs as its own unused user id from here
_uid_lock = threading.Lock()
_uid_next = 0


@dataclass(frozen=True)
class Limits:
    """What one execution may use; a limit hit ends it and is named in its record."""

    cpu_s: int = 10  # CPU seconds per process (RLIMIT_CPU)
    wall_s: float = 15.0  # wall-clock seconds for the whole execution
    memory_mb: int = 1024  # address space per process (RLIMIT_AS)
    processes: int = 32  # processes and threads of the execution (RLIMIT_NPROC)
    file_size_mb: int = 16  # largest file it may write, its output included (RLIMIT_FSIZE)
    disk_mb: int = 64  # the size of each tmpfs: the working directory, /tmp and /dev/shm


@dataclass(frozen=True)
class Program:
    """What to run: files placed read-only under /input, the command (relative to /input for the program's
    own files), and its standard input."""

    files: dict[str, str]
    argv: tuple[str, ...] = ("python3", "main.py")
    stdin: str = ""


@dataclass(frozen=True)
class Execution:
    """How one execution ended."""

    exit_code: int | None  # None: killed by the wall limit or failed to start
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    limit: ExecLimit | None = None  # "wall_time", "cpu_time", "memory", "processes", "file_size" when one stopped it
    error: str | None = None  # the sandbox itself failed (not the program)
    sandbox: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.limit is None and self.error is None

    @property
    def stderr_tail(self) -> str:
        return self.stderr[-TAIL_CHARS:]


class Runner(Protocol):
    """A way to execute programs: `Bubblewrap` (contained) or `Unsafe`."""

    name: str

    def run(self, program: Program, limits: Limits) -> Execution: ...


def clean_env(home: str) -> dict[str, str]:
    """The only variables an execution sees."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


def python_for_sandbox() -> str:
    """The interpreter programs run with: the system's (readable by any user id), else this one."""
    return next((p for p in SANDBOX_PYTHON if os.access(p, os.X_OK)), os.path.realpath(sys.executable))


def _processes_of(uid: int) -> dict[int, int]:
    """The processes running as user `uid` now (real user id): PID to its number of threads."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uids = next((line.split() for line in status.splitlines() if line.startswith("Uid:")), [])
        threads = next((line.split()[1] for line in status.splitlines() if line.startswith("Threads:")), "1")
        if len(uids) > 1 and int(uids[1]) == uid and entry.name.isdigit():
            found[int(entry.name)] = int(threads)
    return found


def user_processes(uid: int) -> int:
    """How many tasks (processes and threads) user `uid` runs now: RLIMIT_NPROC counts them all."""
    return sum(_processes_of(uid).values())


def _nproc(limits: Limits, own_uid: bool) -> int:
    """RLIMIT_NPROC for an execution: its own user id (root) counts only its processes; a user's own id counts
    every process the user runs, so the limit is what they run now plus the execution's share."""
    return limits.processes if own_uid else user_processes(os.getuid()) + limits.processes


def _prlimit(limits: Limits, own_uid: bool = True) -> list[str]:
    mb = 1 << 20
    return ["prlimit", f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}", f"--as={limits.memory_mb * mb}",
            f"--nproc={_nproc(limits, own_uid)}",
            f"--fsize={limits.file_size_mb * mb}", "--core=0", "--"]


def execution_uids() -> range:
    """The user ids this process's executions run as (as root): its own thousand, apart from other processes'."""
    start = _UID_BASE + (os.getpid() % 100_000) * 1000
    return range(start, start + 1000)


def _next_uid() -> int:
    global _uid_next
    with _uid_lock:
        _uid_next += 1
        return execution_uids()[_uid_next % 1000]


def _argv(program: Program, python: str, inputs: str) -> list[str]:
    """The command: `python3` is the sandbox's interpreter, a name of the program's files is its path."""
    return [python if a == "python3" else f"{inputs}/{a}" if a in program.files else a for a in program.argv]


# seccomp (classic BPF over `struct seccomp_data`: the call's number at offset 0, the ABI at 4, the first argument's
# low word at 16). Refused: what makes memory no limit counts, with ENOMEM (`memfd_create`, `memfd_secret`: files
# outside every tmpfs; SysV `shmget`: segments outside the address space), and, with EPERM, new namespaces
# (`unshare`, `setns`, `clone` with a CLONE_NEW* flag: a user namespace of its own could mount a tmpfs no size
# bounds); `clone3`, whose flags it cannot read, answers ENOSYS (glibc falls back to `clone`). Every call of another
# ABI (x32, i386 through int 0x80: other numbers) is refused with ENOMEM.
_SECCOMP_ARCH = {  # machine: AUDIT_ARCH_*, the first number of another ABI (or 0), the calls' numbers
    "x86_64": (0xC000003E, 0x40000000, {"memfd_create": 319, "memfd_secret": 447, "shmget": 29, "unshare": 272,
                                        "setns": 308, "clone3": 435, "clone": 56}),
    "aarch64": (0xC00000B7, 0, {"memfd_create": 279, "memfd_secret": 447, "shmget": 194, "unshare": 97,
                                "setns": 268, "clone3": 435, "clone": 220}),
}
_REFUSED = {"memfd_create": "enomem", "memfd_secret": "enomem", "shmget": "enomem", "unshare": "eperm",
            "setns": "eperm", "clone3": "enosys"}
_CLONE_NEW = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_RETURNS = {"allow": 0x7FFF0000, "enomem": 0x00050000 | 12, "eperm": 0x00050000 | 1, "enosys": 0x00050000 | 38}


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The BPF program bubblewrap installs (`--seccomp`) for this machine's architecture; None where unknown."""
    import platform
    import struct

    arch = _SECCOMP_ARCH.get(machine or platform.machine())
    if arch is None:
        return None
    audit, other_abi, numbers = arch
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    # (op, jump if true, jump if false, k): a jump names the return it goes to, None the next instruction
    code: list[tuple[int, str | None, str | None, int]] = [(ld, None, None, 4), (jeq, None, "enomem", audit),
                                                           (ld, None, None, 0)]
    code += [(jge, "enomem", None, other_abi)] * bool(other_abi)
    code += [(jeq, action, None, numbers[call]) for call, action in _REFUSED.items()]
    code += [(jeq, None, "allow", numbers["clone"]), (ld, None, None, 16), (jset, "eperm", "allow", _CLONE_NEW)]
    at = {name: len(code) + i for i, name in enumerate(_RETURNS)}

    def jump(i: int, to: str | None) -> int:
        return 0 if to is None else at[to] - i - 1

    body = [struct.pack("HBBI", op, jump(i, t), jump(i, f), k) for i, (op, t, f, k) in enumerate(code)]
    return b"".join(body + [struct.pack("HBBI", ret, 0, 0, k) for k in _RETURNS.values()])


def classify(exit_code: int | None, stderr: str, timed_out: bool, cpu_bound: bool = False) -> ExecLimit | None:
    """The limit that stopped an execution, from how it ended (wall time first: it is measured outside)."""
    if timed_out:
        return "wall_time"
    if exit_code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or (
            exit_code in (-signal.SIGKILL, 128 + signal.SIGKILL) and cpu_bound):
        return "cpu_time"  # SIGXCPU at the soft limit; SIGKILL one second later at the hard one
    if exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in stderr:
        return "file_size"
    if exit_code not in (0, None) and "No space left on device" in stderr:
        return "disk"
    if exit_code not in (0, None) and ("MemoryError" in stderr or "Cannot allocate memory" in stderr):
        return "memory"
    if exit_code not in (0, None) and ("Resource temporarily unavailable" in stderr
                                       or "can't start new thread" in stderr):
        return "processes"
    return None


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


@dataclass
class Bubblewrap:
    """Executions contained by bubblewrap (see the module docstring)."""

    bwrap: str
    python: str = field(default_factory=python_for_sandbox)
    name: str = "bubblewrap"

    def command(self, limits: Limits, status_fd: int, program: Program, inputs: str,
                seccomp_fd: int | None = None) -> list[str]:
        disk = str(limits.disk_mb << 20)
        binds = [a for d in ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32")
                 for a in ("--ro-bind-try", d, d)]
        seccomp = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
        return [self.bwrap, "--unshare-all", "--as-pid-1", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                *seccomp, *binds, "--proc", "/proc", "--dev", "/dev", "--size", disk, "--tmpfs", "/dev/shm",
                "--remount-ro", "/dev", "--size", disk, "--tmpfs", "/tmp",
                "--size", disk, "--tmpfs", "/work", "--ro-bind", inputs, "/input", "--remount-ro", "/",
                "--chdir", "/work", "--clearenv", *[a for k, v in clean_env("/work").items()
                                                     for a in ("--setenv", k, v)],
                "--json-status-fd", str(status_fd), *INIT, *_prlimit(limits, os.geteuid() == 0),
                *_argv(program, self.python, "/input")]

    def run(self, program: Program, limits: Limits) -> Execution:
        with tempfile.TemporaryDirectory(prefix="proctor-exec-") as tmp:
            root = Path(tmp)
            inputs = _write_inputs(root, program)
            user = _next_uid() if os.geteuid() == 0 else None
            bpf = seccomp_filter()
            if bpf is None:
                return _supervise(lambda fd: self.command(limits, fd, program, inputs), root, program, limits,
                                  self.name, user=user, status=True)
            (root / "seccomp.bpf").write_bytes(bpf)
            with open(root / "seccomp.bpf", "rb") as f:
                return _supervise(lambda fd: self.command(limits, fd, program, inputs, f.fileno()), root, program,
                                  limits, self.name, user=user, status=True, keep_fds=(f.fileno(),))


@dataclass
class Unsafe:
    """Executions as plain subprocesses (no namespace): the limits and environment of `Bubblewrap`, in a temporary
    working directory, its process group killed at the end. Only with `--unsafe-exec`.

    Proctor's own process is made non-dumpable first (`hide_this_process`): a program running as the same user
    cannot read its /proc/PID/environ or memory (where the API keys are). As root each execution runs as a user id
    of its own (the system's interpreter, as in bubblewrap), which reads no other process's environment, and every
    process left with that id is killed at the end. What no subprocess can hide: as an ordinary user, the user's
    other processes (the shell that started proctor, with its exported keys) stay readable to the program."""

    python: str = field(default_factory=lambda: os.path.realpath(sys.executable))
    name: str = "unsafe"

    def run(self, program: Program, limits: Limits) -> Execution:
        hide_this_process()
        with tempfile.TemporaryDirectory(prefix="proctor-exec-") as tmp:
            root = Path(tmp)
            inputs = _write_inputs(root, program)
            work = root / "work"
            work.mkdir()
            user = _next_uid() if os.geteuid() == 0 else None
            if user is not None:
                os.chown(work, user, user)
            python = python_for_sandbox() if user is not None else self.python
            argv = [*_prlimit(limits, own_uid=user is not None), *_argv(program, python, inputs)]
            try:
                return _supervise(lambda fd: argv, root, program, limits, self.name, cwd=str(work),
                                  env=clean_env(str(work)), user=user)
            finally:
                if user is not None:
                    kill_user(user)


@cache
def hide_this_process() -> bool:
    """Make this process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): its /proc/PID files (environ, mem, fd) belong
    to root and ptrace is refused, so a program running as the same user cannot read its environment. False where
    the call is unavailable (not Linux)."""
    import ctypes

    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return False


def kill_user(uid: int) -> None:
    """SIGKILL every process running as `uid` (an execution's own user id: its daemons too)."""
    for pid in _processes_of(uid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _write_inputs(root: Path, program: Program) -> str:
    inputs = root / "input"
    inputs.mkdir()
    for name, text in program.files.items():
        path = inputs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)
    for d in (root, inputs):
        d.chmod(0o755)
    return str(inputs)


def _supervise(make_argv: Callable[[int], list[str]], root: Path, program: Program, limits: Limits, name: str, *, user: int | None = None,
               status: bool = False, cwd: str | None = None, env: dict[str, str] | None = None,
               keep_fds: tuple[int, ...] = ()) -> Execution:
    """Start `argv` with stdin/stdout/stderr in host files, wait up to the wall limit, then kill everything it
    started: the sandbox's PID-namespace init (bubblewrap) or the process group (unsafe)."""
    (root / "stdin").write_text(program.stdin, encoding="utf-8")  # the launcher's token: this process's to read
    (root / "stdin").chmod(0o600)
    out_path, err_path = root / "stdout", root / "stderr"
    read_fd, write_fd = os.pipe() if status else (-1, -1)
    argv = make_argv(write_fd)
    start = time.monotonic()
    try:
        with open(root / "stdin", "rb") as stdin, open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    argv, stdin=stdin, stdout=out, stderr=err, cwd=cwd, env=env if env is not None else {},
                    start_new_session=True, pass_fds=((write_fd,) if status else ()) + keep_fds,
                    user=user, group=user, extra_groups=[] if user is not None else None)
            except OSError as e:
                return Execution(exit_code=None, error=f"could not start {argv[0]}: {e}", sandbox=name)
            (root / "stdin").unlink()  # opened: gone before the program starts (unsafe runs it next to the file)
            if status:
                os.close(write_fd)
                write_fd = -1
            timed_out = _wait(proc, limits.wall_s)
            docs = _status(read_fd) if status else []
            _kill_tree(proc, _child_pid(docs))
            docs += _status(read_fd) if status else []
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
    stdout, stderr = _read(out_path), _read(err_path)
    code, elapsed = (None if timed_out else proc.returncode), time.monotonic() - start
    started, ended = (any(key in d for d in docs) for key in ("child-pid", "exit-code"))
    if status and (not started or not (ended or timed_out)):  # the program never ran, or bubblewrap broke off
        return Execution(exit_code=code, stdout=stdout, stderr=stderr[-TAIL_CHARS * 4:], wall_s=round(elapsed, 3),
                         error=sandbox_failure(stderr, code), sandbox=name)
    return Execution(exit_code=code, stdout=stdout, stderr=stderr[-TAIL_CHARS * 4:], wall_s=round(elapsed, 3),
                     limit=classify(code, stderr, timed_out, cpu_bound=elapsed >= limits.cpu_s), sandbox=name)


def sandbox_failure(stderr: str, code: int | None) -> str:
    """The error of a bubblewrap that ended without reporting its program's exit (its own set-up failed, or it was
    killed): the sandbox failed, not the program, so the sample is an error a resume asks again."""
    said = [line for line in stderr.splitlines() if line.startswith("bwrap:")]
    return f"the sandbox failed (exit {code}): {said[-1] if said else 'no exit status from bubblewrap'}"[:500]


def _wait(proc: subprocess.Popen[bytes], wall_s: float) -> bool:
    try:
        proc.wait(timeout=wall_s)
        return False
    except subprocess.TimeoutExpired:
        return True


def _status(fd: int) -> list[dict[str, object]]:
    """The documents bubblewrap has written so far to `--json-status-fd`: `child-pid` once the sandbox's init
    started, `exit-code` when its program ended (never when bubblewrap's own set-up failed)."""
    os.set_blocking(fd, False)
    try:
        data = os.read(fd, 65536).decode("utf-8", "replace")
    except OSError:
        return []
    docs = []
    for line in data.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            docs.append(doc)
    return docs


def _child_pid(docs: list[dict[str, object]]) -> int | None:
    """The sandbox init's host PID, from bubblewrap's status (its first document)."""
    return next((pid for d in docs if isinstance(pid := d.get("child-pid"), int)), None)


def _kill_tree(proc: subprocess.Popen[bytes], child: int | None) -> None:
    """Kill what the execution started. Bubblewrap: its PID namespace's init (`child`), so the kernel kills every
    process in the namespace, daemons too, and bubblewrap reaps it and exits; then (and for `Unsafe`) the
    session's process group."""
    if child is not None and proc.poll() is None:
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - bubblewrap did not follow its init
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


@cache
def find_bubblewrap() -> Bubblewrap | None:
    """A working bubblewrap (on PATH, and able to start a sandbox here), else None."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    box = Bubblewrap(path)
    result = box.run(Program({"probe.py": "print('ok')"}, ("python3", "/input/probe.py")), Limits(wall_s=20))
    return box if result.ok and result.stdout.strip() == "ok" else None


def sandbox_kind(unsafe_exec: bool) -> Sandbox:
    """The sandbox a run that executes code will use, by `sandbox_for`'s rule, for its run id (RunSpec.sandbox):
    bubblewrap where it works (or where the run is refused without it), unsafe under --unsafe-exec without it."""
    return "unsafe" if unsafe_exec and find_bubblewrap() is None else "bubblewrap"


def sandbox_for(unsafe_exec: bool) -> Runner:
    """The runner a run that executes code uses: bubblewrap; without it, `Unsafe` only when the user said
    `--unsafe-exec`, else a one-line refusal saying how to get a sandbox."""
    box = find_bubblewrap()
    if box is not None:
        return box
    if unsafe_exec:
        return Unsafe()
    raise ProctorError(f"this benchmark executes model code and no sandbox is available: {INSTALL_HINT}, "
                       "or run with --unsafe-exec to execute it unsandboxed")

