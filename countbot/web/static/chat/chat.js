// The open conversation: which session it is, its live turn, the messages still waiting for the
// server's acknowledgement, and the REST load that (re)builds it. Frames for other sessions are
// ignored here; the sidebar only hears that something happened.

import { api } from "../lib/api.js";
import { toast, toastKey } from "../lib/toast.js";
import { ApprovalCard } from "./approvalCard.js";
import { bindMessageActions } from "./messageActions.js";
import { renderRecords } from "./records.js";

const PAGE_SIZE = 50;
const LAST_SESSION_KEY = "countbot.session";
const TERMINAL = new Set(["done", "error", "cancelled"]);
// Transient notices that say what a running turn is doing (the working indicator words them).
const WORKING_NOTICES = new Set(["summarizing", "retrying"]);

export class Chat {
  /**
   * onRunning(bool): a turn started or ended. onSessionChange(id | null): another session is
   * shown. onActivity(): sessions changed (new, renamed by the agent, updated). `subagents`
   * shows the session's running subagents; `models` is the chat's model selector, `memory` its
   * "Remember this chat" switch.
   */
  constructor({
    socket,
    transcript,
    subagents,
    models,
    memory,
    onRunning,
    onSessionChange,
    onActivity,
    agent,
  }) {
    this.agent = agent; // the assistant a new chat talks to (the switcher's pick)
    this.socket = socket;
    this.models = models; // the model selector (ModelPicker)
    this.memory = memory; // the "Remember this chat" switch (MemorySwitch)
    this.transcript = transcript;
    this.subagents = subagents;
    this.onRunning = onRunning;
    this.onSessionChange = onSessionChange;
    this.onActivity = onActivity;
    this.sessionId = null;
    this.view = 0; // bumped on every switch, so late answers for an old view are dropped
    this.load = 0;
    this.loading = false;
    this.buffered = [];
    this.running = false;
    this.pending = []; // sent messages awaiting their `session` frame
    this.held = []; // messages typed before a new session had its id
    this.creating = false;
    this.queued = [];
    // Sent from this tab, their turn not ended: {el, after, running}. Until then no stored
    // history is sure to hold them (a follow-up is stored when its turn starts), so a reload
    // keeps them on screen unless the history or the replayed turn shows them.
    this.unstored = [];
    this.newestId = null; // the newest stored record seen (what a message sent now comes after)
    this.oldestId = null;
    this.sent = 0;
    this.approvals = new Map(); // open question id -> ApprovalCard
    bindMessageActions(transcript.list, {
      textOf: (el) => transcript.textOf(el),
      replace: (el, content) => this.replace(el, content),
    });
  }

  static lastSession() {
    return localStorage.getItem(LAST_SESSION_KEY);
  }

  /** Show a session (null: a new, empty chat). */
  async open(sessionId) {
    if (this.sessionId && this.sessionId !== sessionId) this.socket.unwatch(this.sessionId);
    this.view += 1;
    this.sessionId = sessionId;
    this.held = [];
    this.creating = false;
    this.queued = [];
    this.unstored = [];
    this.newestId = null;
    this.oldestId = null;
    this.setRunning(false);
    this.clearApprovals();
    this.transcript.clear();
    this.remember(sessionId);
    this.subagents.show(sessionId);
    this.models.show(sessionId);
    this.memory.show(sessionId);
    if (!sessionId) return;
    this.socket.watch(sessionId);
    await this.reload();
  }

  remember(sessionId) {
    if (sessionId) localStorage.setItem(LAST_SESSION_KEY, sessionId);
    else localStorage.removeItem(LAST_SESSION_KEY);
    this.onSessionChange(sessionId);
  }

  /** Rebuild from REST; frames arriving meanwhile are held and applied afterwards. */
  async reload() {
    const view = this.view;
    const load = ++this.load;
    this.loading = true;
    this.buffered = [];
    const path = `/api/sessions/${encodeURIComponent(this.sessionId)}/messages?limit=${PAGE_SIZE}`;
    const open = `/api/approvals?session_id=${encodeURIComponent(this.sessionId)}`;
    let page;
    let questions;
    try {
      [page, questions] = await Promise.all([api(path), api(open).catch(() => ({ pending: [] }))]);
    } catch (error) {
      if (view !== this.view || load !== this.load) return;
      this.loading = false;
      if (error.status === 404) {
        toastKey("chat.sessionGone");
        await this.open(null);
      } else {
        this.transcript.notice("error", { key: "chat.loadFailed", args: { error: error.message } });
      }
      return;
    }
    if (view !== this.view || load !== this.load) return;
    this.clearApprovals();
    this.transcript.clear();
    // A running turn's frames were replayed: they show that turn, so the stored part of it
    // (its user message, finished steps) is left to them rather than shown twice.
    const replayed = this.buffered.some((frame) => frame.replay);
    const records = replayed ? beforeTurn(page.messages, this.buffered) : page.messages;
    renderRecords(this.transcript, records);
    this.paged(page);
    this.loading = false;
    // Questions still waiting for an answer (a reload while one was open shows it again).
    for (const question of questions.pending) this.apply({ type: "approval_request", ...question });
    const stored = page.messages.filter((r) => r.type === "user").at(-1)?.content;
    this.keepUnstored(page.messages, this.buffered);
    if (page.messages.length) this.newestId = page.messages.at(-1).id;
    // The stored state decides the Stop button; frames of a live turn turn it on again.
    this.setRunning(Boolean(page.running));
    for (const frame of this.buffered.splice(0)) {
      // The user message may already be stored; the stream after it is not.
      if (!frame.replay && frame.type === "user_message" && frame.content === stored) continue;
      this.apply(frame);
    }
    this.transcript.scrollToEnd();
  }

  /**
   * Messages sent from this tab that neither the reloaded history (`records`) nor the replayed
   * turn (`frames`) shows (still travelling, queued, accepted but not stored by their turn yet,
   * or sent while the daemon restarted) stay on screen, after the history.
   */
  keepUnstored(records, frames) {
    const shown = frames.filter((f) => f.replay && f.type === "user_message").map((f) => f.content);
    const claimed = new Set();
    this.unstored = this.unstored.filter(({ el, after }) => {
      const text = el.querySelector(".message-text")?.textContent ?? "";
      const record = records.find(
        (r) =>
          r.type === "user" &&
          !claimed.has(r.id) &&
          (after === null || r.id > after) &&
          r.content === text,
      );
      if (record) {
        claimed.add(record.id);
        return false; // stored: the history shows it from now on
      }
      const replayed = shown.indexOf(text);
      if (replayed >= 0) shown.splice(replayed, 1);
      else this.transcript.add(el);
      return true;
    });
  }

  paged(page) {
    if (page.messages.length) this.oldestId = page.messages[0].id;
    this.transcript.setHasMore(Boolean(page.has_more));
  }

  async loadEarlier() {
    if (!this.sessionId || this.oldestId === null) return;
    const view = this.view;
    const id = encodeURIComponent(this.sessionId);
    try {
      const page = await api(
        `/api/sessions/${id}/messages?before_id=${this.oldestId}&limit=${PAGE_SIZE}`,
      );
      if (view !== this.view) return;
      this.transcript.prepend(() => renderRecords(this.transcript, page.messages));
      this.paged(page);
    } catch (error) {
      toast(error.message);
    }
  }

  /**
   * Send `content` in place of the user message `el` and everything after it (regenerate: the
   * same words; edit: new ones). Only between turns: the daemon refuses while one runs.
   */
  async replace(el, content) {
    if (this.running) {
      toastKey("chat.stopFirst");
      return;
    }
    const view = this.view;
    const recordId = Number(el.dataset.recordId) || (await this.storedIdOf(el));
    if (view !== this.view) return;
    if (!recordId) {
      toastKey("chat.notStoredYet");
      return;
    }
    this.transcript.cutFrom(el);
    this.unstored = this.unstored.filter((u) => u.el.isConnected);
    this.send(content, [], undefined, recordId, el.attachments || []);
  }

  /** The stored id of a user message sent live: the same place, counted from the end. */
  async storedIdOf(el) {
    const users = [...this.transcript.list.querySelectorAll('.message[data-role="user"]')];
    const fromEnd = users.length - users.indexOf(el);
    const path = `/api/sessions/${encodeURIComponent(this.sessionId)}/messages?limit=${PAGE_SIZE}`;
    const page = await api(path).catch(() => ({ messages: [] }));
    const stored = page.messages.filter((r) => r.type === "user");
    return stored.at(-fromEnd)?.id ?? 0;
  }

  /** Send a message; while a turn runs, `mode` says how it joins (followup/steer/interrupt). */
  send(content, media, mode, replaceFrom = 0, attachments = []) {
    const clientId = `m${Date.now().toString(36)}-${(this.sent += 1)}`;
    const el = this.transcript.userMessage({ content, images: media, attachments });
    this.transcript.scrollToEnd();
    const frame = { type: "message", session_id: this.sessionId, content, client_id: clientId };
    if (media.length) {
      frame.media = media.map(({ media_type, data }) => ({ type: "image", media_type, data }));
    }
    if (attachments.length) frame.attachments = attachments;
    if (this.running) frame.mode = mode;
    if (replaceFrom) frame.replace_from = replaceFrom;
    const model = this.models.pick();
    if (model) frame.model = model;
    if (this.sessionId === null) frame.agent = this.agent(); // a new chat: the switcher's pick
    const entry = { clientId, el, view: this.view, creates: this.sessionId === null, replaceFrom };
    this.pending.push(entry);
    this.unstored.push({ el, after: this.newestId, running: false });
    if (entry.creates && this.creating) {
      // The first message is creating the session; this one must go to the same session.
      entry.creates = false;
      this.held.push(frame);
      return;
    }
    this.creating ||= entry.creates;
    this.socket.send(frame);
  }

  cancel() {
    if (!this.sessionId) return;
    this.socket.send({ type: "cancel", session_id: this.sessionId });
    // Never leave the stop button stuck (e.g. the daemon restarted mid-turn); more output
    // from a turn that is still stopping shows it again.
    this.setRunning(false);
  }

  /** Entry point for every frame from the socket. */
  handle(frame) {
    if (frame.type === "pong") return;
    if (frame.type === "session") {
      this.acknowledged(frame);
      return;
    }
    if (frame.type === "error" && !frame.session_id) {
      this.refused(frame);
      return;
    }
    if (!frame.session_id || frame.session_id !== this.sessionId) {
      if (TERMINAL.has(frame.type) || frame.type === "user_message") this.onActivity();
      return;
    }
    // A running turn replayed after the history was shown: rebuild, so it is not shown twice.
    if (frame.replay && !this.loading) this.reload();
    if (this.loading) this.buffered.push(frame);
    else this.apply(frame);
  }

  /** The socket lost events of `sessionId`: rebuild it from the stored history. */
  resync(sessionId) {
    if (sessionId === this.sessionId) this.reload();
  }

  takePending(clientId) {
    const index = clientId ? this.pending.findIndex((p) => p.clientId === clientId) : 0;
    return index >= 0 ? this.pending.splice(index, 1)[0] : undefined;
  }

  acknowledged(frame) {
    const entry = this.takePending(frame.client_id);
    if (entry?.creates && entry.view === this.view) this.adopt(frame.session_id);
    else if (frame.session_id !== this.sessionId) this.socket.unwatch(frame.session_id);
    if (entry) {
      if (frame.attachments) this.transcript.showAttachments(entry.el, frame.attachments);
      this.transcript.markUser(entry.el, frame.queued ? "queued" : "");
      if (frame.queued) this.queued.push(entry.el);
      else this.started(entry.el);
    }
    if (frame.session_id === this.sessionId && !frame.queued) this.setRunning(true);
    this.onActivity();
  }

  /** A new chat got its session id: remember it and send what was typed meanwhile. */
  adopt(sessionId) {
    this.sessionId = sessionId;
    this.creating = false;
    this.remember(sessionId);
    this.memory.show(sessionId);
    for (const frame of this.held.splice(0)) {
      frame.session_id = sessionId;
      this.socket.send(frame);
    }
  }

  refused(frame) {
    const entry = frame.client_id ? this.takePending(frame.client_id) : undefined;
    if (entry) {
      this.transcript.markUser(entry.el, "failed");
      this.unstored = this.unstored.filter((u) => u.el !== entry.el);
      if (entry.creates && entry.view === this.view) {
        this.creating = false;
        for (const held of this.held.splice(0)) {
          const waiting = this.takePending(held.client_id);
          if (waiting) this.transcript.markUser(waiting.el, "failed");
        }
      }
    }
    toast(frame.error || "error");
    // A refused regenerate or edit removed nothing stored: show the conversation as it is.
    if (entry?.replaceFrom && entry.view === this.view) this.reload();
  }

  apply(frame) {
    const transcript = this.transcript;
    switch (frame.type) {
      case "user_message":
        if (frame.author?.kind === "subagent") {
          transcript.reportMessage(frame.content || "", frame.author.who || "");
          this.setRunning(true);
          break;
        }
        transcript.userMessage({
          content: frame.content || "",
          images: frame.media || [],
          attachments: frame.attachments || [],
        });
        this.setRunning(true);
        break;
      case "reasoning":
        transcript.reasoning(frame.content || "");
        this.setRunning(true);
        transcript.working.show("thinking");
        break;
      case "stream":
        transcript.stream(frame.content || "");
        this.setRunning(true);
        transcript.working.show("writing");
        break;
      case "tool_start":
        transcript.toolStart({ id: frame.tool_call_id, name: frame.name, args: frame.arguments });
        this.setRunning(true);
        transcript.working.show("tool", { name: frame.name });
        break;
      case "tool_result":
        transcript.toolResult({
          id: frame.tool_call_id,
          name: frame.name,
          result: frame.result,
          status: frame.status,
          durationMs: frame.duration_ms,
          images: frame.images,
        });
        if (this.running) transcript.working.show("waiting");
        break;
      case "done":
        transcript.finish(frame.content || "", frame.usage, frame.model || "");
        this.turnEnded();
        break;
      case "notice":
        transcript.codedNotice(frame.code, frame.text, frame.details || {});
        if (this.running && WORKING_NOTICES.has(frame.code)) {
          transcript.working.show(frame.code, frame.details || {});
        }
        break;
      case "error":
        transcript.endLive();
        if (frame.code) transcript.codedNotice(frame.code, frame.error);
        else {
          transcript.notice("error", {
            key: frame.retryable ? "chat.errorRetryable" : "chat.error",
            args: { error: frame.error || "" },
          });
        }
        this.turnEnded();
        break;
      case "cancelled":
        transcript.endLive();
        transcript.codedNotice("cancelled");
        this.turnEnded();
        break;
      case "approval_request":
        this.ask(frame);
        break;
      case "approval_settled":
        this.settled(frame);
        break;
      case "subagent":
        this.subagents.update(frame);
        this.onActivity(); // its session joins the sidebar
        break;
      default:
        break;
    }
  }

  ask(frame) {
    if (this.approvals.has(frame.id)) return;
    const answer = (decision) => this.socket.send({ type: "approval_response", id: frame.id, decision });
    const card = new ApprovalCard(frame, answer);
    this.approvals.set(frame.id, card);
    this.transcript.endLive();
    this.transcript.add(card.el);
    if (this.running) this.transcript.working.show("approval");
    this.transcript.scrollToEnd();
  }

  settled(frame) {
    const card = this.approvals.get(frame.id);
    if (card) {
      card.settle(frame);
      this.approvals.delete(frame.id);
    } else if (frame.outcome === "unattended") {
      this.transcript.notice("error", {
        key: "approval.unattended",
        args: { tool: frame.tool, summary: frame.summary },
      });
    }
  }

  clearApprovals() {
    for (const card of this.approvals.values()) card.dispose();
    this.approvals.clear();
  }

  turnEnded() {
    this.setRunning(false);
    // The turn that ended stored its message: the history holds it from now on.
    const ended = this.unstored.findIndex((u) => u.running);
    if (ended >= 0) this.unstored.splice(ended, 1);
    const next = this.queued.shift();
    if (next) {
      this.transcript.markUser(next, "");
      this.started(next);
    }
    this.onActivity();
  }

  /** A message of this tab is the running turn's now. */
  started(el) {
    const sent = this.unstored.find((u) => u.el === el);
    if (sent) sent.running = true;
  }

  setRunning(running) {
    if (running === this.running) return;
    this.running = running;
    if (running) this.transcript.working.show("waiting");
    else this.transcript.working.hide();
    this.onRunning(running);
  }
}

/**
 * The stored records before the running turn whose frames are in `frames` (replayed): up to its
 * user message (found by the first replayed one), else up to and including the last user record.
 */
function beforeTurn(records, frames) {
  const first = frames.find((frame) => frame.replay && frame.type === "user_message");
  const users = records.flatMap((record, index) => (record.type === "user" ? [index] : []));
  if (!first) return records.slice(0, (users.at(-1) ?? records.length - 1) + 1);
  const start = users.findLast((index) => records[index].content === first.content);
  return start === undefined ? records : records.slice(0, start);
}
