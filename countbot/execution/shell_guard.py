"""The tripwire in front of `exec`: refuses commands that would wreck the machine or escalate.

The sandbox (`execution/sandbox.py`) is what contains a command; this guard only catches the obvious
ones early with a reason the model can read, and decides whether a command is allow-listed
(`tools.exec.allow_patterns`: runs without asking in approval mode `on-miss`). A determined author
can always hide a command (`eval`, base64, a script file). Its decisions come only from code and
config, never from the model. It works on the simple commands `shell_words` splits out, each cut
to a bounded length, so its cost is linear in the command and text inside quotes (a README line
that mentions `rm -rf /`) is not mistaken for a command; a sensitive path counts where it is
written to or read, not where it is only named. Look-alike Unicode is folded first (NFKC turns
full-width `ｒｍ` into `rm`; zero-width and other format characters are dropped). It is CPU work:
callers run it off the event loop. `git push --force`/`-f`/`+refspec` is refused because it
destroys history other people may rely on; `--force-with-lease` stays allowed since it refuses
to overwrite unseen work.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from countbot.execution.shell_words import DATA, Segment, split_commands

# Only this much of a command is inspected, and of each simple command in it: the rules' cost is
# bounded per simple command, and the sandbox, not this guard, contains what lies beyond.
MAX_INSPECTED = 65_536
_SEGMENT_CAP = 2_000
# A command word, optionally behind wrappers (`env X=1 nohup timeout 5 ...`) or a directory.
_WRAPPER = (
    r"(?:(?:env|nohup|nice|time|command|exec|xargs|setsid|stdbuf|ionice|unbuffer|busybox)"
    r"(?:\s+-\S+)*\s+|timeout(?:\s+-\S+)*\s+\S+\s+)"
)
_START = r"^" + _WRAPPER + r"*(?:\w+=\S*\s+)*(?:\S*/)?"
_START_RE = re.compile(_START)
# Arguments of the same simple command.
_ARGS = r"[^\n]*"
# Paths whose recursive deletion, search-and-delete or permission change is never wanted.
_ROOTS = (
    r"(?:/|/\*|~|~/|~/\*|\$HOME|\$\{HOME\}|\$HOME/\*?"
    r"|/(?:etc|usr|bin|sbin|lib|lib64|boot|var|home|root|opt|dev|proc|sys|srv|mnt|Users)/?\*?)"
)
# For rm also the working directory, its parents and everything in them.
_BROAD = r"(?:" + _ROOTS + r"|\.\.?/?|\*|\.\*|\./\*|(?:\.\./)+\.?\.?/?\*?)"
_END = r"(?=\s|$)"
_RECURSIVE = r"(?=" + _ARGS + r"\s(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?:\s|$))"
_DEVICE = r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"
_SHELLS = r"(?:(?:ba|z|k|da|fi)?sh|busybox|eval|source|\.)"
# A program that runs what it reads on stdin (`| python3 -m json.tool` is a filter, not that).
_STDIN_PROGRAM = re.compile(
    r"^(?:sudo\s+)?" + _WRAPPER + r"*(?:\S*/)?(?:" + _SHELLS + r"(?:\s|$)"
    r"|(?:python[0-9.]*|perl|ruby|node)\s*(?:-\s*)?$)"
)
_INTERPRETER = re.compile(r"^(?:\S*/)?(?:" + _SHELLS + r"|python[0-9.]*|perl|ruby|node)$")
_DOWNLOAD = re.compile(_START + r"(?:curl|wget)\b")
# Where a write goes: a redirection, or an argument of tee.
_WRITTEN = r"(?:>>?\|?\s*|^" + _WRAPPER + r"*(?:\S*/)?tee\s" + _ARGS + r")"
_KILL = re.compile(_START + r"kill(?:\s+|$)")
# Signal specs that only test whether a process exists.
_NO_SIGNAL = frozenset({"-0", "0", "-s0", "-n0"})
# `\b` first: a long word is tried once at its start, not at each of its characters.
_FORK_BOMB = re.compile(r"(\b\w+|:)\s*\(\)\s*\{[^}]{0,200}\1\s*\|\s*\1\s*&")

BUILTIN_DENY: tuple[tuple[str, str], ...] = (
    (
        _START + r"rm(?=\s)" + _RECURSIVE + _ARGS + r"\s" + _BROAD + _END,
        "recursive delete of a broad path",
    ),
    (
        _START + r"(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|cfdisk|gdisk|sgdisk|"
        r"parted|blkdiscard)\b",
        "partitioning or formatting a disk",
    ),
    (r"\bdd\b" + _ARGS + r"\bof=" + _DEVICE, "dd onto a disk device"),
    (r">\s*" + _DEVICE, "writing to a raw disk device"),
    (r"\bshred\b" + _ARGS + _DEVICE, "shredding a disk device"),
    (_WRITTEN + r"/proc/sysrq-trigger\b", "triggering a kernel SysRq action"),
    (_START + r"(?:shutdown|reboot|halt|poweroff)\b", "shutting down or rebooting the machine"),
    (_START + r"(?:init|telinit)\s+[06]\b", "shutting down or rebooting the machine"),
    (
        _START + r"systemctl\s+(?:-\S+\s+)*(?:poweroff|reboot|halt|kexec|kill|isolate)\b",
        "shutting down the machine",
    ),
    (
        _START + r"ch(?:mod|own|grp)(?=\s)" + _RECURSIVE + _ARGS + r"\s" + _ROOTS + _END,
        "recursive ownership or permission change on a system path",
    ),
    (_START + r"(?:sudo|doas|pkexec|su)(?:\s|$)", "privilege escalation is not allowed"),
    (_START + r"(?:killall|pkill)\s" + _ARGS + r"\b(?:init|systemd)\b", "killing init"),
    (
        r"^(?!"
        + _WRAPPER
        + r"*(?:echo|printf)\b)"
        + _ARGS
        + r"(?:^|\s|>)/etc/(?:g?shadow|sudoers)\b",
        "touching the password or sudo database",
    ),
    (
        r"(?:>>?\s*|^(?:tee|sed\s+-i|vi|vim|nano|emacs|ed|cp|mv|ln)\b" + _ARGS + r")"
        r"/etc/(?:passwd|group)\b",
        "editing the user database",
    ),
    (_START + r"(?:visudo|chpasswd|usermod|useradd|userdel|passwd)\b", "changing system accounts"),
    (r"^crontab\b" + _ARGS + r"\s-[a-zA-Z]*r\b", "removing the crontab"),
    (
        r"^history\s+-[a-z]*c|^unset\s+HISTFILE\b"
        r"|^(?:(?:export|declare|typeset|readonly)(?:\s+-\S+)*\s+)?(?:\w+=\S*\s+)*HISTFILE=/dev/null"
        r"|(?:>\s*|^(?:rm|shred|truncate)\b" + _ARGS + r")\S*\.(?:bash|zsh|sh)_history",
        "wiping shell history",
    ),
    (
        _START
        + r"find\s+(?:-\S+\s+)*"
        + _ROOTS
        + r"\s"
        + _ARGS
        + r"(?:-delete\b|-exec\s+(?:\S*/)?rm\b)",
        "deleting files across a broad path with find",
    ),
    (
        _START
        + r"git\b"
        + _ARGS
        + r"\spush\b"
        + _ARGS
        + r"(?:\s--force(?!-)|\s-[a-zA-Z]*f\b|\s\+\S)",
        "force-pushing rewrites shared history; use --force-with-lease",
    ),
)

# An allow-listed command may write only inside the workspace: these targets are outside it.
_REDIRECT = re.compile(r"(?:^|[^<&0-9])[0-9]*(?:&>>?|>>?\|?)\s*([^\s>]*)")
_OUTSIDE = re.compile(r"^(?:[/~$]|\.\.(?:/|$))|/\.\.(?:/|$)|" + re.escape(DATA))
_HARMLESS_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr")
_WRITERS = frozenset({"tee", "cd", "pushd"})
_SUBSTITUTION = frozenset({"$(", "<(", ">(", "`"})


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    reason: str


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """`refusal` is why the command may not run at all; `allow_listed` skips asking in on-miss."""

    refusal: str | None
    allow_listed: bool


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid shell guard pattern {pattern!r}: {exc}") from exc


@functools.cache
def _builtin_rules() -> tuple[_Rule, ...]:
    """Compiled at the first command inspected (it takes a while), not when a runtime starts."""
    return tuple(_Rule(re.compile(p, re.MULTILINE), reason) for p, reason in BUILTIN_DENY)


class ShellGuard:
    """Built-in and configured denials, plus the allow-list that lets a command skip asking."""

    def __init__(self, deny_patterns: Iterable[str] = (), allow_patterns: Iterable[str] = ()):
        self._custom = [
            _Rule(_compile(p), f"matches {p!r} in tools.exec.deny_patterns") for p in deny_patterns
        ]
        self._allow = [_compile(p) for p in allow_patterns]

    def inspect(self, command: str) -> GuardVerdict:
        """Both answers from one split of the command (CPU work: call it off the event loop)."""
        text = plain_text(command[:MAX_INSPECTED])
        segments = split_commands(text)
        refusal = self._refusal(text, segments)
        allowed = refusal is None and self._allow_listed(segments)
        return GuardVerdict(refusal, allowed)

    def check(self, command: str) -> str | None:
        """None when the command may run, else the reason it may not."""
        return self.inspect(command).refusal

    def _refusal(self, text: str, segments: list[Segment]) -> str | None:
        # Configured patterns see the command as written, like the user who wrote them.
        for rule in self._custom:
            if rule.regex.search(text[: _SEGMENT_CAP * 4]):
                return rule.reason
        if _FORK_BOMB.search(text[:_SEGMENT_CAP]):
            return "a fork bomb"
        for index, segment in enumerate(segments):
            line = segment.text[:_SEGMENT_CAP]
            for rule in _builtin_rules():
                if rule.regex.search(line):
                    return rule.reason
            if _runs_a_download(segments, index):
                return "running a downloaded script"
            if _signals_init_or_everyone(line):
                return "killing init or every process"
        return None

    def _allow_listed(self, segments: list[Segment]) -> bool:
        """Every simple command matches a pattern, none substitutes, none writes outside."""
        if not self._allow or not segments:
            return False
        for segment in segments:
            line = segment.text[:_SEGMENT_CAP]
            if segment.joiner in _SUBSTITUTION or segment.parent:
                return False
            if not any(allowed.search(line) for allowed in self._allow):
                return False
            if _writes_outside(segment):
                return False
        return True


def plain_text(command: str) -> str:
    """`command` with look-alikes undone: NFKC (full-width `ｒｍ` is `rm`), format characters
    (zero-width spaces and joiners, soft hyphens, direction marks) removed."""
    if command.isascii():
        return command
    folded = unicodedata.normalize("NFKC", command)
    return "".join(char for char in folded if unicodedata.category(char) != "Cf")


def _signals_init_or_everyone(line: str) -> bool:
    """`kill` aimed at PID 1 or -1 (every process); a signal spec (`-1` is HUP) is no PID."""
    start = _KILL.match(line)
    if start is None:
        return False
    args = line[start.end() :].split()
    signal = ""
    if len(args) > 1 and args[0] in ("-s", "-n"):
        signal, args = args[0] + args[1], args[2:]
    elif len(args) > 1 and args[0].startswith("-") and args[0] != "--":
        signal, args = args[0], args[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    return signal not in _NO_SIGNAL and any(pid in ("1", "-1") for pid in args)


def _runs_a_download(segments: list[Segment], index: int) -> bool:
    """`curl … | sh`, `bash <(curl …)`, `sh -c "$(curl …)"`."""
    segment = segments[index]
    if not _DOWNLOAD.search(segment.text[:_SEGMENT_CAP]):
        return False
    if segment.joiner in _SUBSTITUTION and _INTERPRETER.search(segment.parent):
        return True
    following = segments[index + 1] if index + 1 < len(segments) else None
    return (
        following is not None
        and following.joiner == "|"
        and bool(_STDIN_PROGRAM.search(following.text[:_SEGMENT_CAP]))
    )


def _writes_outside(segment: Segment) -> bool:
    """A redirection, `tee` or `cd` whose target is not plainly inside the workspace."""
    targets = [m.group(1) for m in _REDIRECT.finditer(segment.text[:_SEGMENT_CAP])]
    command = _START_RE.sub("", segment.words[0]) if segment.words else ""
    if command in _WRITERS:
        targets += [word for word in segment.words[1:] if not word.startswith("-")]
    return any(
        target not in _HARMLESS_TARGETS and (not target or _OUTSIDE.search(target))
        for target in targets
    )
