// A small Markdown renderer for model output that cannot produce HTML.
//
// It never parses HTML and never assigns innerHTML: it builds DOM nodes from a fixed whitelist
// (p, br, h1-h6, strong, em, code, pre, ul, ol, li, blockquote, hr, table parts, a) and puts all
// text in through text nodes, which is escaping by construction: `<script>` stays the visible
// characters "<script>". Links are kept only for http, https and mailto URLs and open in a new
// tab without an opener or referrer. Markdown images become links, so an answer cannot make the
// browser fetch a remote URL by itself.

import { h, label } from "./dom.js";

const MAX_DEPTH = 12;
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*)|[ \t]*)$/;
const TABLE_DELIMITER = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;
const PUNCTUATION = /[!-/:-@[-`{-~]/;
const BARE_URL = /https?:\/\/[^\s<>]+/iy;
const AUTOLINK = /<((?:https?:\/\/|mailto:)[^\s<>]+)>/iy;
const MAX_LINK_SCAN = 2000;
const WORD = /[\p{L}\p{N}]/u;

/** Render Markdown `source` into a fragment of whitelisted, inert DOM nodes. */
export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = String(source).replace(/\r\n?/g, "\n").replace(/\t/g, "    ").split("\n");
  renderBlocks(lines, fragment, 0);
  return fragment;
}

// --- blocks ---------------------------------------------------------------------------------

function renderBlocks(lines, parent, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) i += 1;
    else if (FENCE.test(line)) i = codeBlock(lines, i, parent);
    else if (HEADING.test(line)) i = heading(lines, i, parent, depth);
    else if (RULE.test(line)) {
      parent.append(h("hr"));
      i += 1;
    } else if (depth < MAX_DEPTH && QUOTE.test(line)) i = blockquote(lines, i, parent, depth);
    else if (depth < MAX_DEPTH && LIST_ITEM.test(line)) i = list(lines, i, parent, depth);
    else if (isTableStart(lines, i)) i = table(lines, i, parent, depth);
    else i = paragraph(lines, i, parent, depth);
  }
}

/** Whether `line` begins a block that ends a running paragraph. */
function interruptsParagraph(line) {
  if (FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)) return true;
  const item = LIST_ITEM.exec(line);
  // Like CommonMark: only "1." may interrupt, so "2019. A good year" stays prose.
  return Boolean(item && item[3] && (!/\d/.test(item[2]) || /^1\D/.test(item[2])));
}

function codeBlock(lines, start, parent) {
  const [, fence, language] = FENCE.exec(lines[start]);
  const indent = lines[start].length - lines[start].trimStart().length;
  const closing = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
  const body = [];
  let i = start + 1;
  // An unclosed fence runs to the end: that is what a still-streaming block looks like.
  while (i < lines.length && !closing.test(lines[i])) {
    body.push(lines[i].replace(new RegExp(`^ {0,${indent}}`), ""));
    i += 1;
  }
  const code = body.join("\n");
  const copy = h("button", { type: "button", class: "code-copy", i18n: "code.copy" });
  copy.addEventListener("click", () => copyText(code, copy));
  parent.append(
    h(
      "div",
      { class: "code-block" },
      h("div", { class: "code-head" }, h("span", { class: "code-lang" }, language || ""), copy),
      h("pre", {}, h("code", {}, code)),
    ),
  );
  return i + 1;
}

function heading(lines, i, parent, depth) {
  const [, hashes, text = ""] = HEADING.exec(lines[i]);
  parent.append(h(`h${hashes.length}`, {}, inline(text, depth)));
  return i + 1;
}

function blockquote(lines, start, parent, depth) {
  const inner = [];
  let i = start;
  while (i < lines.length && QUOTE.test(lines[i])) {
    inner.push(lines[i].replace(QUOTE, ""));
    i += 1;
  }
  const quote = h("blockquote");
  renderBlocks(inner, quote, depth + 1);
  parent.append(quote);
  return i;
}

function indentOf(line) {
  return line.length - line.trimStart().length;
}

function list(lines, start, parent, depth) {
  const first = LIST_ITEM.exec(lines[start]);
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const marker = first[2].slice(-1);
  const sameList = (m) =>
    m && m[1].length <= base + 1 && /\d/.test(m[2]) === ordered && m[2].slice(-1) === marker;
  const items = [];
  let loose = false;
  let blankBefore = false;
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const item = LIST_ITEM.exec(line);
    if (sameList(item)) {
      if (blankBefore && items.length) loose = true;
      const contentIndent = item[1].length + item[2].length + 1;
      items.push({ contentIndent, lines: [item[3] || ""] });
      blankBefore = false;
    } else if (!line.trim()) {
      const next = lines.slice(i + 1).findIndex((l) => l.trim());
      if (next < 0) break;
      const following = lines[i + 1 + next];
      if (indentOf(following) <= base && !sameList(LIST_ITEM.exec(following))) break;
      items.at(-1).lines.push("");
      blankBefore = true;
    } else if (indentOf(line) > base) {
      const current = items.at(-1);
      const strip = Math.min(indentOf(line), current.contentIndent);
      if (blankBefore) loose = true;
      current.lines.push(line.slice(strip));
      blankBefore = false;
    } else if (!blankBefore && !interruptsParagraph(line) && !isTableStart(lines, i)) {
      items.at(-1).lines.push(line); // a lazy continuation of the item's paragraph
    } else break;
    i += 1;
  }
  const el = h(ordered ? "ol" : "ul");
  const startNumber = Number.parseInt(first[2], 10);
  if (ordered && startNumber !== 1) el.start = startNumber;
  for (const item of items) {
    const li = h("li");
    renderBlocks(item.lines, li, depth + 1);
    if (!loose) unwrapParagraphs(li);
    el.append(li);
  }
  parent.append(el);
  return i;
}

/** Tight list items show their text without paragraph spacing. */
function unwrapParagraphs(li) {
  for (const child of [...li.children]) {
    if (child.tagName === "P") child.replaceWith(...child.childNodes);
  }
}

function isTableStart(lines, i) {
  return (
    i + 1 < lines.length &&
    lines[i].includes("|") &&
    lines[i + 1].includes("-") &&
    TABLE_DELIMITER.test(lines[i + 1]) &&
    splitRow(lines[i]).length === splitRow(lines[i + 1]).length
  );
}

function splitRow(line) {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  const cells = [];
  let cell = "";
  let inCode = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (char === "\\" && text[i + 1] === "|") {
      cell += "|";
      i += 1;
    } else if (char === "`") {
      inCode = !inCode;
      cell += char;
    } else if (char === "|" && !inCode) {
      cells.push(cell.trim());
      cell = "";
    } else cell += char;
  }
  cells.push(cell.trim());
  return cells;
}

function table(lines, start, parent, depth) {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((spec) => {
    if (spec.startsWith(":") && spec.endsWith(":")) return "center";
    if (spec.endsWith(":")) return "right";
    return spec.startsWith(":") ? "left" : "";
  });
  const cell = (tag, text, column) => {
    const el = h(tag, {}, inline(text, depth));
    if (aligns[column]) el.style.textAlign = aligns[column];
    return el;
  };
  const head = h("tr", {}, header.map((text, column) => cell("th", text, column)));
  const body = h("tbody");
  let i = start + 2;
  while (i < lines.length && lines[i].trim() && lines[i].includes("|")) {
    const cells = splitRow(lines[i]);
    body.append(h("tr", {}, header.map((_, column) => cell("td", cells[column] ?? "", column))));
    i += 1;
  }
  parent.append(h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, head), body)));
  return i;
}

function paragraph(lines, start, parent, depth) {
  const text = [lines[start].trim()];
  let i = start + 1;
  while (i < lines.length && lines[i].trim() && !interruptsParagraph(lines[i])) {
    if (isTableStart(lines, i)) break;
    text.push(lines[i].trim());
    i += 1;
  }
  parent.append(h("p", {}, inline(text.join("\n"), depth)));
  return i;
}

// --- inline ---------------------------------------------------------------------------------

/**
 * Inline Markdown: escapes, code spans, links, autolinks, bold and italic; line breaks stay
 * line breaks (chat text means them). Openers without a closer are text; once an emphasis kind
 * found no closer it is not searched for again and link scans are bounded, so hostile input
 * cannot make rendering quadratic.
 */
function inline(text, depth, noLinks = false) {
  const out = document.createDocumentFragment();
  if (depth >= MAX_DEPTH) {
    out.append(text);
    return out;
  }
  const failed = new Set();
  let plain = "";
  const flush = () => {
    const parts = plain.split("\n");
    parts.forEach((part, index) => {
      if (index) out.append(h("br"));
      if (part) out.append(part);
    });
    plain = "";
  };
  const emit = (node) => {
    flush();
    out.append(node);
  };
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === "\\" && PUNCTUATION.test(text[i + 1] || "")) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (char === "`") {
      const span = codeSpan(text, i);
      if (span) {
        emit(h("code", {}, span.code));
        i = span.end;
      } else {
        const run = runLength(text, i, "`");
        plain += "`".repeat(run);
        i += run;
      }
      continue;
    }
    if (!noLinks && (char === "[" || (char === "!" && text[i + 1] === "["))) {
      const link = parseLink(text, char === "!" ? i + 1 : i);
      if (link) {
        emit(linkNode(link.href, link.label || link.href, depth, char === "!"));
        i = link.end;
        continue;
      }
    }
    if (!noLinks && char === "<") {
      AUTOLINK.lastIndex = i;
      const auto = AUTOLINK.exec(text);
      if (auto) {
        emit(linkNode(auto[1], auto[1], depth, false));
        i += auto[0].length;
        continue;
      }
    }
    if (!noLinks && (char === "h" || char === "H") && !WORD.test(text[i - 1] || "")) {
      const bare = bareUrl(text, i);
      if (bare) {
        emit(linkNode(bare, bare, depth, false));
        i += bare.length;
        continue;
      }
    }
    if (char === "*" || char === "_") {
      const run = runLength(text, i, char);
      const size = Math.min(run, 3);
      const key = char + size;
      const opens = canOpen(text, i, char, size);
      const close = opens && !failed.has(key) ? findCloser(text, i, char, size) : -1;
      if (close > 0) {
        const inner = inline(text.slice(i + size, close), depth + 1, noLinks);
        emit(emphasis(size, inner));
        i = close + size;
        continue;
      }
      if (opens) failed.add(key);
      plain += char.repeat(run);
      i += run;
      continue;
    }
    plain += char;
    i += 1;
  }
  flush();
  return out;
}

function emphasis(size, inner) {
  if (size === 1) return h("em", {}, inner);
  if (size === 2) return h("strong", {}, inner);
  return h("strong", {}, h("em", {}, inner));
}

function runLength(text, start, char) {
  let end = start;
  while (text[end] === char) end += 1;
  return end - start;
}

function codeSpan(text, start) {
  const run = runLength(text, start, "`");
  let i = start + run;
  while (i < text.length) {
    const next = text.indexOf("`", i);
    if (next < 0) return null;
    const closing = runLength(text, next, "`");
    if (closing === run) {
      let code = text.slice(start + run, next).replace(/\n/g, " ");
      if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
      return { code, end: next + closing };
    }
    i = next + closing;
  }
  return null;
}

/** An opener is followed by text, and `_` does not open inside a word (snake_case). */
function canOpen(text, start, char, size) {
  const after = text[start + size] || "";
  return Boolean(after.trim()) && !(char === "_" && WORD.test(text[start - 1] || ""));
}

/** The index of the delimiter run closing an emphasis opened at `start`, or -1. */
function findCloser(text, start, char, size) {
  let i = start + size;
  while (i < text.length) {
    if (text[i] === "\\") {
      i += 2;
      continue;
    }
    if (text[i] === "`") {
      const span = codeSpan(text, i);
      i = span ? span.end : i + 1;
      continue;
    }
    if (text[i] !== char) {
      i += 1;
      continue;
    }
    const length = runLength(text, i, char);
    const before = text[i - 1] || "";
    const following = text[i + length] || "";
    const flanking = before.trim() && !(char === "_" && WORD.test(following));
    if (flanking && (length === size || (length === 3 && size < 3))) {
      return i + length - size;
    }
    i += length;
  }
  return -1;
}

/** `[label](url "title")` starting at `start` (the "["), or null. */
function parseLink(text, start) {
  const limit = Math.min(text.length, start + MAX_LINK_SCAN);
  let depth = 0;
  let i = start;
  for (; i < limit; i += 1) {
    if (text[i] === "\\") i += 1;
    else if (text[i] === "[") depth += 1;
    else if (text[i] === "]" && --depth === 0) break;
  }
  if (i >= limit || text[i + 1] !== "(") return null;
  const labelText = text.slice(start + 1, i);
  let parens = 0;
  const end = Math.min(text.length, i + 2 + MAX_LINK_SCAN);
  let j = i + 2;
  for (; j < end; j += 1) {
    if (text[j] === "(") parens += 1;
    else if (text[j] === ")" && parens-- === 0) break;
    else if (text[j] === "\n") return null;
  }
  if (j >= end) return null;
  const target = text.slice(i + 2, j).trim();
  const href = /^<[^>]*>/.test(target) ? target.slice(1, target.indexOf(">")) : target.split(/\s+/)[0];
  return { label: labelText, href, end: j + 1 };
}

function bareUrl(text, start) {
  BARE_URL.lastIndex = start;
  const match = BARE_URL.exec(text);
  if (!match) return null;
  let url = match[0].replace(/[.,;:!?'"*_]+$/, "");
  // A closing parenthesis belongs to the URL only when it has an opening one.
  while (url.endsWith(")") && url.split("(").length < url.split(")").length) {
    url = url.slice(0, -1);
  }
  return url;
}

/** A link for safe URLs only; anything else (javascript:, data:, relative) stays plain text. */
function linkNode(href, labelText, depth, isImage) {
  const content = inline(labelText, depth + 1, true);
  const url = safeUrl(href);
  if (!url) return isImage ? h("span", {}, content) : content;
  const a = h("a", { href: url, target: "_blank", rel: "noopener noreferrer" });
  if (isImage) {
    a.className = "image-link";
    a.append(label(h("span", { class: "image-tag" }), "md.image"), " ");
  }
  a.append(content);
  return a;
}

function safeUrl(href) {
  try {
    const url = new URL(href);
    return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Plain http on a LAN address is not a secure context: fall back to a selection copy.
    const area = h("textarea", { class: "visually-hidden", readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  label(button, "code.copied");
  setTimeout(() => label(button, "code.copy"), 1500);
}
