// The chat's model selector: the models the daemon lets a chat pick (the configured one first,
// then its fallbacks and the pulled local models). The pick goes with the next message and the
// daemon keeps it with the session, so reopening the chat shows it selected again.

import { api } from "../lib/api.js";

export class ModelPicker {
  constructor(select) {
    this.select = select;
    this.chosen = null; // what the open session uses (null: not known yet / the configured one)
    this.shown = 0; // bumped per session shown, so a late answer for another one is dropped
  }

  /** Fill the selector for `sessionId` (null: a new chat, which starts on the configured model). */
  async show(sessionId) {
    const shown = ++this.shown;
    const query = sessionId ? `?session_id=${encodeURIComponent(sessionId)}` : "";
    let answer;
    try {
      answer = await api(`/api/chat/models${query}`);
    } catch {
      answer = { models: [], chosen: null };
    }
    if (shown !== this.shown) return;
    this.select.replaceChildren(
      ...answer.models.map((name) => new Option(name, name)),
    );
    this.chosen = answer.chosen || answer.models[0] || null;
    if (this.chosen) this.select.value = this.chosen;
    // One model is no choice: the selector only appears when there is something to pick.
    this.select.hidden = answer.models.length < 2;
  }

  /** The model to send with a message: the selector's value when it differs from the chat's. */
  pick() {
    const value = this.select.value;
    if (!value || value === this.chosen) return undefined;
    this.chosen = value;
    return value;
  }
}
