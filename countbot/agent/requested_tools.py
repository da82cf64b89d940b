"""What a message asks a small model to do, in English or Chinese, as the tools to offer.

A 135M model calls whatever it is offered, so a small model is offered only the tools its
message asks for, and its message is read the way people write: everyday verbs ("what's in",
"summarize", "delete"), Chinese without spaces ("读一下", "列出工作区里的文件"), a file named or
not. The rules, in order (the first that matches decides):

- a link: `web_fetch`;  a reminder: `cron`;
- deleting a named file: `exec` (there is no delete tool; the shell runs in the sandbox), a note
  to forget: `memory_forget`;
- creating a named file: `write_file`;
- reading a named file (read, show, what's in, summarize, 读, 看, 总结, 里有什么): `read_file`,
  never a writing tool;
- running a command (run, execute, 运行): `exec`;
- listing (list, which files, the workspace, 列出, 哪些文件): `list_dir`;
- changing a named file: `edit_file` with `read_file`;  creating or saving a file: `write_file`;
- composing text (write a sentence, a poem, an email; 写一首诗) with no file: no tool, the answer
  is the text;
- remembering: `memory_write` (reading the notes: `memory_read`);  what was said before:
  `memory_search`;
- searching the web: `web_search`.

A message none of them matches is left to the caller's general scoring (`toolset.select_tools`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_FILE_NAME = re.compile(r"(?<![\w.])[\w-]+\.[a-z0-9]{1,5}\b", re.IGNORECASE)
_LINK = re.compile(r"https?://\S+", re.IGNORECASE)


def _english(*words: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Asks:
    """A kind of request: its English words (a pattern) and Chinese ones (substrings)."""

    english: re.Pattern[str]
    chinese: tuple[str, ...]

    def __call__(self, message: str) -> bool:
        return bool(self.english.search(message)) or any(w in message for w in self.chinese)


_READ = _Asks(
    _english(
        r"read", r"show", r"open", r"view", r"display", r"print", r"cat", r"look (?:at|inside)",
        r"summari[sz]e", r"summary", r"contents?", r"what'?s in", r"what is in",
        r"what does", r"tell me (?:about|what)", r"check",
    ),
    ("读", "看", "打开", "显示", "总结", "概括", "摘要", "内容", "里有什么", "写了什么",
     "说了什么"),
)  # fmt: skip
_LIST = _Asks(
    _english(r"list", r"ls", r"which files", r"what files", r"files", r"folders?",
             r"director(?:y|ies)", r"workspace"),
    ("列出", "列一下", "哪些文件", "什么文件", "文件列表", "目录", "文件夹", "工作区"),
)  # fmt: skip
_DELETE = _Asks(_english(r"delete", r"remove", r"erase", r"rm", r"trash"), ("删除", "删掉", "移除"))
_FORGET = _Asks(_english(r"forget"), ("忘掉", "忘记", "别记"))
_EDIT = _Asks(
    _english(r"edit", r"change", r"replace", r"modify", r"update", r"fix", r"append", r"rename",
             r"add .{1,40} to"),
    ("修改", "改成", "替换", "编辑", "追加", "改一下"),
)  # fmt: skip
_CREATE = _Asks(
    _english(r"create", r"make", r"new file", r"save (?:it |this )?(?:as|to|in)"),
    ("创建", "新建", "生成", "建一个"),
)
_WRITE = _Asks(
    _english(r"write", r"create", r"make", r"save", r"put", r"new file", r"compose", r"draft"),
    ("写", "创建", "新建", "保存", "生成", "建一个"),
)
_FILE_WORD = _Asks(_english(r"files?"), ("文件",))
_REMIND = _Asks(
    _english(r"remind", r"reminders?", r"alarm", r"wake me", r"every (?:day|morning|week)"),
    ("提醒", "闹钟", "叫醒"),
)
_REMEMBER = _Asks(
    _english(r"remember", r"memori[sz]e", r"note", r"notes", r"don'?t forget", r"keep in mind"),
    ("记住", "记下", "记一下", "备忘", "别忘了"),
)
_RECALL = _Asks(
    _english(r"do you remember", r"did i (?:tell|say|mention)", r"recall", r"what did i"),
    ("还记得", "我说过", "我告诉过", "之前说"),
)
_SEARCH = _Asks(
    _english(r"search", r"look up", r"google", r"news", r"weather", r"latest", r"online"),
    ("搜索", "搜一下", "查一下", "上网", "新闻", "天气", "最新"),
)
_RUN = _Asks(
    _english(r"run", r"execute", r"command", r"shell", r"install", r"script", r"terminal"),
    ("运行", "执行", "命令", "安装", "脚本"),
)

Rule = Callable[[str, bool, bool], "tuple[str, ...] | None"]


def requested_tools(message: str) -> tuple[str, ...] | None:
    """The tool names `message` asks for (empty: none, answer in text), or None when no rule
    knows (the caller scores it)."""
    named = bool(_FILE_NAME.search(_LINK.sub(" ", message)))
    about_files = named or _FILE_WORD(message)
    for rule in _RULES:
        found = rule(message, named, about_files)
        if found is not None:
            return found
    return None


def _link(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    return ("web_fetch",) if _LINK.search(message) else None


def _reminder(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    return ("cron",) if _REMIND(message) else None


def _deletion(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    if _DELETE(message) and named:
        return ("exec",)
    if (_DELETE(message) or _FORGET(message)) and _REMEMBER(message) and not named:
        return ("memory_forget",)
    return None


def _creating(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    # Before reading: "create todo.txt, its content is ..." (内容) makes a file.
    return ("write_file",) if named and _CREATE(message) else None


def _reading(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    return ("read_file",) if named and _READ(message) else None


def _listing(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    return ("list_dir",) if _LIST(message) and not named else None


def _file_change(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    if named and _EDIT(message):
        return ("edit_file", "read_file")
    if files and _WRITE(message):
        return ("write_file",)
    return None


def _composing(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    # Write a sentence, a poem, an email: the answer is the text (a file was asked for above).
    return () if _WRITE(message) and not _REMEMBER(message) else None


def _memory(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    if _RECALL(message):
        return ("memory_search",)
    if not _REMEMBER(message):
        return None
    return ("memory_read",) if _READ(message) else ("memory_write",)


def _command(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    return ("exec",) if _RUN(message) else None


def _web_search(message: str, named: bool, files: bool) -> tuple[str, ...] | None:
    return ("web_search",) if _SEARCH(message) else None


_RULES: tuple[Rule, ...] = (
    _link,
    _reminder,
    _deletion,
    _creating,
    _reading,
    _command,
    _listing,
    _file_change,
    _composing,
    _memory,
    _web_search,
)
