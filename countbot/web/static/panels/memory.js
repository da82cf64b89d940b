// MEMORY.md, the assistant's long-term memory, as an editable text.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { loadPanel, statusLine } from "./panel.js";

export function renderMemory(root) {
  return loadPanel(root, "memory.title", () => api("/api/memory"), memoryEditor);
}

function memoryEditor(data) {
  let saved = data.content || "";
  const editor = h("textarea", {
    class: "memory-editor",
    testid: "memory-editor",
    spellcheck: "false",
    value: saved,
    i18nAttrs: { "aria-label": "memory.title", placeholder: "memory.empty" },
  });
  const status = statusLine("memory-status");
  editor.addEventListener("input", () => {
    if (editor.value !== saved) status.show("busy", "memory.unsaved");
    else status.clear();
  });
  const save = async () => {
    status.show("busy", "common.saving");
    try {
      const result = await api("/api/memory", { method: "PUT", body: { content: editor.value } });
      saved = result?.content ?? editor.value;
      status.show("ok", "common.saved");
    } catch (error) {
      status.show("error", "common.saveFailed", { error: error.message });
    }
  };
  return h(
    "div",
    { class: "memory" },
    h("p", { class: "muted", i18n: "memory.hint" }),
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
