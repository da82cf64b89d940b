// Searching memory from the Memory page: notes and past conversations through the memory index,
// each hit with its date and source, a conversation one with a link that opens it; and what
// auto-recall put into recent turns, so the user sees what the assistant was reminded of.

import { api, query } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { statusLine } from "./panel.js";

/** The search form, its results and the recent recalls; `openSession` opens a conversation. */
export function memorySearch(openSession) {
  const input = h("input", {
    type: "search",
    testid: "memory-search-input",
    i18nAttrs: { placeholder: "memory.searchPlaceholder", "aria-label": "memory.search" },
  });
  const scope = h(
    "select",
    { testid: "memory-search-scope", i18nAttrs: { "aria-label": "memory.scope" } },
    ["all", "notes", "conversations"].map((value) =>
      h("option", { value, i18n: `memory.scope.${value}` }),
    ),
  );
  const results = h("ol", { class: "memory-hits", testid: "memory-hits" });
  const status = statusLine("memory-search-status");
  const search = async (event) => {
    event.preventDefault();
    const q = input.value.trim();
    if (!q) return;
    status.show("busy", "common.loading");
    try {
      const found = await api(`/api/memory/search${query({ q, scope: scope.value })}`);
      results.replaceChildren(...found.hits.map((hit) => hitItem(hit, openSession)));
      if (found.hits.length) status.clear();
      else status.show("ok", "memory.noHits");
    } catch (error) {
      status.show("error", "common.loadFailed", { error: error.message });
    }
  };
  const recalls = h("div", { class: "memory-recalls", testid: "memory-recalls" });
  loadRecalls(recalls, openSession);
  return h(
    "section",
    { class: "memory-search" },
    h(
      "form",
      { class: "memory-search-form", onsubmit: search },
      input,
      scope,
      h("button", { type: "submit", testid: "memory-search-go", i18n: "memory.search" }),
      status.el,
    ),
    results,
    h(
      "details",
      { class: "memory-recalled" },
      h("summary", { i18n: "memory.recalled" }),
      recalls,
    ),
  );
}

function hitItem(hit, openSession) {
  return h(
    "li",
    { class: "memory-hit", testid: "memory-hit", dataset: { kind: hit.kind } },
    h("div", { class: "memory-hit-citation muted" }, hit.citation),
    hit.written_by
      ? h("div", {
          class: "memory-hit-author muted",
          testid: "memory-hit-author",
          i18n: "memory.writtenBy",
          i18nArgs: { who: hit.written_by },
        })
      : null,
    h("div", { class: "memory-hit-text" }, hit.text),
    hit.session_id ? conversationLink(hit.session_id, hit.title, openSession) : null,
  );
}

function conversationLink(sessionId, title, openSession) {
  return h("a", {
    href: "#/chat",
    class: "memory-open-conversation",
    testid: "memory-open-conversation",
    dataset: { session: sessionId },
    i18n: "memory.openConversation",
    i18nArgs: { title: title || sessionId },
    onclick: (event) => {
      event.preventDefault();
      openSession(sessionId);
    },
  });
}

async function loadRecalls(box, openSession) {
  try {
    const { recalls } = await api("/api/memory/recalls?limit=20");
    if (!recalls.length) {
      box.replaceChildren(h("p", { class: "muted", i18n: "memory.noRecalls" }));
      return;
    }
    box.replaceChildren(
      ...recalls.map((recall) =>
        h(
          "div",
          { class: "memory-recall", testid: "memory-recall" },
          h("div", { class: "muted" }, `${formatTime(recall.ts)} · “${recall.query}”`),
          conversationLink(recall.session_id, "", openSession),
          h(
            "ul",
            {},
            recall.hits.map((hit) => h("li", {}, `(${hit.citation}) ${hit.text}`)),
          ),
        ),
      ),
    );
  } catch (error) {
    box.replaceChildren(h("p", { class: "muted" }, error.message));
  }
}
