// The one WebSocket to the daemon: reconnects with backoff, keeps it alive with pings, and
// resubscribes every watched session with the last seq it saw so missed events are replayed.
// Sequence bookkeeping lives here; when events cannot be replayed (a gap, or a daemon restart)
// it asks the owner to reload that session's history over REST instead.

import { api, goToLogin } from "./api.js";

const PING_EVERY_MS = 25_000;
const SILENT_LIMIT_MS = 60_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15_000;
const CLOSE_UNAUTHENTICATED = 4401;

export class Socket {
  /**
   * onFrame(frame): every frame from the server. onState(state): "connecting" | "open" |
   * "closed". onResync(sessionId): events were lost, reload that session's history.
   */
  constructor({ onFrame, onState, onResync }) {
    this.onFrame = onFrame;
    this.onState = onState;
    this.onResync = onResync;
    this.state = "closed";
    this.ws = null;
    this.watched = new Map(); // session id -> { lastSeq, verifyNext, resynced }
    this.outbox = [];
    this.failures = 0;
    this.retryTimer = 0;
    this.lastHeard = 0;
    setInterval(() => this.keepAlive(), PING_EVERY_MS);
    addEventListener("online", () => this.reconnectNow());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.reconnectNow();
    });
  }

  start() {
    this.connect();
  }

  /** Send a frame now, or once connected (messages typed while reconnecting are not lost). */
  send(frame) {
    if (this.state === "open") this.ws.send(JSON.stringify(frame));
    else this.outbox.push(frame);
  }

  /**
   * Watch a session; `lastSeq` null means "only new events" (history came from REST), plus what
   * a running turn produced so far (frames marked `replay`), which REST does not have yet.
   */
  watch(sessionId, lastSeq = null) {
    this.watched.set(sessionId, { lastSeq, verifyNext: false, resynced: false });
    if (this.state === "open") this.subscribe(sessionId);
  }

  unwatch(sessionId) {
    if (!this.watched.delete(sessionId)) return;
    if (this.state === "open") this.ws.send(JSON.stringify({ type: "unsubscribe", session_id: sessionId }));
  }

  subscribe(sessionId) {
    const entry = this.watched.get(sessionId);
    entry.verifyNext = entry.lastSeq !== null;
    entry.resynced = false;
    const frame = { type: "subscribe", session_id: sessionId, last_seq: entry.lastSeq };
    if (entry.lastSeq === null) frame.replay_turn = true;
    this.ws.send(JSON.stringify(frame));
  }

  connect() {
    clearTimeout(this.retryTimer);
    this.setState("connecting");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/ws`);
    this.ws = ws;
    ws.onopen = () => this.opened();
    ws.onmessage = (event) => this.received(event.data);
    ws.onclose = (event) => this.closed(ws, event.code);
  }

  opened() {
    this.failures = 0;
    this.lastHeard = Date.now();
    this.setState("open");
    // Daemon status and session-list changes; the first reply is the current status.
    this.ws.send(JSON.stringify({ type: "subscribe_notices" }));
    for (const sessionId of this.watched.keys()) this.subscribe(sessionId);
    const pending = this.outbox.splice(0);
    for (const frame of pending) this.ws.send(JSON.stringify(frame));
  }

  received(data) {
    this.lastHeard = Date.now();
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (!frame || typeof frame !== "object") return;
    if (frame.type === "resync") {
      this.resync(this.watched.get(frame.session_id), frame.session_id);
      return;
    }
    if (typeof frame.seq === "number" && frame.session_id) this.track(frame);
    this.onFrame(frame);
  }

  /** Record the frame's seq; a jump after resubscribing, or a step back, means a resync. */
  track(frame) {
    let entry = this.watched.get(frame.session_id);
    if (!entry) {
      // Sending a message subscribes us; its acknowledgement is the first frame we get.
      if (frame.type !== "session") return;
      entry = { lastSeq: null, verifyNext: false, resynced: false };
      this.watched.set(frame.session_id, entry);
    }
    const last = entry.lastSeq;
    const lost = last !== null && (frame.seq <= last || (entry.verifyNext && frame.seq > last + 1));
    entry.lastSeq = frame.seq;
    entry.verifyNext = false;
    if (lost) this.resync(entry, frame.session_id);
  }

  /** Ask for one history reload per subscription, whether a gap or the server noticed first. */
  resync(entry, sessionId) {
    if (!entry || entry.resynced) return;
    entry.resynced = true;
    this.onResync(sessionId);
  }

  closed(ws, code) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.setState("closed");
    if (code === CLOSE_UNAUTHENTICATED) {
      goToLogin();
      return;
    }
    this.failures += 1;
    // A refused handshake hides its status from scripts; a REST call reveals a lost login.
    if (this.failures === 2) api("/api/sessions?limit=1").catch(() => {});
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (this.failures - 1));
    this.retryTimer = setTimeout(() => this.connect(), delay * (0.5 + Math.random() / 2));
  }

  /** Ping an open connection; drop one that has gone silent so a fresh one replaces it. */
  keepAlive() {
    if (this.state !== "open") return;
    if (Date.now() - this.lastHeard > SILENT_LIMIT_MS) {
      const stale = this.ws;
      this.closed(stale, 1006);
      stale.close();
      return;
    }
    this.ws.send(JSON.stringify({ type: "ping" }));
  }

  reconnectNow() {
    if (this.state !== "closed") return;
    this.failures = 0;
    this.connect();
  }

  setState(state) {
    this.state = state;
    this.onState(state);
  }
}
