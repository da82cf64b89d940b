"""The tripwire in front of `exec`: refuses commands that would wreck the machine or escalate.

This is a guard against an over-eager model, not a sandbox: a determined author can always hide a
command (`eval`, base64, a script file). Its decisions come only from code and config, never from
the model. `git push --force`/`-f`/`+refspec` is refused because it destroys history other people
may rely on; `--force-with-lease` stays allowed since it refuses to overwrite unseen work.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

# Where a command word may start: the beginning, after a separator, or inside `$(`/backticks,
# optionally behind wrappers (`env X=1 nohup ...`) or a directory (`/bin/rm`).
_START = r"(?:^|[;&|\n(`]|\$\()\s*(?:(?:env|nohup|nice|time|command|exec|xargs)\s+(?:-\S+\s+)*)*"
_START += r"(?:\w+=\S*\s+)*(?:\S*/)?"
# Arguments of the same simple command (up to the next separator).
_ARGS = r"[^;&|\n]*"
# Paths whose recursive deletion, search-and-delete or permission change is never wanted.
_ROOTS = (
    r"""["']?(?:/|/\*|~|~/|~/\*|\$HOME|\$\{HOME\}|\$HOME/\*?"""
    r"""|/(?:etc|usr|bin|sbin|lib|lib64|boot|var|home|root|opt|dev|proc|sys|srv|mnt|Users)/?\*?)["']?"""
)
# For rm also the working directory, its parent and everything in it.
_BROAD = r"""(?:""" + _ROOTS + r"""|["']?(?:\.\.?/?|\*|\.\*)["']?)"""
_END = r"(?=\s|$|[;&|)])"
_RECURSIVE = r"(?=" + _ARGS + r"\s(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?:\s|$))"
_DEVICE = r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"
_INTERPRETER = (
    r"(?:sudo\s+)?(?:\S*/)?(?:(?:ba|z|k|da|fi)?sh\b"
    # python/perl/... only when they run stdin as the program (`| python3 -m json.tool` is fine).
    r"|(?:python[0-9.]*|perl|ruby|node)(?=\s*(?:-\s*)?(?:$|[;&|)])))"
)

BUILTIN_DENY: tuple[tuple[str, str], ...] = (
    (
        _START + r"rm(?=\s)" + _RECURSIVE + _ARGS + r"\s" + _BROAD + _END,
        "recursive delete of a broad path",
    ),
    (_START + r"(?:mkfs(?:\.\w+)?|mke2fs|wipefs)\b", "formatting a filesystem"),
    (r"\bdd\b" + _ARGS + r"\bof=" + _DEVICE, "dd onto a disk device"),
    (r">\s*" + _DEVICE, "writing to a raw disk device"),
    (r"\bshred\b" + _ARGS + _DEVICE, "shredding a disk device"),
    (_START + r"(?:shutdown|reboot|halt|poweroff)\b", "shutting down or rebooting the machine"),
    (_START + r"(?:init|telinit)\s+[06]\b", "shutting down or rebooting the machine"),
    (_START + r"systemctl\s+(?:poweroff|reboot|halt|kexec)\b", "shutting down the machine"),
    (r"(\w+|:)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&", "a fork bomb"),
    (
        r"\b(?:curl|wget)\b" + _ARGS + r"\|\s*" + _INTERPRETER,
        "piping a download into an interpreter",
    ),
    (
        r"\b(?:(?:ba|z|k|da)?sh|python[0-9.]*)\b" + _ARGS + r"(?:<\(|\$\(|`)\s*(?:curl|wget)\b",
        "running a downloaded script",
    ),
    (
        _START + r"ch(?:mod|own|grp)(?=\s)" + _RECURSIVE + _ARGS + r"\s" + _ROOTS + _END,
        "recursive ownership or permission change on a system path",
    ),
    (_START + r"(?:sudo|doas|pkexec|su)(?:\s|$)", "privilege escalation is not allowed"),
    (r"\bkill\s+(?:-\S+\s+)*-?1" + _END, "killing init or every process"),
    (r"\b(?:killall|pkill)\s" + _ARGS + r"\b(?:init|systemd)\b", "killing init"),
    (r"/etc/(?:shadow|gshadow|sudoers)\b", "touching the password or sudo database"),
    (
        r"(?:>>?\s*|\b(?:tee|sed\s+-i|vi|vim|nano|emacs|ed|cp|mv|ln)\b" + _ARGS + r")"
        r"/etc/(?:passwd|group)\b",
        "editing the user database",
    ),
    (_START + r"(?:visudo|chpasswd|usermod|useradd|userdel|passwd)\b", "changing system accounts"),
    (r"\bcrontab\b" + _ARGS + r"\s-[a-zA-Z]*r\b", "removing the crontab"),
    (
        r"\bhistory\s+-[a-z]*c|\bunset\s+HISTFILE\b|\bHISTFILE=/dev/null"
        r"|(?:>\s*|\b(?:rm|shred|truncate)\b" + _ARGS + r")\S*\.(?:bash|zsh|sh)_history",
        "wiping shell history",
    ),
    (
        r"\bfind\s+(?:-\S+\s+)*" + _ROOTS + r"\s" + _ARGS + r"(?:-delete\b|-exec\s+(?:\S*/)?rm\b)",
        "deleting files across a broad path with find",
    ),
    (
        r"\bgit\b" + _ARGS + r"\spush\b" + _ARGS + r"(?:\s--force(?!-)|\s-[a-zA-Z]*f\b|\s\+\S)",
        "force-pushing rewrites shared history; use --force-with-lease",
    ),
)

# When an allow-list is active these would smuggle an unchecked command into an allowed one.
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    reason: str


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid shell guard pattern {pattern!r}: {exc}") from exc


class ShellGuard:
    """Decides whether `exec` may run a command: built-in denials, configured ones, allow-list."""

    def __init__(self, deny_patterns: Iterable[str] = (), allow_patterns: Iterable[str] = ()):
        self._deny = [_Rule(re.compile(p), reason) for p, reason in BUILTIN_DENY]
        self._deny += [
            _Rule(_compile(p), f"matches {p!r} in tools.exec.deny_patterns") for p in deny_patterns
        ]
        self._allow = [_compile(p) for p in allow_patterns]

    def check(self, command: str) -> str | None:
        """None when the command may run, else the reason it may not."""
        for rule in self._deny:
            if rule.regex.search(command):
                return rule.reason
        if self._allow:
            return self._check_allowed(command)
        return None

    def allow_listed(self, command: str) -> bool:
        """Every simple command of `command` matches a configured allow pattern."""
        return bool(self._allow) and self._check_allowed(command) is None

    def _check_allowed(self, command: str) -> str | None:
        """Every simple command in a pipeline or list must match an allow pattern."""
        if _SUBSTITUTION.search(command):
            return "command substitution is not allowed while tools.exec.allow_patterns is set"
        try:
            segments = _segments(command)
        except ValueError as exc:
            return f"could not parse the command ({exc})"
        for segment in segments:
            if not any(allowed.search(segment) for allowed in self._allow):
                return f"{segment!r} is not in tools.exec.allow_patterns"
        return None


def _segments(command: str) -> list[str]:
    """The simple commands of a shell list, split at `;`, `&&`, `||`, `|`, `&` and newlines."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    for token in lexer:
        if not token.strip(";&|"):
            segments.append([])
        else:
            segments[-1].append(token)
    return [shlex.join(words) for words in segments if words]
