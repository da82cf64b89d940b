// MEMORY.md, the assistant's long-term memory, as an editable text, under a search of all
// memory (memorySearch.js). The assistant may save a
// note while the page is open: a save names the version it started from, and when the file
// changed meanwhile the page shows both versions and what differs, and loses neither.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { guardLeave } from "../lib/leave.js";
import { lineDiff } from "../lib/lineDiff.js";
import { memorySearch } from "./memorySearch.js";
import { loadPanel, statusLine } from "./panel.js";

export function renderMemory(root, { openSession }) {
  return loadPanel(root, "memory.title", () => api("/api/memory"), (data) =>
    h("div", {}, memorySearch(openSession), memoryEditor(data)),
  );
}

function memoryEditor(data) {
  let saved = data.content || "";
  let version = data.version || "";
  const editor = h("textarea", {
    class: "memory-editor",
    testid: "memory-editor",
    spellcheck: "false",
    value: saved,
    i18nAttrs: { "aria-label": "memory.title", placeholder: "memory.empty" },
  });
  const status = statusLine("memory-status");
  const conflictBox = h("div", { class: "memory-conflict", testid: "memory-conflict" });
  conflictBox.hidden = true;
  const dirty = () => editor.value !== saved;
  guardLeave(dirty);
  editor.addEventListener("input", () => {
    if (dirty()) status.show("busy", "memory.unsaved");
    else status.clear();
  });

  const save = async () => {
    status.show("busy", "common.saving");
    try {
      const result = await api("/api/memory", {
        method: "PUT",
        body: { content: editor.value },
        headers: version ? { "If-Match": `"${version}"` } : {},
      });
      saved = result.content;
      version = result.version;
      conflictBox.hidden = true;
      status.show("ok", "common.saved");
    } catch (error) {
      if (error.status === 409 && error.data) showConflict(error.data);
      else status.show("error", "common.saveFailed", { error: error.message });
    }
  };

  /** The file changed since it was loaded: show theirs beside ours; the editor keeps ours. */
  const showConflict = (current) => {
    const theirs = current.content || "";
    status.show("error", "memory.conflict");
    const useTheirs = () => {
      // The user's version stays in the comparison until they save or reload.
      saved = theirs;
      version = current.version;
      editor.value = theirs;
      status.show("busy", "memory.tookTheirs");
    };
    const keepMine = () => {
      version = current.version; // saving now replaces exactly what they have seen
      save();
    };
    // Every line of both, in the order the comparison shows them: the user reads and saves it.
    const keepBoth = () => {
      const lines = lineDiff(theirs, editor.value);
      saved = theirs;
      version = current.version;
      editor.value = lines ? lines.map((line) => line.text).join("\n") : `${theirs}\n${editor.value}`;
      status.show("busy", "memory.mergedBoth");
    };
    conflictBox.replaceChildren(
      h("p", { i18n: "memory.conflictHint" }),
      diffView(theirs, editor.value),
      h(
        "details",
        { class: "memory-theirs" },
        h("summary", { i18n: "memory.theirsWhole" }),
        h("textarea", { readonly: true, rows: 8, testid: "memory-theirs", value: theirs }),
      ),
      h(
        "div",
        { class: "form-actions" },
        button("memory-keep-mine", "memory.keepMine", keepMine, "primary"),
        button("memory-keep-both", "memory.keepBoth", keepBoth),
        button("memory-use-theirs", "memory.useTheirs", useTheirs),
      ),
    );
    conflictBox.hidden = false;
  };

  return h(
    "div",
    { class: "memory" },
    h("p", { class: "muted", i18n: "memory.hint" }),
    conflictBox,
    editor,
    h(
      "div",
      { class: "form-actions" },
      h("button", {
        type: "button",
        class: "primary",
        testid: "memory-save",
        i18n: "common.save",
        onclick: save,
      }),
      status.el,
    ),
  );
}

function button(testid, key, onclick, kind = "") {
  return h("button", { type: "button", class: kind, testid, i18n: key, onclick });
}

/** Lines only in the saved file (theirs) and only in the editor (mine), in context. */
function diffView(theirs, mine) {
  const lines = lineDiff(theirs, mine);
  if (!lines) return h("p", { class: "muted", i18n: "memory.tooLongToCompare" });
  const marks = { same: " ", removed: "−", added: "+" };
  return h(
    "div",
    { class: "line-diff", testid: "memory-diff" },
    h(
      "p",
      { class: "muted" },
      h("span", { class: "diff-removed", i18n: "memory.onlyTheirs" }),
      " · ",
      h("span", { class: "diff-added", i18n: "memory.onlyMine" }),
    ),
    h(
      "pre",
      {},
      lines.map((line) =>
        h(
          "div",
          { class: `diff-${line.kind}`, dataset: { kind: line.kind } },
          `${marks[line.kind]} ${line.text}`,
        ),
      ),
    ),
  );
}
