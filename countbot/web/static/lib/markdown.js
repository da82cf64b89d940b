// A small Markdown renderer for model output that cannot produce HTML.
//
// It never parses HTML and never assigns innerHTML: it builds DOM nodes from a fixed whitelist
// (p, br, h1-h6, strong, em, code, pre, ul, ol, li, blockquote, hr, table parts, a) and puts all
// text in through text nodes, which is escaping by construction: `<script>` stays the visible
// characters "<script>". Links are kept only for http, https and mailto URLs and open in a new
// tab without an opener or referrer. Markdown images become links, so an answer cannot make the
// browser fetch a remote URL by itself.

import { h, label } from "./dom.js";
import { inline, MAX_DEPTH } from "./markdownInline.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*)|[ \t]*)$/;
const TABLE_DELIMITER = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;

/** Render Markdown `source` into a fragment of whitelisted, inert DOM nodes. */
export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = String(source).replace(/\r\n?/g, "\n").replace(/\t/g, "    ").split("\n");
  renderBlocks(lines, fragment, 0);
  return fragment;
}

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
