"""The bubblewrap sandbox every `exec` command runs in, and whether it works on this machine.

Containment must not depend on recognising the command, so the command runs where damage is
impossible: the workspace is the only writable place, the rest of / is read-only, the user's
credentials and CountBot's own data and config are covered by empty tmpfs (or /dev/null for
files), /tmp is private (but for the running interpreter's prefix and import paths, read-only:
a venv under /tmp still runs its servers and commands), the sandbox has its own PID namespace
and /proc (the daemon's `/proc/<pid>/environ` is not there), no capabilities, a scrubbed
environment, and limits on processes, memory, CPU time and file size. `--die-with-parent` ends
everything when the daemon or the exec tool stops it.

`auto` probes once whether bwrap works here; when it does not, `status.active` is False and the
exec tool asks for approval for every command instead (fail closed, never silently unsandboxed).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from countbot.execution.pids_cgroup import create_pids_cgroup, join_file

SandboxMode = Literal["auto", "bwrap", "off"]
# The env var names enabled skills declare (`requires.env`, `primaryEnv`); async, it may rescan.
SkillEnvNames = Callable[[], Awaitable[Iterable[str]]]

# Under the user's home: what a command has no business reading.
HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".lesshst",
    ".local/share/fish/fish_history",
)
# Outside the home: the system's own secrets (readable when the daemon runs as root) and the
# sockets of services that act for whoever connects (D-Bus and systemd can reboot the machine,
# docker gives root, the user's session bus and agents hold keys). A read-only bind does not stop
# connect() on a socket, so they are covered like secrets.
HOST_SECRETS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/run/dbus",
    "/run/systemd/private",
    "/run/systemd/notify",
    "/run/user",
    "/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/snapd.socket",
    "/run/libvirt",
)
# The only variables of the daemon's environment a command sees (plus the skills' own).
ENV_ALLOW = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ", "SHELL")
_ENV_ALLOW_PREFIX = "LC_"
# Where the sandbox sees its pids cgroup's membership file (on the private /tmp).
_PIDS_FILE = "/tmp/.countbot-pids"
_PROBE_TIMEOUT = 10.0
# What happens without a working sandbox (`auto`, `off`): the user says yes to each one first.
_ASKS = "every command asks, and each stdio MCP server before it starts"
# The sandbox's private /tmp hides whatever the host keeps there.
_PRIVATE_TMP = Path("/tmp")
# Package runners (npx, uvx, pip) need a writable cache; home is read-only in the sandbox.
_SERVER_CACHES = {
    "XDG_CACHE_HOME": "/tmp/.cache",
    "npm_config_cache": "/tmp/.npm",
    "UV_CACHE_DIR": "/tmp/.cache/uv",
}


# Wraps a server's argv and environment so that it runs in the sandbox (or refuses it).
Argv = list[str]
ServerLauncher = Callable[[Sequence[str], dict[str, str]], Awaitable[tuple[Argv, dict[str, str]]]]


class SandboxUnavailable(RuntimeError):
    """The sandbox is required (`bwrap`) and does not work here: nothing starts outside it."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-command limits. Memory and CPU are per process (rlimits); processes are per sandbox."""

    processes: int = 256
    memory_bytes: int = 4 << 30
    cpu_seconds: int | None = 300  # None: unlimited (long-running servers)
    file_bytes: int = 1 << 30


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """What `doctor` and the Settings page show: is the sandbox on, and if not, why."""

    mode: SandboxMode
    active: bool
    detail: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Sandbox:
    """Builds the bwrap command line for one shell command; `probe()` once before use."""

    def __init__(
        self,
        mode: SandboxMode,
        workspace: Path,
        *,
        network: bool = True,
        hidden: Iterable[Path] = (),
        home: Path | None = None,
        bwrap: str = "bwrap",
        limits: SandboxLimits = SandboxLimits(),
        skill_env: SkillEnvNames | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        self._mode: SandboxMode = mode
        self._workspace = workspace.resolve()
        self._network = network
        self._home = (home or Path.home()).resolve()
        self._hidden = [Path(path).resolve() for path in hidden]
        # The program asked for, looked up on PATH at each probe, and where it was found.
        self._bwrap_name = bwrap
        self._bwrap = bwrap
        self._limits = limits
        self._skill_env = skill_env
        # The agent's own secrets (`agents.others.<name>.secrets`): in its commands' environment.
        self._secrets = dict(secrets or {})
        self._sysrq = False
        self._interpreter = _hidden_interpreter_paths()
        # The pids cgroup's file the shell writes to join it, and what it writes (see join_file).
        self._pids_join: tuple[Path, str] | None = None
        self.status = SandboxStatus(mode, False, "not probed yet")

    @property
    def has_network(self) -> bool:
        """Whether a command can reach the network: in a sandbox that shares it, or outside one."""
        return self._network or not self.status.active

    def probe(self) -> SandboxStatus:
        """Find out whether bwrap works here, at start and again when the user asks (blocking:
        run it off the event loop)."""
        self.status = self._probe()
        return self.status

    def _probe(self) -> SandboxStatus:
        if self._mode == "off":
            return SandboxStatus("off", False, f"off in tools.exec.sandbox: {_ASKS}")
        bwrap = shutil.which(self._bwrap_name)
        if bwrap is None:
            return self._unavailable("bubblewrap (bwrap) is not installed")
        self._bwrap = bwrap
        self._sysrq = Path("/proc/sysrq-trigger").exists()
        limit_note = self._join_pids_cgroup()
        try:
            result = self._run_probe()
        except (OSError, subprocess.TimeoutExpired) as exc:
            return self._unavailable(f"bwrap did not run: {exc}")
        if result.returncode != 0:
            error = result.stderr.decode(errors="replace").strip().splitlines()
            return self._unavailable(f"bwrap does not work here: {error[-1] if error else '?'}")
        network = "network on" if self._network else "no network"
        return SandboxStatus(self._mode, True, f"bubblewrap, {network}{limit_note}")

    def _run_probe(self) -> subprocess.CompletedProcess[bytes]:
        """`exit 0` in the sandbox; before the workspace exists (`doctor --security` on a fresh
        install) an empty folder stands in for it."""
        with contextlib.ExitStack() as stack:
            workspace = self._workspace
            if not workspace.is_dir():
                workspace = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            argv = self._argv("/bin/sh", "exit 0", workspace, workspace=workspace)
            return subprocess.run(
                argv, env=self._env(()), capture_output=True, timeout=_PROBE_TIMEOUT, check=False
            )

    def _unavailable(self, why: str) -> SandboxStatus:
        then = _ASKS if self._mode == "auto" else "exec refuses every command"
        return SandboxStatus(self._mode, False, f"{why}: {then}")

    def _join_pids_cgroup(self) -> str:
        """Root ignores RLIMIT_NPROC: then the sandboxes share a pids cgroup, if one can be made."""
        if os.geteuid() != 0 or self._pids_join is not None:  # made at an earlier probe
            return ""
        group = create_pids_cgroup(self._limits.processes)
        if group is None:
            return "; no process limit (root is exempt from RLIMIT_NPROC, no pids cgroup)"
        self._pids_join = join_file(group)
        return ""

    async def command(
        self, shell: str, command: str, cwd: Path
    ) -> tuple[list[str], dict[str, str]]:
        """argv and environment that run `command` with `shell -c` inside the sandbox."""
        names = await self._skill_env() if self._skill_env is not None else ()
        # Which secrets exist is a few dozen stats: file system work stays off the event loop.
        argv = await asyncio.to_thread(self._argv, shell, command, cwd)
        return argv, self._env(names)

    def server_launcher(self) -> ServerLauncher | None:
        """How a long-running (MCP) server starts: in the sandbox when it works; refused when
        `bwrap` is required and does not work here (as exec refuses every command); None: on
        the host, which the caller must not do without the user's yes."""
        if self.status.active:
            return self.server_command
        return self._refuse_server if self._mode == "bwrap" else None

    async def _refuse_server(
        self, argv: Sequence[str], env: dict[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        raise SandboxUnavailable(
            f"tools.exec.sandbox is 'bwrap' and the sandbox does not work here "
            f"({self.status.detail}): the server is not started"
        )

    async def server_command(
        self, argv: Sequence[str], env: dict[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """argv and environment that run a long-running server (an MCP server) in the sandbox.

        The same mounts and limits as a command, except CPU time (a server runs for days); the
        environment is the scrubbed base plus only `env`, and caches go to the private /tmp.
        """
        quoted = " ".join(shlex.quote(part) for part in argv)
        limits = dataclasses.replace(self._limits, cpu_seconds=None)
        command = await asyncio.to_thread(
            self._argv, "/bin/sh", f"exec {quoted}", self._workspace, limits
        )
        return command, {**_SERVER_CACHES, **self._env(()), **env}

    def _argv(
        self,
        shell: str,
        command: str,
        cwd: Path,
        limits: SandboxLimits | None = None,
        workspace: Path | None = None,
    ) -> list[str]:
        workspace = workspace or self._workspace
        argv = [self._bwrap, "--ro-bind", "/", "/", "--dev", "/dev"]
        argv += ["--proc", "/proc", "--tmpfs", str(_PRIVATE_TMP)]
        for path in self._interpreter:
            argv += ["--ro-bind", str(path), str(path)]
        # The fresh /proc still reaches the kernel: root in the sandbox could write sysctls or
        # SysRq (reboot the machine) by file permissions alone.
        argv += ["--ro-bind", "/proc/sys", "/proc/sys"]
        if self._sysrq:
            argv += ["--ro-bind", "/dev/null", "/proc/sysrq-trigger"]
        # Covers around the workspace (data_dir holds it by default) first, so its bind mount
        # lands on top of them; covers inside the workspace last, so they hide what they cover.
        secrets = self._secret_paths()
        argv += _cover([p for p in secrets if not p.is_relative_to(workspace)])
        argv += ["--bind", str(workspace), str(workspace)]
        argv += _cover([p for p in secrets if p.is_relative_to(workspace)])
        argv += ["--unshare-all", "--share-net"] if self._network else ["--unshare-all"]
        argv += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
        if self._pids_join is not None:
            argv += ["--bind", str(self._pids_join[0]), _PIDS_FILE]
        prelude = self._prelude(shell, limits or self._limits)
        argv += ["--chdir", str(cwd), "--", shell, "-c", f"{prelude}\n{command}"]
        return argv

    def _prelude(self, shell: str, limits: SandboxLimits) -> str:
        """The limits, set by the command's own shell before anything of the command runs.

        Shell built-ins rather than a wrapper program: no extra exec on every command. Hard and
        soft limits both, and without capabilities nothing in the sandbox can raise them again.
        RLIMIT_NPROC counts per user namespace, so it must be set here, inside the sandbox.
        """
        bash = shell.endswith("bash")
        steps = [
            f"ulimit -t {limits.cpu_seconds or 'unlimited'}",
            f"ulimit -v {limits.memory_bytes // 1024}",
            # -f counts 1024-byte blocks in bash, 512-byte ones in POSIX sh.
            f"ulimit -f {limits.file_bytes // (1024 if bash else 512)}",
            "ulimit -c 0",
            f"ulimit {'-u' if bash else '-p'} {limits.processes}",
        ]
        if self._pids_join is not None:
            steps.append(f"echo {self._pids_join[1]} > {_PIDS_FILE}")
        checked = " && ".join(steps)
        return f"{{ {checked}; }} 2>/dev/null || {{ echo 'sandbox limits failed' >&2; exit 125; }}"

    def _secret_paths(self) -> list[Path]:
        """The credentials, data folder and config file that exist here (checked per command)."""
        paths = [self._home / name for name in HOME_SECRETS] + self._hidden
        paths += [Path(name) for name in HOST_SECRETS]
        return [path for path in dict.fromkeys(paths) if path.exists()]

    def _env(self, skill_names: Iterable[str]) -> dict[str, str]:
        wanted = set(ENV_ALLOW) | set(skill_names)
        env = {
            name: value
            for name, value in os.environ.items()
            if name in wanted or name.startswith(_ENV_ALLOW_PREFIX)
        }
        env.update(self._secrets)
        env["HOME"] = str(self._home)
        return env


def _hidden_interpreter_paths() -> list[Path]:
    """The running interpreter's prefixes and import paths that the private /tmp would hide.

    A user's venv may live anywhere, /tmp included; without these the sandbox cannot start
    `sys.executable` (a Python MCP server, a test's interpreter) nor import what it has installed.
    Read-only, bound before the covers, so a secret inside one of them stays covered.
    """
    executable_prefix = Path(os.path.realpath(sys.executable)).parent.parent
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, executable_prefix, *sys.path]
    found: list[Path] = []
    for entry in candidates:
        path = Path(os.path.abspath(entry)) if entry else None
        # Never /tmp itself (a daemon started in /tmp has it on sys.path): that is all of it.
        if path and path != _PRIVATE_TMP and path.is_relative_to(_PRIVATE_TMP) and path.exists():
            found.append(path)
    # A path inside another one found is visible through it already.
    return sorted(
        path for path in set(found) if not any(path != o and path.is_relative_to(o) for o in found)
    )


def _cover(paths: Sequence[Path]) -> list[str]:
    """An empty tmpfs over each folder, /dev/null over each file."""
    args: list[str] = []
    for path in paths:
        args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
    return args
