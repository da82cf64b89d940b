// Files that go with a message but are not pictures: documents and recordings are sent to
// POST /api/media, which keeps the original under media/ and answers where; the message names
// that file among its attachments and the daemon reads it (a voice note's words, a document's
// text kept apart from what the user typed). The microphone button records with MediaRecorder
// (WebM/Opus in Chromium and Firefox) and sends the recording as a message.

import { h } from "../lib/dom.js";
import { t } from "../lib/i18n.js";

export class UploadError extends Error {}

/** Upload `blob` (named `name`; kind "voice" or "file") into assistant `agent`'s workspace; the
 * attachment {file, name, kind}. */
export async function uploadMedia(blob, name, kind = "file", agent = "main") {
  const query = new URLSearchParams({ name, kind, agent });
  let response;
  try {
    response = await fetch(`/api/media?${query}`, {
      method: "POST",
      body: blob,
      credentials: "same-origin",
      headers: { "Content-Type": blob.type || "application/octet-stream" },
    });
  } catch {
    throw new UploadError(t("common.unreachable"));
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new UploadError(data?.error || `HTTP ${response.status}`);
  return { file: data.file, name: data.name, kind: data.kind };
}

/** The microphone button: press to record, press again to send; while it records, a timer
 * shows how long and ✕ throws the recording away. `onNote(attachment)` gets the uploaded
 * recording, `onError(message)` anything that failed. */
export class VoiceButton {
  constructor(button, { onNote, onError, agent }) {
    Object.assign(this, { button, onNote, onError, agent });
    this.recorder = null;
    this.discarded = false;
    this.timer = h("span", { class: "voice-timer", testid: "voice-timer", role: "timer", hidden: true });
    this.discardButton = h(
      "button",
      {
        type: "button",
        class: "icon-button voice-discard",
        testid: "voice-discard",
        hidden: true,
        i18nAttrs: { title: "voice.discard", "aria-label": "voice.discard" },
        onclick: () => this.discard(),
      },
      "✕",
    );
    button.after(this.timer, this.discardButton);
    button.hidden = !(navigator.mediaDevices?.getUserMedia && window.MediaRecorder);
    button.addEventListener("click", () => (this.recorder ? this.stop() : this.start()));
  }

  async start() {
    let stream;
    try {
      // The browser's voice-call processing (echo cancelling, noise gating) costs recognizers
      // more words than the room's noise does.
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false },
      });
    } catch {
      this.onError(t("voice.noMicrophone"));
      return;
    }
    const chunks = [];
    const recorder = (this.recorder = new MediaRecorder(stream, { audioBitsPerSecond: 64000 }));
    this.discarded = false;
    recorder.addEventListener("dataavailable", (event) => chunks.push(event.data));
    recorder.addEventListener("stop", () => {
      for (const track of stream.getTracks()) track.stop();
      if (this.discarded) this.show("idle");
      else this.send(new Blob(chunks, { type: recorder.mimeType || "audio/webm" }));
    });
    recorder.start();
    this.startClock();
    this.show("recording");
  }

  stop() {
    this.recorder.stop();
    this.recorder = null;
    this.stopClock();
    this.show("transcribing");
  }

  /** Stop recording and send nothing. */
  discard() {
    if (!this.recorder) return;
    this.discarded = true;
    this.recorder.stop();
    this.recorder = null;
    this.stopClock();
  }

  startClock() {
    const started = Date.now();
    const tick = () => {
      const seconds = Math.floor((Date.now() - started) / 1000);
      this.timer.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
    };
    tick();
    this.clock = setInterval(tick, 500);
    this.timer.hidden = false;
    this.discardButton.hidden = false;
  }

  stopClock() {
    clearInterval(this.clock);
    this.timer.hidden = true;
    this.discardButton.hidden = true;
  }

  async send(blob) {
    try {
      this.onNote(await uploadMedia(blob, "voice.webm", "voice", this.agent()));
    } catch (error) {
      this.onError(error.message);
    } finally {
      this.show("idle");
    }
  }

  show(state) {
    this.button.dataset.state = state;
    this.button.disabled = state === "transcribing";
    this.button.title = t(`voice.${state}`);
    this.button.setAttribute("aria-label", t(`voice.${state}`));
  }
}
