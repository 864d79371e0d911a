"""`proctor verify | sign | keygen`: check a run against its checksums, results and data; sign it; make a key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..run.verify import generate_key, sign_run, verify_run
from ..util.errors import ProctorError
from ..util.termsafe import escape_control
from . import options
from .claim_cmds import verify_against

VERIFY_EXAMPLES = """Examples:

  proctor verify runs/mmlu-first
  proctor keygen signing.pem
  proctor sign runs/mmlu-first --key signing.pem
  proctor verify runs/mmlu-first --public-key signing.pem.pub


Exit status: 0 when everything agrees, 1 when something differs (the first file and line that do), 2 bad input.
With --claim: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 4 TAMPERED, 2 bad input (docs/claims.md).
"""


def verify(
    run: Annotated[Path, typer.Argument(metavar="RUN", show_default=False, help="A run directory.")],
    public_key: Annotated[Path | None, typer.Option(
        "--public-key", metavar="PEM", show_default=False,
        help="The signer's Ed25519 public key: the run must be signed with its private key (default: any signer, named).")] = None,
    no_data: Annotated[bool, typer.Option(
        "--no-data", help="Do not load the data again to recheck its content hash.")] = False,
    as_json: options.Json = False,
    claim: Annotated[Path | None, typer.Option(
        "--claim", metavar="CLAIM.json", show_default=False,
        help="Answer the claim registered before the run (`proctor claim`): PASS, FAIL, INCONCLUSIVE or TAMPERED (default: none).")] = None,
    claim_key: Annotated[Path | None, typer.Option(
        "--claim-key", metavar="PEM", show_default=False,
        help="With --claim: the claim must be signed with this Ed25519 public key's private key (default: any signer, named).")] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", metavar="RUN", show_default=False,
        help="With --claim: where the claim's baseline run is now (default: where the claim recorded it).")] = None,
) -> None:
    """Recompute a run's checksums, its results from its samples and its data's content hash, and check its
    signature: exit 0 when all agree, 1 naming the first file and line that differ. With --claim: PASS, FAIL,
    INCONCLUSIVE or TAMPERED and why."""
    if claim is not None:
        if no_data:
            raise ProctorError("--no-data: not with --claim (a claim holds the run to its data's hash)")
        verify_against(run, claim, (public_key, claim_key), baseline, as_json)
    elif claim_key is not None or baseline is not None:
        raise ProctorError("--claim-key and --baseline go with --claim")
    got = verify_run(run, public_key, check_data=not no_data)
    if as_json:
        typer.echo(json.dumps(got.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        for line in got.problems:
            typer.echo(f"differs: {escape_control(line)}")
        for line in got.checked:
            typer.echo(f"ok: {escape_control(line)}")
        for line in got.notes:
            typer.echo(f"unverified: {escape_control(line)}")
        typer.echo(f"{'verified' if got.ok else 'NOT verified'}: {escape_control(str(run))}")
    raise typer.Exit(0 if got.ok else 1)


def sign(
    run: Annotated[Path, typer.Argument(metavar="RUN", show_default=False, help="A finished run directory.")],
    key: Annotated[Path, typer.Option(
        "--key", metavar="PEM", show_default=False, help="Your Ed25519 private key (`proctor keygen` makes one).")],
) -> None:
    """Sign a finished run's checksums.json with your Ed25519 key: signature.json, checked by `proctor verify`."""
    path = sign_run(run, key)
    typer.echo(f"signed: {escape_control(str(path))}")


def keygen(
    path: Annotated[Path, typer.Argument(metavar="PATH", show_default=False,
                                         help="Where the private key goes (the public key goes to PATH.pub).")],
) -> None:
    """Make an Ed25519 key pair for `proctor sign`: PATH (private, owner-only) and PATH.pub (hand it out)."""
    private, public = generate_key(path)
    typer.echo(f"private key: {escape_control(str(private))} (keep it)\npublic key: {escape_control(str(public))}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(epilog=VERIFY_EXAMPLES)(verify)
    app.command(epilog=VERIFY_EXAMPLES)(sign)
    app.command(epilog=VERIFY_EXAMPLES)(keygen)
