"""The browser inside bubblewrap, where the exec sandbox is on: it sees its own folder
(`<data_dir>/browser`: the profile and downloads in progress) and nothing else of the instance,
none of the user's credentials and none of the host's secrets or service sockets; the rest of the
file system is read-only. Its network stays (it is a browser); the address guard watches that.

Chromium's own sandbox cannot nest inside bubblewrap's namespaces, so it runs `--no-sandbox`
there; the process group and the pipe to it are unchanged (`--die-with-parent`, no new session).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from countbot.browser.chromium import BrowserUnavailable
from countbot.execution.sandbox import HOME_SECRETS, HOST_SECRETS


def jail_argv(mode: str, folder: Path, hidden: Iterable[Path]) -> list[str]:
    """The bwrap command line the browser runs under (empty: none), for `tools.exec.sandbox`
    `mode`: `off` none, `bwrap` required, `auto` when bubblewrap is installed."""
    if mode == "off":
        return []
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        if mode == "bwrap":
            raise BrowserUnavailable(
                "tools.exec.sandbox is bwrap but bubblewrap is not installed "
                "(apt-get install bubblewrap)"
            )
        return []
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm"]
    argv += ["--proc", "/proc", "--tmpfs", "/tmp"]
    home = Path.home()
    covered = [home / name for name in HOME_SECRETS] + [Path(p) for p in HOST_SECRETS]
    for path in dict.fromkeys([*covered, *hidden]):
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        elif path.exists():
            argv += ["--ro-bind", "/dev/null", str(path)]
    argv += ["--bind", str(folder), str(folder)]
    argv += ["--unshare-all", "--share-net", "--cap-drop", "ALL", "--die-with-parent", "--"]
    return argv
