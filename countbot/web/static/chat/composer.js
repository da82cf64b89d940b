// The message box: Enter sends (Shift+Enter and IME composition do not), images come from the
// file picker, paste or drop, documents are uploaded to the daemon and go with the message as
// attachments, the microphone button sends a voice note, and while a turn runs a stop button
// and a queue mode appear.

import { h, labelAttrs } from "../lib/dom.js";
import { toastKey } from "../lib/toast.js";
import { ImageError, readImage } from "./images.js";
import { uploadMedia, VoiceButton } from "./uploads.js";

const MAX_IMAGES = 4;
const MAX_INPUT_HEIGHT_PX = 220;

export class Composer {
  /** onSend(content, media, mode, attachments) sends; onStop() cancels the running turn;
   * agent() is the assistant whose workspace uploads go to. */
  constructor({ form, input, stop, mode, imageInput, voiceButton, attachments, onSend, onStop, agent }) {
    Object.assign(this, { form, input, stop, mode, imageInput, attachments, agent });
    this.onSend = onSend;
    this.images = [];
    // Documents: {name, upload: Promise of the attachment the message names}.
    this.files = [];
    this.voice = new VoiceButton(voiceButton, {
      onNote: (voice) => this.onSend("", [], this.mode.value, [voice]),
      onError: (message) => toastKey("voice.failed", { reason: message }),
      agent,
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        this.submit();
      }
    });
    input.addEventListener("input", () => this.fit());
    input.addEventListener("paste", (event) => this.pasted(event));
    form.addEventListener("dragover", (event) => event.preventDefault());
    form.addEventListener("drop", (event) => {
      event.preventDefault();
      this.attach([...(event.dataTransfer?.files || [])]);
    });
    imageInput.addEventListener("change", () => {
      this.attach([...imageInput.files]);
      imageInput.value = "";
    });
    stop.addEventListener("click", () => onStop());
  }

  setRunning(running) {
    this.stop.hidden = !running;
    this.mode.hidden = !running;
    labelAttrs(this.input, {
      placeholder: running ? "composer.placeholderRunning" : "composer.placeholder",
    });
  }

  async submit() {
    const typed = this.input.value.trim();
    if (!typed && !this.images.length && !this.files.length) return;
    const media = this.images.map(({ media_type, data }) => ({ media_type, data }));
    const files = this.files;
    this.input.value = "";
    this.clearImages();
    this.files = [];
    this.renderImages();
    this.fit();
    this.input.focus();
    const uploads = await Promise.all(files.map((file) => file.upload.catch(() => null)));
    const attachments = uploads.filter(Boolean);
    if (typed || media.length || attachments.length) {
      this.onSend(typed, media, this.mode.value, attachments);
    }
  }

  pasted(event) {
    const files = [...(event.clipboardData?.items || [])]
      .filter((item) => item.kind === "file" && item.type.startsWith("image/"))
      .map((item) => item.getAsFile())
      .filter(Boolean);
    if (!files.length) return;
    event.preventDefault();
    this.attach(files);
  }

  async attach(files) {
    for (const file of files) {
      if (!file.type.startsWith("image/")) {
        this.attachDocument(file);
        continue;
      }
      if (this.images.length >= MAX_IMAGES) {
        toastKey("image.tooMany", { max: MAX_IMAGES });
        return;
      }
      try {
        this.images.push(await readImage(file));
      } catch (error) {
        toastKey(error instanceof ImageError ? error.message : "image.unreadable");
      }
      this.renderImages();
    }
  }

  /** Upload a document now; the message names it when it is sent. */
  attachDocument(file) {
    const entry = { name: file.name, upload: uploadMedia(file, file.name, "file", this.agent()) };
    entry.upload.catch((error) => {
      toastKey("upload.failed", { name: file.name, reason: error.message });
      this.files = this.files.filter((item) => item !== entry);
      this.renderImages();
    });
    this.files.push(entry);
    this.renderImages();
  }

  renderImages() {
    this.attachments.hidden = !this.images.length && !this.files.length;
    const documents = this.files.map((file) =>
      h("span", { class: "attachment document", testid: "document-attachment" }, `📄 ${file.name}`),
    );
    this.attachments.replaceChildren(
      ...documents,
      ...this.images.map((image, index) =>
        h(
          "span",
          { class: "attachment", testid: "attachment" },
          h("img", { src: image.preview, alt: "" }),
          h(
            "button",
            {
              type: "button",
              class: "attachment-remove",
              i18nAttrs: { title: "composer.removeImage", "aria-label": "composer.removeImage" },
              onclick: () => this.removeImage(index),
            },
            "×",
          ),
        ),
      ),
    );
  }

  removeImage(index) {
    const [image] = this.images.splice(index, 1);
    URL.revokeObjectURL(image.preview);
    this.renderImages();
  }

  clearImages() {
    for (const image of this.images) URL.revokeObjectURL(image.preview);
    this.images = [];
    this.renderImages();
  }

  /** Grow the box with its text, up to a limit. */
  fit() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, MAX_INPUT_HEIGHT_PX)}px`;
  }
}
