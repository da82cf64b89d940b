"""HTML as Markdown-ish text for a model: one converter for fetched pages and HTML mail.

Written on the standard library's `html.parser` because the common converters (html2text) are
GPL, which the project does not take. Two passes, each linear in the page whatever its markup:

1. `well_formed` rewrites the page so the parser never rescans. `html.parser` looks ahead from
   every `<` of an unfinished construct (a page of `<title<title...` took seconds per 100 KB,
   growing quadratically), so comments, scripts and styles are cut out with one `find` each,
   every tag becomes a complete `<...>` with balanced quotes and every other `<` is escaped.
2. `_Markdown` turns the parser's events into text: headings as `#`, paragraphs and line
   breaks, lists as `-` or numbers, links as `[text](url)` (only http(s) and mailto kept),
   `<pre>` in fences and `<code>` in backticks verbatim, tables as `| a | b |` rows, hidden
   content (head, noscript, template, svg...) dropped, entities decoded, whitespace collapsed.
   Every event writes a bounded amount (list indents are capped), so the text stays within a
   constant factor of the page.

The page goes to the parser 2 KB at a time (`html_text_steps`, see `countbot.common.cooperative`): 2
KB of dense tags (`<a><a>...`) is a short step of pure-Python parsing, so a page of megabytes
converts on the event loop in short steps instead of one long stall. The scans before it are sliced
too: the page is lowercased (ASCII only, so offsets stay those of the page) 256 KB per step, and
comments, scripts and styles are cut out a few hundred per step (a page of 285,000 empty comments
was 1.5 s in one)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser

from countbot.common.cooperative import Steps, finish

# A tag candidate, a run of text, or a lone "<": each alternative stops at the next "<" or ">",
# so the scan never backtracks past what it has read.
_TOKENS = re.compile(r"<[^<>]*>|[^<]+|<")
_DROPPED = ((b"<!--", b"-->"), (b"<script", b"</script"), (b"<style", b"</style"))
_MAX_TITLE = 300
# Characters of page handed to the parser per step: a few ms of pure-Python parsing.
_FEED = 2048
# Characters lowercased per step (one C call), and dropped sections cut out per step.
_LOWER_SLICE = 256 * 1024
_DROPS_PER_STEP = 500
# A tag longer than this keeps only its name.
_MAX_TAG = 4096
_TAG_NAME = re.compile(r"</?[^\s/>]*")
_MAX_INDENT = 8  # nested lists deeper than this are indented no further: bounded output
# Parts written before they are joined into one string. A page of 400,000 one-letter paragraphs
# is 800,000 parts of ~60 bytes each otherwise: far more than the page.
_JOIN_PARTS = 4096
_LINK_SCHEMES = ("http://", "https://", "mailto:")

# Content a reader never sees. `title` is reported apart (`page_title`); `body` ends the head
# even when `</head>` is missing.
_HIDDEN = frozenset(
    {"head", "title", "noscript", "template", "svg", "math", "iframe", "object", "select"}
)
_PARAGRAPHS = frozenset(
    {
        "p", "blockquote", "section", "article", "aside", "header", "footer", "nav", "main",
        "figure", "form", "fieldset", "dl", "address", "details",
    }
)  # fmt: skip
_LINES = frozenset({"div", "dt", "dd", "figcaption", "summary", "caption", "center"})
_HEADINGS = {f"h{level}": "#" * level for level in range(1, 7)}
_EMPHASIS = {"b": "**", "strong": "**", "i": "_", "em": "_"}
_CODE = frozenset({"code", "kbd", "samp", "tt"})
_SPACE = re.compile(r"\s+")


def page_title(html: str) -> str:
    """The first <title>'s text; plain `find`s, each starting where the last ended."""
    return finish(page_title_steps(html))


def page_title_steps(html: str) -> Steps[str]:
    """`page_title` as bounded steps (`countbot.common.cooperative`)."""
    lowered = yield from _lowered_steps(html)
    start = lowered.find(b"<title")
    if start < 0:
        return ""
    opened = lowered.find(b">", start)
    end = lowered.find(b"</title", opened) if opened >= 0 else -1
    if end < 0:
        return ""
    return " ".join(unescape(html[opened + 1 : end]).split())[:_MAX_TITLE]


def html_to_text(html: str) -> str:
    """Readable Markdown-ish text of `html`; time linear in its length, whatever its markup."""
    return finish(html_text_steps(html))


def html_text_steps(html: str) -> Steps[str]:
    """`html_to_text` as bounded steps (`countbot.common.cooperative`): a slice of the page per
    step."""
    parser = _Markdown()
    pending: list[str] = []
    size = 0
    kept = yield from _without_dropped(html)
    for part in _well_formed_parts(kept):
        pending.append(part)
        size += len(part)
        if size >= _FEED:
            parser.feed("".join(pending))
            pending, size = [], 0
            yield
    parser.feed("".join(pending))
    parser.close()
    return parser.text()


def well_formed(html: str) -> str:
    """`html` rewritten so every `<` opens a complete tag; linear time."""
    return "".join(_well_formed_parts(finish(_without_dropped(html))))


def _well_formed_parts(html: str) -> Iterator[str]:
    """The pieces of `well_formed`; text runs come in slices of at most `_FEED` characters."""
    for token in _TOKENS.finditer(html):
        text = token.group()
        if text[0] != "<":
            for start in range(0, len(text), _FEED):
                yield text[start : start + _FEED]
        elif len(text) == 1 or text[-1] != ">":
            yield "&lt;"
        elif len(text) > _MAX_TAG:
            # Only data no reader sees makes a tag this long; the parser would read it in one go.
            head = _TAG_NAME.match(text)
            yield (head.group() if head else "<") + ">"
        elif text.count('"') % 2 or text.count("'") % 2:
            # An unbalanced quote would make the parser look for its partner far ahead.
            yield text.replace('"', "").replace("'", "")
        else:
            yield text


def _lowered_steps(html: str) -> Steps[bytes]:
    """`html` with ASCII letters lowercased, one byte per character (others become `?`).

    `str.lower` would keep neither the offsets (`"İ".lower()` is two characters, so a `find` in
    it points past the tag in the page) nor the pace (CJK text is lowercased slowly in one call).
    """
    parts: list[bytes] = []
    for start in range(0, len(html), _LOWER_SLICE):
        parts.append(html[start : start + _LOWER_SLICE].encode("ascii", "replace").lower())
        yield
    return b"".join(parts)


def _without_dropped(html: str) -> Steps[str]:
    """`html` without comments, scripts and styles; an unclosed one runs to the end.

    The next place of each opener is remembered and searched again only once passed, so every
    `find` moves forward: one pass over the page in all, `_DROPS_PER_STEP` sections per step.
    """
    lowered = yield from _lowered_steps(html)
    kept: list[str] = []
    position = 0
    following = {opener: lowered.find(opener) for opener, _ in _DROPPED}
    for dropped in itertools.count(1):
        if dropped % _DROPS_PER_STEP == 0:
            yield
        for opener, at in following.items():
            if 0 <= at < position:
                following[opener] = lowered.find(opener, position)
        found = [
            (at, opener, closer) for opener, closer in _DROPPED if (at := following[opener]) >= 0
        ]
        if not found:
            kept.append(html[position:])
            break
        start, opener, closer = min(found)
        kept.append(html[position:start])
        end = lowered.find(closer, start + len(opener))
        if end < 0:
            break
        position = lowered.find(b">", end)
        position = len(html) if position < 0 else position + 1
    return "".join(kept)


class _Markdown(HTMLParser):
    """Parser events to Markdown-ish text.

    Breaks are asked for, not written: `_break(n)` records that the next text starts after at
    least `n` newlines, so nested blocks never pile up blank lines and none trail the text.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._joined: list[str] = []  # text no longer changed, a string per `_join`
        self._parts: list[str] = []  # text since, where links and trimming may still change it
        self._pending = 0  # newlines owed before the next text
        self._line_start = True
        self._after_space = False  # the last text written ended in a space
        self._hidden: dict[str, int] = {}  # per hidden tag, how many are open
        self._hiding = 0  # their sum: text is dropped while it is above 0
        self._written = 0  # characters of text written, to tell an empty link
        self._pre = 0  # open <pre>s: text verbatim
        self._code = 0  # open code spans outside <pre>: text verbatim on one line
        self._lists: list[list[int]] = []  # per open list: [ordered (0/1), next number]
        # Per open <a>: where its "[" is, the text written before it, the href kept (or None).
        self._links: list[tuple[int, int, str | None]] = []
        self._cells = 0  # cells written in the open table row
        self._header_row = False

    def text(self) -> str:
        return "".join(self._joined + self._parts).strip()

    def _join(self) -> None:
        """Join the parts that nothing will change any more into one string.

        That is every part before the oldest open link (its placeholder may still become "[")
        but the last. A link open across half of `_JOIN_PARTS` loses its brackets instead of
        pinning the parts: no reader follows a link as long as a page.
        """
        recent = len(self._parts) - _JOIN_PARTS // 2
        self._links = [(at, n, href if at >= recent else None) for at, n, href in self._links]
        keep = min([at for at, _, href in self._links if href is not None], default=recent)
        keep = min(keep, len(self._parts) - 1)
        self._joined.append("".join(self._parts[:keep]))
        del self._parts[:keep]
        self._links = [(max(at - keep, 0), n, href) for at, n, href in self._links]

    # --- writing --------------------------------------------------------------------------

    def _break(self, newlines: int) -> None:
        if self._parts:
            self._pending = max(self._pending, newlines)

    def _write(self, text: str) -> None:
        """Append `text` (already formatted), paying the newlines owed first."""
        if text:
            self._pay()
            self._parts.append(text)
            self._line_start = text.endswith("\n")
            self._after_space = text.endswith(" ")
            if len(self._parts) >= _JOIN_PARTS:
                self._join()

    def _pay(self) -> None:
        """Write the newlines owed, trimming the spaces that ended the line before them."""
        if not self._pending:
            return
        if not self._pre:
            last = len(self._parts) - 1
            while last > 0 and not self._parts[last]:
                last -= 1  # past link placeholders; a newline is appended below, so each once
            if last >= 0 and (self._parts[last] or not self._joined):
                self._parts[last] = self._parts[last].rstrip(" ")
            elif last >= 0:  # only placeholders since the last join: the line ends in there
                self._joined[-1] = self._joined[-1].rstrip(" ")
        self._parts.append("\n" * self._pending)
        self._pending = 0
        self._line_start = True

    def handle_data(self, data: str) -> None:
        if self._hiding:
            return
        if self._code and not self._pre:
            data = data.replace("\n", " ")  # verbatim, but a code span stays on its line
        elif not self._pre:
            data = _SPACE.sub(" ", data)
            if (self._line_start or self._pending or self._after_space) and data[:1] == " ":
                data = data[1:]
        if data:
            self._written += len(data.strip())
            self._write(data)

    # --- tags -----------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden[tag] = self._hidden.get(tag, 0) + 1
            self._hiding += 1
            return
        if tag == "body":
            self._hiding -= self._hidden.pop("head", 0) + self._hidden.pop("title", 0)
        if self._hiding:
            return
        if tag in _HEADINGS:
            self._break(2)
            self._write(_HEADINGS[tag] + " ")
        elif tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _LINES or tag == "tr":
            self._break(1)
            self._cells = 0
        elif tag == "br":
            self._write("\n")
        elif tag == "hr":
            self._break(2)
            self._write("---")
            self._break(2)
        elif tag in ("ul", "ol", "menu"):
            self._break(2 if not self._lists else 1)
            self._lists.append([tag == "ol", _start(attrs)])
        elif tag == "li":
            self._list_item()
        elif tag == "pre":
            self._break(2)
            self._write("```\n")
            self._pre += 1
        elif tag in _CODE and not self._pre:
            self._write("`")
            self._code += 1
        elif tag in _EMPHASIS:
            self._write(_EMPHASIS[tag])
        elif tag == "a":
            href = (dict(attrs).get("href") or "").strip()
            kept = href if href.lower().startswith(_LINK_SCHEMES) else None
            self._pay()
            self._links.append((len(self._parts), self._written, kept))
            self._parts.append("")  # becomes "[" if the link shows any text
            if len(self._parts) >= _JOIN_PARTS:
                self._join()
        elif tag in ("td", "th"):
            self._write("| " if self._cells == 0 else " | ")
            self._cells += 1
            self._header_row = self._header_row or tag == "th"
        elif tag == "table":
            self._break(2)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HIDDEN:  # a self-closed <svg/> hides nothing
            self.handle_starttag(tag, attrs)
            if tag not in ("br", "hr"):
                self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            if self._hidden.get(tag):
                self._hidden[tag] -= 1
                self._hiding -= 1
            return
        if self._hiding:
            return
        if tag in _HEADINGS or tag in _PARAGRAPHS or tag == "table":
            self._break(2)
        elif tag in _LINES:
            self._break(1)
        elif tag in ("ul", "ol", "menu"):
            if self._lists:
                self._lists.pop()
            self._break(2 if not self._lists else 1)
        elif tag == "li":
            self._break(1)
        elif tag == "pre" and self._pre:
            self._pre -= 1
            if not self._parts[-1].endswith("\n"):
                self._write("\n")
            self._write("```")
            self._break(2)
        elif tag in _CODE and not self._pre and self._code:
            self._write("`")
            self._code -= 1
        elif tag in _EMPHASIS:
            self._write(_EMPHASIS[tag])
        elif tag == "a" and self._links:
            self._end_link()
        elif tag == "tr" and self._cells:
            self._write(" |")
            if self._header_row:
                self._write("\n" + "|" + " --- |" * self._cells)
            self._header_row = False
            self._cells = 0
            self._break(1)

    def _list_item(self) -> None:
        self._break(1)
        depth = max(0, min(len(self._lists), _MAX_INDENT) - 1)
        marker = "-"
        if self._lists and self._lists[-1][0]:
            marker = f"{self._lists[-1][1]}."
            self._lists[-1][1] += 1
        self._write("  " * depth + marker + " ")

    def _end_link(self) -> None:
        at, written, href = self._links.pop()
        if href is None:
            return
        if self._written != written:  # an empty link (an icon) leaves nothing behind
            self._parts[at] = "["
            self._write(f"]({href})")


def _start(attrs: list[tuple[str, str | None]]) -> int:
    """An ordered list's first number (`<ol start="3">`), 1 when absent or not a number."""
    value = dict(attrs).get("start") or ""
    return int(value) if value.isdigit() and len(value) < 7 else 1
