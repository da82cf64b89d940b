// Inline Markdown for the block renderer in markdown.js: escapes, code spans, links,
// autolinks, bold and italic, built as DOM nodes with text nodes only (see markdown.js).

import { h, label } from "./dom.js";

export const MAX_DEPTH = 12;
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const PUNCTUATION = /[!-/:-@[-`{-~]/;
const BARE_URL = /https?:\/\/[^\s<>]+/iy;
const AUTOLINK = /<((?:https?:\/\/|mailto:)[^\s<>]+)>/iy;
const MAX_LINK_SCAN = 2000;
const WORD = /[\p{L}\p{N}]/u;

/**
 * Inline Markdown: escapes, code spans, links, autolinks, bold and italic; line breaks stay
 * line breaks (chat text means them). Openers without a closer are text; once an emphasis kind
 * found no closer it is not searched for again and link scans are bounded, so hostile input
 * cannot make rendering quadratic.
 */
export function inline(text, depth, noLinks = false) {
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
