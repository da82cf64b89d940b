"""Which tools a turn offers the model: the core ones, and the rest only when the turn needs them.

Every offered schema costs prompt tokens on every call, and a small model given tools it does not
need calls them (a greeting answered with `memory_read`). So each turn picks once, from its
message, and keeps the pick for all its calls (the request prefix stays stable):

- a tool that cannot work now (`Tool.available`, e.g. `web_search` without a backend) never;
- a capable model gets every core tool; grouped tools (an MCP server's) all while the schemas fit
  `agent.tool_budget` tokens, else those of a group the message names, then the most relevant;
- a small model (`ModelChoice.small`) gets only the few tools the message asks for, none for a
  greeting, a plain question or a text to compose: `requested_tools` reads everyday requests in
  English and Chinese, the scoring below the rest.

Relevance is word overlap between the message and a tool's name and description, plus the
intent words below for the core tools (a message says "save a note", not "memory_write").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from countbot.agent.requested_tools import requested_tools
from countbot.llm.types import ToolSpec
from countbot.tools.base import Tool
from countbot.tools.registry import ToolRegistry

# Tools a small model is offered at most in one turn.
SMALL_MODEL_TOOLS = 3
_WORD = re.compile(r"[^\W_]+")
_FILE_NAME = re.compile(r"\b[\w-]+\.[a-z0-9]{1,5}\b", re.IGNORECASE)
_FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
_INTENTS = {
    "read_file": "read open show view contents content cat look inside",
    "write_file": "write create save make new put",
    "edit_file": "edit change replace modify update fix rename",
    "list_dir": "list files folder folders directory directories dir ls workspace",
    "exec": "run command shell execute install script bash terminal",
    "web_fetch": "fetch url http https website page link download",
    "web_search": "search google internet news latest weather price online web",
    "memory_write": "remember note notes memorize forget save",
    "memory_read": "memory recall earlier told",
    "memory_search": "memory recall earlier told search",
    "memory_forget": "forget remove erase delete memory",
    "read_skill": "skill skills",
    "message": "send message telegram slack discord",
    "cron": "remind reminder reminders schedule every daily weekly hourly alarm",
    "spawn": "background subagent parallel research",
}
_STOP_WORDS = (
    "a an and are as at be but by can could do does for from give given has have how i if in "
    "into is it its me my of on one or our please so that the their them then there this to "
    "us was we what when where which who why will with would you your yes no not hi hello hey "
    "thanks thank today now just about again also any all"
)
_STOP = frozenset(_STOP_WORDS.split())


_MESSAGE_CHARS = 8_000


def select_tools(
    registry: ToolRegistry,
    message: str,
    *,
    small: bool,
    budget: int,
    cost: Callable[[ToolSpec], int],
) -> tuple[ToolSpec, ...]:
    """The specs one turn offers (registration order kept); `cost` is a schema's tokens."""
    offered = [(t, s) for s in registry.specs() if (t := registry.get(s.name)) and t.available()]
    grouped = [(t, s) for t, s in offered if t.group]
    if not small and not grouped:  # nothing to choose among: the message need not be read
        return tuple(s for _, s in offered)
    # The opening of a message says what it is about; a pasted megabyte is not read word by word.
    message = message[:_MESSAGE_CHARS]
    words = _words(message) | ({"file"} if _FILE_NAME.search(message) else set())
    if small:
        asked = requested_tools(message)
        if asked is not None:  # what the message asks for, in its words (any language)
            return tuple(spec for _, spec in offered if spec.name in asked)
        return _few(offered, words)
    spent = sum(cost(s) for t, s in offered if not t.group)
    if spent + sum(cost(s) for _, s in grouped) <= budget:
        return tuple(s for _, s in offered)
    named = {t.group for t, _ in grouped if _words(t.group) <= words}
    chosen = {s.name for t, s in grouped if t.group in named}
    spent += sum(cost(s) for _, s in grouped if s.name in chosen)
    ranked = sorted(grouped, key=lambda pair: -_score(pair[0], pair[1], words))
    for tool, spec in ranked:
        if spec.name in chosen or _score(tool, spec, words) == 0:
            continue
        if spent + cost(spec) > budget:
            break
        chosen.add(spec.name)
        spent += cost(spec)
    return tuple(s for t, s in offered if not t.group or s.name in chosen)


def _few(offered: Iterable[tuple[Tool, ToolSpec]], words: set[str]) -> tuple[ToolSpec, ...]:
    """A small model's tools: the best-matching few, none when nothing in the message asks."""
    scored = [(score, spec) for tool, spec in offered if (score := _score(tool, spec, words))]
    if not scored:
        return ()
    best = max(score for score, _ in scored)
    picked = {spec.name for score, spec in scored if score == best}
    ordered = [spec for _, spec in scored if spec.name in picked]
    return tuple(ordered[:SMALL_MODEL_TOOLS])


def _score(tool: Tool, spec: ToolSpec, words: set[str]) -> int:
    """How strongly `words` ask for this tool: intent words count double, then name and text."""
    intents = _words(_INTENTS.get(spec.name, ""))
    described = _words(spec.name.replace("_", " ") + " " + spec.description) - _STOP
    if not tool.group:
        described &= _words(spec.name.replace("_", " ")) | intents  # core: no vague matches
    score = 2 * len(words & intents) + len(words & described)
    if spec.name in _FILE_TOOLS and "file" in words:
        score += 1
    return score


def _words(text: str) -> set[str]:
    """Lower-case words with a plural or verb ending dropped ("files" and "file" match)."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOP}


def _stem(word: str) -> str:
    for ending in ("ing", "es", "s", "ed"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            return word[: -len(ending)]
    return word
