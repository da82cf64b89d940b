// The sessions sidebar: search, open, rename in place, delete after an in-place confirmation.

import { api, query } from "../lib/api.js";
import { debounce, h, label } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { t } from "../lib/i18n.js";
import { toast } from "../lib/toast.js";

const PAGE_SIZE = 50;

export class SessionList {
  /** onOpen(id | null): show that session (null: a new chat). onRendered(): titles may differ.
   * agent(): the assistant whose chats are listed. */
  constructor({ list, search, more, onOpen, onRendered, agent }) {
    this.agent = agent;
    this.list = list;
    this.search = search;
    this.more = more;
    this.onOpen = onOpen;
    this.onRendered = onRendered;
    this.sessions = [];
    this.activeId = null;
    this.refreshSoon = debounce(() => this.refresh(), 400);
    search.addEventListener("input", debounce(() => this.refresh(), 250));
    more.addEventListener("click", () => this.loadMore());
  }

  async refresh() {
    await this.fetch(0);
  }

  async loadMore() {
    await this.fetch(this.sessions.length);
  }

  async fetch(offset) {
    const params = { q: this.search.value.trim(), limit: PAGE_SIZE, offset, agent: this.agent() };
    try {
      const data = await api(`/api/sessions${query(params)}`);
      const page = data.sessions || [];
      this.sessions = offset ? [...this.sessions, ...page] : page;
      this.more.hidden = page.length < PAGE_SIZE;
      this.render();
    } catch (error) {
      toast(error.message);
    }
  }

  setActive(sessionId) {
    this.activeId = sessionId;
    for (const item of this.list.children) {
      if (item.dataset.sessionId === sessionId) item.setAttribute("aria-current", "true");
      else item.removeAttribute("aria-current");
    }
  }

  /** Title of a listed session, for the header. */
  titleOf(sessionId) {
    return this.sessions.find((s) => s.id === sessionId)?.title || "";
  }

  render() {
    if (!this.sessions.length) {
      const key = this.search.value.trim() ? "sessions.noMatch" : "sessions.none";
      this.list.replaceChildren(h("li", { class: "session-empty", i18n: key }));
    } else {
      this.list.replaceChildren(...this.sessions.map((session) => this.item(session)));
      this.setActive(this.activeId);
    }
    this.onRendered();
  }

  item(session) {
    const li = h("li", {
      class: "session-item",
      testid: "session-item",
      dataset: { sessionId: session.id },
    });
    this.showItem(li, session);
    return li;
  }

  showItem(li, session) {
    const title = session.title
      ? h("span", { class: "session-title" }, session.title)
      : h("span", { class: "session-title untitled", i18n: "sessions.untitled" });
    const meta = [formatTime(session.updated_at)];
    if (session.parent) {
      const parent = this.titleOf(session.parent) || session.parent;
      meta.push(t("sessions.subagentOf", { parent }));
    } else if (session.channel && session.channel !== "web") meta.push(session.channel);
    li.replaceChildren(
      h(
        "button",
        { type: "button", class: "session-open", onclick: () => this.onOpen(session.id) },
        title,
        h("span", { class: "session-meta" }, meta.join(" · ")),
      ),
      h(
        "span",
        { class: "session-actions" },
        iconButton("rename", "✎", () => this.startRename(li, session)),
        iconButton("delete", "×", () => this.confirmDelete(li, session)),
      ),
    );
  }

  startRename(li, session) {
    const input = h("input", {
      type: "text",
      class: "session-rename-input",
      testid: "session-rename-input",
      maxlength: 200,
      value: session.title || "",
      i18nAttrs: { "aria-label": "sessions.rename" },
    });
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (save && title && title !== session.title) {
        try {
          const updated = await api(`/api/sessions/${encodeURIComponent(session.id)}`, {
            method: "PATCH",
            body: { title },
          });
          Object.assign(session, updated);
        } catch (error) {
          toast(error.message);
        }
      }
      this.showItem(li, session);
      this.onRendered(); // the header shows the open chat's title
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) finish(true);
      if (event.key === "Escape") finish(false);
    });
    input.addEventListener("blur", () => finish(true));
    li.replaceChildren(input);
    input.focus();
    input.select();
  }

  confirmDelete(li, session) {
    li.replaceChildren(
      label(h("span", { class: "session-confirm" }), "sessions.confirmDelete", {
        title: session.title || "…",
      }),
      h(
        "span",
        { class: "session-actions visible" },
        h("button", {
          type: "button",
          class: "danger small",
          testid: "session-delete-confirm",
          i18n: "sessions.delete",
          onclick: () => this.remove(session),
        }),
        h("button", {
          type: "button",
          class: "small",
          i18n: "common.cancel",
          onclick: () => this.showItem(li, session),
        }),
      ),
    );
  }

  async remove(session) {
    try {
      await api(`/api/sessions/${encodeURIComponent(session.id)}`, { method: "DELETE" });
    } catch (error) {
      toast(error.message);
      return;
    }
    if (session.id === this.activeId) this.onOpen(null);
    await this.refresh();
  }
}

/** A session's small action button: `session-<action>` for tests, `sessions.<action>` as its
 * translated title and accessible name, `glyph` as what it shows. */
function iconButton(action, glyph, onclick) {
  const key = `sessions.${action}`;
  return h(
    "button",
    { type: "button", class: "icon-button", testid: `session-${action}`, i18nAttrs: { title: key, "aria-label": key }, onclick },
    glyph,
  );
}
