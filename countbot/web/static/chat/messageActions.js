// What a reader can do with a message: copy it, regenerate an answer, edit a sent message and
// send it again. Regenerating or editing replaces the tail of the conversation from that user
// message on (the `message` frame's `replace_from`, docs/protocol.md): no branches to navigate.

import { h } from "../lib/dom.js";
import { toastKey } from "../lib/toast.js";

/** The row of action buttons under a message of `role` ("user" or "assistant"). */
export function actionRow(role) {
  const button = (action, key) =>
    h("button", {
      type: "button",
      class: "message-action",
      testid: `message-${action}`,
      dataset: { action },
      // Labelled through attributes, shown by CSS: the message's own text stays its words.
      i18nAttrs: { "aria-label": key, title: key },
    });
  const second = role === "user" ? button("edit", "chat.edit") : button("regenerate", "chat.regenerate");
  return h("div", { class: "message-actions" }, button("copy", "chat.copy"), second);
}

/** Handle the action buttons of every message in `list` (one listener for all of them). */
export function bindMessageActions(list, { textOf, replace }) {
  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    // A notice's Retry (an answer that came without text) asks the same question again.
    const message = button?.closest(".message, .notice");
    if (!message) return;
    const action = button.dataset.action;
    if (action === "copy") copy(textOf(message));
    else if (action === "regenerate" || action === "retry") {
      const asked = previousUser(message);
      if (asked) replace(asked, textOf(asked));
    } else if (action === "edit") edit(message, textOf(message), replace);
  });
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toastKey("chat.copied", undefined, "ok");
  } catch {
    toastKey("chat.copyFailed");
  }
}

function previousUser(message) {
  let el = message.previousElementSibling;
  while (el && !(el.classList.contains("message") && el.dataset.role === "user")) {
    el = el.previousElementSibling;
  }
  return el;
}

/** Turn a sent message into an editor; sending it replaces the conversation from there on. */
function edit(message, text, replace) {
  if (message.querySelector(".message-editor")) return;
  const input = h("textarea", { class: "message-editor-input", testid: "message-edit-input", rows: 3 });
  input.value = text;
  const shown = [...message.children];
  const close = () => {
    editor.remove();
    for (const el of shown) el.hidden = false;
  };
  const editor = h(
    "form",
    { class: "message-editor" },
    input,
    h(
      "div",
      { class: "message-editor-buttons" },
      h("button", { type: "button", class: "secondary", i18n: "common.cancel", onclick: close }),
      h("button", { type: "submit", testid: "message-edit-send", i18n: "chat.editSend" }),
    ),
  );
  editor.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.value.trim()) return;
    close();
    replace(message, input.value);
  });
  for (const el of shown) el.hidden = true;
  message.append(editor);
  input.focus();
}
