"""Runs anyone can check: content hashes of a run's files and data, the results recomputed, an optional signature.

A finished run holds `checksums.json` beside its manifest: the sha256 of `manifest.json`, `samples.jsonl` and
`results.json`, a short hash of every line of each (so a difference is found at its line), and the content hash of
the data the run evaluated. `verify_run` recomputes all of it — the files' hashes, the results from the samples, the
data's content hash from the manifest's spec — and names the first file and line that differ.

A checksum says the files have not changed since the run last finished; anyone who can write the directory can
write a new one. `sign_run` adds `signature.json`: an Ed25519 signature (RFC 8032, through the `cryptography`
package, the `sign` extra) over `checksums.json`'s bytes with a key the user holds; `verify_run` checks it, and
with the signer's public key given, that it is theirs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..log.checksums import CHECKSUMS, FORMAT, HASHED, OPTIONAL, digest, write_checksums
from ..log.runlog import MANIFEST, RESULTS, SAMPLES, RunLog
from ..util.errors import InputError, ProctorError
from ..util.textio import read_bytes, read_json_record, write_json_atomic, write_text_atomic
from .finalize import on_disk, results_of
from .resolve import load_spec_task

SIGNATURE = "signature.json"


class Verification(BaseModel):
    """What `verify_run` found: `ok` when every check agreed; `problems` name the first difference of each check."""

    run_dir: str
    ok: bool
    checked: list[str]  # what was checked and agreed
    problems: list[str]  # "samples.jsonl:12: …", first the files, then the results, the data, the signature
    notes: list[str]  # what could not be checked (the data not loadable here), and the signer's key
    signer: str | None = None  # the signing key's fingerprint, when the run is signed and the signature holds


def _first_line(name: str, recorded: dict[str, Any], now: dict[str, Any]) -> str:
    """Where a file first differs from its recorded hashes: "samples.jsonl:12: …"."""
    old, new = recorded.get("lines") or [], now["lines"]
    for i, (a, b) in enumerate(zip(old, new), start=1):
        if a != b:
            return f"{name}:{i}: differs from the line checksums.json recorded"
    if len(new) != len(old):
        line = min(len(old), len(new)) + 1
        what = "is new" if len(new) > len(old) else "is missing"
        return f"{name}:{line}: {what} ({len(new)} lines now, {len(old)} recorded)"
    return f"{name}: differs from checksums.json (sha256 {now['sha256'][:16]}…, recorded {recorded.get('sha256')!s:.16}…)"


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


def first_difference(written: Any, truth: Any, where: str = "") -> str | None:
    """The first value of `written` that `truth` does not hold, with its key path (floats within 1e-9)."""
    if isinstance(written, dict) and isinstance(truth, dict):
        for key in [*written, *(k for k in truth if k not in written)]:  # results.json's order: overall first
            at = f"{where}.{key}" if where else str(key)
            if key not in truth or key not in written:
                return f"{at}: {'only in results.json' if key in written else 'missing from results.json'}"
            found = first_difference(written[key], truth[key], at)
            if found:
                return found
        return None
    if isinstance(written, list) and isinstance(truth, list) and len(written) == len(truth):
        for i, (a, b) in enumerate(zip(written, truth)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    if _close(written, truth):
        return None
    return f"{where or 'results'}: {json.dumps(written)[:60]} written, {json.dumps(truth)[:60]} recomputed from {SAMPLES}"


def _check_files(run_dir: Path, record: dict[str, Any], out: Verification) -> None:
    files = record.get("files")
    if not isinstance(files, dict) or not files:
        out.problems.append(f"{CHECKSUMS}: records no files")
        return
    for name in HASHED:
        path = run_dir / name
        if name in OPTIONAL and name not in files and not path.exists():
            continue
        if name not in files:
            out.problems.append(f"{CHECKSUMS}: records no hash of {name}")
        elif not path.is_file():
            out.problems.append(f"{name}: missing (checksums.json recorded it)")
        else:
            now = digest(path)
            if now["sha256"] == files[name].get("sha256"):
                out.checked.append(f"{name}: sha256 {now['sha256'][:16]}… ({len(now['lines']):,} lines)")
            else:
                out.problems.append(_first_line(name, files[name], now))


def _check_results(run_dir: Path, out: Verification) -> RunLog | None:
    # a results.json that is a FIFO, a device, huge or deep is bad input (exit 2), not a difference
    written = read_json_record(run_dir / RESULTS) if (run_dir / RESULTS).exists() else None
    try:
        log = on_disk(run_dir)  # its samples streamed, never held
        if not isinstance(written, dict):
            raise ValueError(  # noqa: TRY004 - reported as a difference, as a bad file is
                "missing" if written is None else "not a JSON object")
        truth = results_of(log).as_dict()
    except (ProctorError, OSError, ValueError) as e:
        out.problems.append(f"{run_dir / RESULTS}: cannot be read back ({str(e).splitlines()[0][:200]})")
        return None
    differ = first_difference({k: v for k, v in written.items() if k in truth}, truth)
    if differ:
        out.problems.append(f"{RESULTS}: {differ}")
    else:
        out.checked.append(f"{RESULTS}: every number recomputed from {truth['overall']['n']:,} samples agrees")
    return log


def _check_data(log: RunLog, record: dict[str, Any], out: Verification) -> None:
    recorded = (record.get("data") or {}).get("content_hash")
    manifest_hash = log.manifest.dataset.content_hash
    if recorded != manifest_hash:
        out.problems.append(f"{MANIFEST}: dataset.content_hash {manifest_hash}, checksums.json recorded {recorded}")
        return
    spec = log.manifest.spec
    if spec is None or recorded is None:
        out.notes.append("data: not rechecked (the manifest holds no spec to load it from)")
        return
    try:
        now = load_spec_task(spec).content_hash
    except (ProctorError, OSError, ValueError) as e:
        out.notes.append(f"data: not rechecked here ({str(e).splitlines()[0][:160]})")
        return
    if now != recorded:
        out.problems.append(f"data: {spec.dataset.name} now has content hash {now}; the run evaluated {recorded}")
    else:
        out.checked.append(f"data: {spec.dataset.name} content hash {recorded[:23]}…")


def unchanged(run_dir: str | Path) -> str | None:
    """The first way `run_dir`'s files differ from its checksums.json, None when they agree: the files alone, no
    results recomputed (what a decision read back from a run directory is held to)."""
    d = Path(run_dir)
    if not (d / CHECKSUMS).exists():
        return f"{d / CHECKSUMS}: missing: nothing to hold its files to"
    record = read_json_record(d / CHECKSUMS)  # bounded: a FIFO, a huge or deep file is one line, exit 2
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return f"{d / CHECKSUMS}: not a {FORMAT} record"
    out = Verification(run_dir=str(d), ok=False, checked=[], problems=[], notes=[])
    _check_files(d, record, out)
    return out.problems[0] if out.problems else None


def verify_run(run_dir: str | Path, public_key: str | Path | None = None, check_data: bool = True) -> Verification:
    """Recompute a run's file hashes, results and data hash and check its signature (see the module doc)."""
    d = Path(run_dir)
    if not (d / MANIFEST).is_file():
        raise InputError.at(d, "not a run directory (no manifest.json)")
    out = Verification(run_dir=str(d), ok=False, checked=[], problems=[], notes=[])
    record: Any = {}
    if not (d / CHECKSUMS).exists():
        out.problems.append(f"{d / CHECKSUMS}: missing (the run is unfinished, or was written before proctor "
                            "recorded checksums): nothing to hold its files to")
    else:
        record = read_json_record(d / CHECKSUMS)  # a FIFO, /dev/zero, a sparse or deep file: one line, exit 2
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            out.problems.append(f"{d / CHECKSUMS}: unreadable (not a {FORMAT} record)")
            record = {}
    if record:
        _check_files(d, record, out)
    log = _check_results(d, out)
    if log is not None and record and check_data:
        _check_data(log, record, out)
    elif not check_data:
        out.notes.append("data: not rechecked (--no-data)")
    _check_signature(d, public_key, out)
    out.ok = not out.problems
    return out


# ---------------------------------------------------------------- signatures (the `sign` extra)


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise ProctorError("signing needs the `cryptography` package: pip install 'proctor-eval[sign]'") from None
    return ed25519


def _raw_public(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    raw: bytes = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def fingerprint(raw_public: bytes) -> str:
    """A public key's short name: "ed25519:" and the first 16 hex digits of its sha256."""
    return "ed25519:" + hashlib.sha256(raw_public).hexdigest()[:16]


def _load_key(path: Path, private: bool) -> Any:
    ed25519 = _crypto()
    from cryptography.hazmat.primitives import serialization

    try:
        data = read_bytes(path)  # a regular file within the size limit: a device or pipe never hangs the read
        key = (serialization.load_pem_private_key(data, password=None) if private
               else serialization.load_pem_public_key(data))
    except OSError as e:
        raise InputError.at(path, f"cannot read the key ({e.strerror or e})") from None
    except (ValueError, TypeError) as e:
        raise InputError.at(path, f"not a PEM {'private' if private else 'public'} key ({str(e)[:100]})") from None
    wanted = ed25519.Ed25519PrivateKey if private else ed25519.Ed25519PublicKey
    if not isinstance(key, wanted):
        raise InputError.at(path, f"not an Ed25519 key ({type(key).__name__}); make one with `proctor keygen`")
    return key


def generate_key(path: str | Path) -> tuple[Path, Path]:
    """A new Ed25519 key: the private key at `path` (PEM, PKCS#8, readable by its owner only) and the public key
    at `path`.pub (PEM), to hand to whoever verifies. An existing file is never overwritten."""
    ed25519 = _crypto()
    from cryptography.hazmat.primitives import serialization

    p = Path(path)
    pub = p.with_name(p.name + ".pub")
    for target in (p, pub):
        if target.exists():
            raise InputError.at(target, "exists already: a key is never overwritten")
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private_pem)
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    write_text_atomic(pub, public_pem.decode("ascii"))
    return p, pub


def sign_run(run_dir: str | Path, key_path: str | Path) -> Path:
    """Sign a finished run's `checksums.json` with the Ed25519 private key at `key_path`: `signature.json`."""
    d = Path(run_dir)
    checksums = d / CHECKSUMS
    if not checksums.is_file():
        raise InputError.at(checksums, "missing: only a finished run (with its checksums) can be signed")
    key = _load_key(Path(key_path), private=True)
    raw = _raw_public(key.public_key())
    signature = key.sign(read_bytes(checksums))
    path = d / SIGNATURE
    write_json_atomic(path, {"algorithm": "ed25519", "signed": CHECKSUMS, "key": fingerprint(raw),
                             "public_key": base64.b64encode(raw).decode("ascii"),
                             "signature": base64.b64encode(signature).decode("ascii")})
    return path


def sign_bytes(data: bytes, key_path: str | Path) -> dict[str, str]:
    """An Ed25519 signature of `data` with the private key at `key_path`, as `sign_run` records one: the algorithm,
    the key's fingerprint, its public key and the signature (base64)."""
    key = _load_key(Path(key_path), private=True)
    raw = _raw_public(key.public_key())
    return {"algorithm": "ed25519", "key": fingerprint(raw), "public_key": base64.b64encode(raw).decode("ascii"),
            "signature": base64.b64encode(key.sign(data)).decode("ascii")}


def signed_by(record: dict[str, str], data: bytes, public_key: str | Path | None = None) -> str:
    """The fingerprint of the key whose signature of `data` `record` holds (`sign_bytes`'s shape); a ValueError
    saying what is wrong: unreadable, not matching `data`, or (with `public_key`) another key's."""
    try:
        raw = base64.b64decode(record["public_key"], validate=True)
        signature = base64.b64decode(record["signature"], validate=True)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"unreadable ({str(e)[:120]})") from None
    if record.get("algorithm") != "ed25519":
        raise ValueError("not an ed25519 signature")
    ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature

    try:
        ed25519.Ed25519PublicKey.from_public_bytes(raw).verify(signature, data)
    except (InvalidSignature, ValueError):
        raise ValueError("does not match what it signs (edited after signing, or the signature was)") from None
    if public_key is not None:
        expected = _raw_public(_load_key(Path(public_key), private=False))
        if expected != raw:
            raise ValueError(f"signed by {fingerprint(raw)}, not by the key given ({fingerprint(expected)})")
    return fingerprint(raw)


def _check_signature(d: Path, public_key: str | Path | None, out: Verification) -> None:
    path = d / SIGNATURE
    if not path.exists():  # a FIFO or a device there is refused by the read, never taken for "unsigned"
        if public_key is not None:
            out.problems.append(f"{SIGNATURE}: missing, and --public-key asks for a signed run")
        return
    record = read_json_record(path)  # bounded: one line, exit 2
    try:
        raw = base64.b64decode(record["public_key"], validate=True)
        signature = base64.b64decode(record["signature"], validate=True)
        if record.get("algorithm") != "ed25519" or record.get("signed") != CHECKSUMS:
            raise ValueError("not an ed25519 signature of checksums.json")
    except (OSError, ValueError, KeyError, TypeError) as e:
        out.problems.append(f"{SIGNATURE}: unreadable ({str(e)[:120]})")
        return
    ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature

    try:
        ed25519.Ed25519PublicKey.from_public_bytes(raw).verify(signature, read_bytes(d / CHECKSUMS))
    except (InvalidSignature, ValueError, OSError):
        out.problems.append(f"{SIGNATURE}: does not match {CHECKSUMS} (it changed after signing, or the signature "
                            "was edited)")
        return
    if public_key is not None:
        expected = _raw_public(_load_key(Path(public_key), private=False))
        if expected != raw:
            out.problems.append(f"{SIGNATURE}: signed by {fingerprint(raw)}, not by the key given "
                                f"({fingerprint(expected)})")
            return
        out.checked.append(f"{SIGNATURE}: signed by {fingerprint(raw)}, the key given")
    else:
        out.notes.append(f"signed by {fingerprint(raw)} (give --public-key to check whose key that is)")
    out.signer = fingerprint(raw)


__all__ = [
    "CHECKSUMS",
    "SIGNATURE",
    "Verification",
    "digest",
    "fingerprint",
    "first_difference",
    "generate_key",
    "sign_bytes",
    "sign_run",
    "signed_by",
    "unchanged",
    "verify_run",
    "write_checksums",
]
