// CountBot's helper inside the page, evaluated in an isolated world: the page's own scripts
// cannot see or replace it, and it ends with the document it was made for (a navigation makes a
// new world, so references into an old page cannot reach a new one).
(() => {
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "SVG"]);
  const BLOCK = new Set(["P", "DIV", "LI", "TR", "TD", "TH", "SECTION", "ARTICLE", "HEADER",
    "FOOTER", "NAV", "MAIN", "ASIDE", "UL", "OL", "TABLE", "FORM", "FIELDSET", "BR", "PRE",
    "BLOCKQUOTE", "DL", "DT", "DD", "FIGURE", "FIGCAPTION", "H1", "H2", "H3", "H4", "H5", "H6",
    "HR", "LEGEND", "DETAILS", "DIALOG", "CAPTION", "BODY"]);
  const TEXT_INPUTS = new Set(["text", "email", "password", "search", "tel", "url", "number",
    "date", "time", "datetime-local", "month", "week", ""]);
  const ROLES = new Set(["button", "link", "checkbox", "radio", "textbox", "combobox", "menuitem",
    "tab", "switch", "option", "searchbox", "slider", "spinbutton", "treeitem", "listbox"]);
  const refs = new Map();
  // `<iframe>`s of another origin, by the frame id the daemon reads them under (tagFrame).
  const frameKeys = new WeakMap();
  const clip = (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text);
  const squash = (text) => (text || "").replace(/\s+/g, " ").trim();

  function role(el) {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (ROLES.has(explicit)) return explicit;
    const tag = el.tagName;
    if (tag === "A" && el.hasAttribute("href")) return "link";
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (tag === "SELECT") return "combobox";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (type === "hidden") return null;
      if (["button", "submit", "reset", "image"].includes(type)) return "button";
      if (type === "checkbox" || type === "radio") return type;
      if (type === "range") return "slider";
      if (type === "file") return "file";
      if (type === "password") return "password";
      return TEXT_INPUTS.has(type) ? "textbox" : type;
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable))
      return "textbox";
    if (el.hasAttribute("onclick") || el.tabIndex >= 0 && tag !== "IFRAME" &&
        el.hasAttribute("tabindex")) return "clickable";
    return null;
  }

  function labelText(el) {
    const doc = el.ownerDocument;
    const ids = el.getAttribute("aria-labelledby");
    if (ids) {
      const text = ids.split(/\s+/).map((id) => doc.getElementById(id))
        .filter(Boolean).map((n) => n.innerText || n.textContent).join(" ");
      if (squash(text)) return squash(text);
    }
    const aria = el.getAttribute("aria-label");
    if (squash(aria)) return squash(aria);
    if (el.labels && el.labels.length)
      return squash([...el.labels].map((l) => textWithout(l, el)).join(" "));
    return "";
  }

  // A label's text without the text of the control it wraps (a select's options).
  function textWithout(node, skip) {
    if (node === skip) return "";
    if (node.nodeType === Node.TEXT_NODE) return node.data;
    if (node.nodeType !== Node.ELEMENT_NODE || SKIP.has(node.tagName)) return "";
    return [...node.childNodes].map((child) => textWithout(child, skip)).join(" ");
  }

  function name(el) {
    const labelled = labelText(el);
    if (labelled) return clip(labelled, 100);
    const tag = el.tagName;
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (["button", "submit", "reset"].includes(type))
        return clip(squash(el.value) || type, 100);
      if (type === "image") return clip(squash(el.alt) || "image", 100);
      return clip(squash(el.placeholder || el.title || el.name || ""), 100);
    }
    if (tag === "TEXTAREA" || tag === "SELECT")
      return clip(squash(el.placeholder || el.title || el.name || ""), 100);
    const text = squash(el.innerText || el.textContent);
    if (text) return clip(text, 100);
    const img = el.querySelector && el.querySelector("img[alt]");
    if (img && squash(img.alt)) return clip(squash(img.alt), 100);
    return clip(squash(el.title || ""), 100);
  }

  function states(el, kind) {
    const out = [];
    if (el.disabled || el.getAttribute("aria-disabled") === "true") out.push("disabled");
    if (kind === "checkbox" || kind === "radio" || kind === "switch")
      out.push(el.checked || el.getAttribute("aria-checked") === "true" ? "checked" : "unchecked");
    if (el.getAttribute("aria-expanded")) out.push(
      el.getAttribute("aria-expanded") === "true" ? "expanded" : "collapsed");
    if (el.required) out.push("required");
    if (el.readOnly) out.push("read-only");
    if (kind === "password") out.push(el.value ? "filled" : "empty");
    else if (kind === "textbox" && "value" in el && el.value)
      out.push(`value=${JSON.stringify(clip(el.value, 80))}`);
    else if (kind === "textbox" && el.isContentEditable && squash(el.innerText))
      out.push(`text=${JSON.stringify(clip(squash(el.innerText), 80))}`);
    if (el.tagName === "SELECT") {
      const chosen = el.selectedOptions && el.selectedOptions[0];
      if (chosen) out.push(`selected=${JSON.stringify(clip(squash(chosen.text), 60))}`);
      const options = [...el.options].slice(0, 12).map((o) => clip(squash(o.text), 40));
      out.push(`options: ${options.join(" | ")}${el.options.length > 12 ? " | …" : ""}`);
    }
    return out;
  }

  function visible(el) {
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return false;
    const rect = el.getBoundingClientRect();
    return rect.width > 0 || rect.height > 0;
  }

  function describe(el) {
    const kind = role(el);
    const label = kind ? name(el) : squash(el.innerText || el.textContent);
    let tag = el.tagName.toLowerCase();
    if (el.id) tag += `#${el.id}`;
    else if (typeof el.className === "string" && el.className.trim())
      tag += "." + el.className.trim().split(/\s+/).slice(0, 2).join(".");
    return `${kind || tag} ${JSON.stringify(clip(label, 80))}${kind ? "" : ""}`;
  }

  // References stay valid for the whole document: an earlier snapshot's still work.
  function snapshot(start) {
    let next = start;
    const lines = [];
    const frames = [];
    let unread = 0;
    let buf = [];
    let prefix = "";
    const flush = () => {
      const text = squash(buf.join(" "));
      if (text) lines.push(prefix + text);
      buf = [];
    };
    const walk = (node, depth) => {
      if (node.nodeType === Node.TEXT_NODE) {
        buf.push(node.data);
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE)
        return;
      const el = node;
      if (node.nodeType === Node.ELEMENT_NODE) {
        if (SKIP.has(el.tagName.toUpperCase())) return;
        if (el.getAttribute("aria-hidden") === "true") return;
        if (!visible(el) && el.tagName !== "BODY") return;
        const kind = role(el);
        if (kind) {
          flush();
          const ref = `e${next++}`;
          refs.set(ref, el);
          let line = `${kind} ${JSON.stringify(name(el))} [${ref}]`;
          const extra = states(el, kind);
          if (extra.length) line += ` (${extra.join(", ")})`;
          if (kind === "link" && el.href) line += ` -> ${clip(el.href, 200)}`;
          lines.push(line);
          if (el.tagName !== "A" || !el.querySelector("input,button,select,textarea")) return;
        }
        if (el.tagName === "IFRAME") {
          flush();
          let inner = null;
          try { inner = el.contentDocument; } catch (e) { inner = null; }
          const title = el.title || el.name || el.src;
          if (inner && inner.body) {
            lines.push(`frame ${JSON.stringify(clip(title, 80))}:`);
            walk(inner.body, depth + 1);
            flush();
            lines.push("end of frame");
          } else if (frameKeys.has(el)) {
            // Another origin: the daemon splices the frame's own snapshot in at this line.
            lines.push(`frame ${JSON.stringify(clip(title, 80))}:`);
            frames.push([lines.length, frameKeys.get(el)]);
            lines.push("end of frame");
          } else {
            unread++;
            lines.push(`frame ${JSON.stringify(clip(title, 80))} (another site: not read)`);
          }
          return;
        }
        if (el.tagName === "IMG" && squash(el.alt)) buf.push(`[image: ${squash(el.alt)}]`);
      }
      const block = node.nodeType === Node.ELEMENT_NODE && BLOCK.has(el.tagName);
      if (block) flush();
      const heading = block && /^H[1-6]$/.test(el.tagName);
      const outer = prefix;
      if (heading) prefix = "#".repeat(Number(el.tagName[1])) + " ";
      else if (block && el.tagName === "LI") prefix = "- ";
      const children = el.shadowRoot ? el.shadowRoot.childNodes
        : el.tagName === "SLOT" ? el.assignedNodes({ flatten: true }) : el.childNodes;
      for (const child of children) walk(child, depth);
      if (block) flush();
      prefix = outer;
    };
    walk(document.body || document.documentElement, 0);
    flush();
    return { lines, next, frames, unread };
  }

  function tagFrame(el, key) {
    frameKeys.set(el, key);
    return true;
  }

  // Where the point (x, y) of the frame `el` holds lies in this document's viewport (and in
  // the viewports of same-origin frames around it), or what covers the frame there.
  function frameBox(el, x, y) {
    if (!el.isConnected) return { error: "detached" };
    const rect = el.getBoundingClientRect();
    const style = el.ownerDocument.defaultView.getComputedStyle(el);
    let px = rect.left + el.clientLeft + parseFloat(style.paddingLeft || "0") + x;
    let py = rect.top + el.clientTop + parseFloat(style.paddingTop || "0") + y;
    const doc = el.ownerDocument;
    const hit = doc.elementFromPoint(px, py);
    if (hit && hit !== el) {
      let cover = hit;
      while (cover.parentElement && cover.parentElement !== doc.body &&
             !cover.parentElement.contains(el)) cover = cover.parentElement;
      return { error: "covered", what: describe(el), by: describe(cover) };
    }
    let win = doc.defaultView;
    while (win && win.frameElement) {
      const box = win.frameElement.getBoundingClientRect();
      px += box.left + win.frameElement.clientLeft;
      py += box.top + win.frameElement.clientTop;
      win = win.parent;
    }
    return { x: px, y: py };
  }

  function element(ref) {
    const el = refs.get(ref);
    if (!el) return { error: "unknown" };
    if (!el.isConnected) return { error: "detached", what: "" };
    return { el };
  }

  // Where to click `ref`, or exactly why it cannot be clicked.
  function target(ref) {
    const found = element(ref);
    if (found.error) return found;
    const el = found.el;
    const what = describe(el);
    if (el.disabled || el.getAttribute("aria-disabled") === "true")
      return { error: "disabled", what };
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    if (!visible(el)) return { error: "hidden", what };
    const rect = el.getBoundingClientRect();
    let x = rect.left + Math.min(rect.width / 2, 40), y = rect.top + rect.height / 2;
    if (rect.width / 2 < 40) x = rect.left + rect.width / 2;
    const doc = el.ownerDocument;
    const hit = doc.elementFromPoint(x, y);
    const mine = (n) => n && (n === el || el.contains(n) || (el.labels && [...el.labels]
      .some((l) => l === n || l.contains(n))));
    if (hit && !mine(hit) && !hit.contains(el)) {
      let cover = hit;
      while (cover.parentElement && cover.parentElement !== doc.body &&
             !cover.parentElement.contains(el)) cover = cover.parentElement;
      return { error: "covered", what, by: describe(cover) };
    }
    let win = doc.defaultView;
    while (win && win.frameElement) {
      const box = win.frameElement.getBoundingClientRect();
      x += box.left + win.frameElement.clientLeft;
      y += box.top + win.frameElement.clientTop;
      win = win.parent;
    }
    return { what, x, y, href: el.tagName === "A" ? el.href : "" };
  }

  function focus(ref) {
    const found = element(ref);
    if (found.error) return found;
    const el = found.el;
    const what = describe(el);
    if (el.disabled) return { error: "disabled", what };
    if (el.readOnly) return { error: "read-only", what };
    const kind = role(el);
    if (!["textbox", "password", "combobox", "searchbox", "spinbutton"].includes(kind) &&
        !el.isContentEditable && !("value" in el))
      return { error: "not-editable", what };
    el.scrollIntoView({ block: "center", behavior: "instant" });
    el.focus();
    if (typeof el.select === "function") el.select();
    else if (el.isContentEditable) {
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      const sel = el.ownerDocument.defaultView.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }
    if (el.ownerDocument.activeElement !== el) return { error: "unfocusable", what };
    return { what };
  }

  function valueOf(ref) {
    const found = element(ref);
    if (found.error) return found;
    const el = found.el;
    const kind = role(el);
    const value = kind === "password" ? (el.value ? "•".repeat(el.value.length) : "")
      : "value" in el ? el.value : squash(el.innerText);
    return { what: describe(el), value };
  }

  function choose(ref, wanted) {
    const found = element(ref);
    if (found.error) return found;
    const el = found.el;
    const what = describe(el);
    if (el.tagName !== "SELECT") return { error: "not-select", what };
    if (el.disabled) return { error: "disabled", what };
    const want = squash(wanted).toLowerCase();
    const options = [...el.options];
    const option = options.find((o) => o.value === wanted) ||
      options.find((o) => squash(o.text).toLowerCase() === want) ||
      options.find((o) => squash(o.text).toLowerCase().includes(want));
    if (!option) return { error: "no-option", what,
      options: options.map((o) => squash(o.text)).slice(0, 30) };
    if (option.disabled) return { error: "option-disabled", what, option: squash(option.text) };
    el.value = option.value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { what, chosen: squash(option.text) };
  }

  // What submitting the form of `ref` (or following its link) would send, and where.
  function sends(ref) {
    const found = element(ref);
    if (found.error) return null;
    const el = found.el;
    if (el.tagName === "A" && el.href) return { url: el.href, data: "" };
    const form = el.form || (el.closest && el.closest("form"));
    if (!form) return null;
    const data = [];
    for (const field of form.elements) {
      if (!field.name || field.disabled) continue;
      if ((field.type === "checkbox" || field.type === "radio") && !field.checked) continue;
      if ("value" in field) data.push(`${field.name}=${field.value}`);
    }
    return { url: form.action || document.URL, data: data.join("&") };
  }

  // `onlyIfFocused`: a frame of another origin answers only when the keyboard is in it.
  function sendsFocused(onlyIfFocused) {
    if (onlyIfFocused && !document.hasFocus()) return null;
    let el = document.activeElement;
    while (el && el.tagName === "IFRAME" && el.contentDocument) el = el.contentDocument.activeElement;
    if (!el || !el.form) return null;
    refs.set("focused", el);
    const found = sends("focused");
    refs.delete("focused");
    return found;
  }

  // The text a reader sees, same-site frames included.
  function pageText() {
    const parts = [];
    const read = (doc) => {
      if (!doc || !doc.body) return;
      parts.push(doc.body.innerText);
      for (const frame of doc.querySelectorAll("iframe")) {
        let inner = null;
        try { inner = frame.contentDocument; } catch (e) { inner = null; }
        read(inner);
      }
    };
    read(document);
    return parts.join("\n").slice(0, 400000);
  }

  function quiet(ms, max) {
    return new Promise((resolve) => {
      let timer = setTimeout(done, ms);
      const cap = setTimeout(done, max);
      const observer = new MutationObserver(() => {
        clearTimeout(timer);
        timer = setTimeout(done, ms);
      });
      observer.observe(document, { subtree: true, childList: true, characterData: true,
        attributes: true });
      function done() {
        observer.disconnect();
        clearTimeout(timer);
        clearTimeout(cap);
        resolve(true);
      }
    });
  }

  function scrollBy(dy) {
    window.scrollBy(0, dy);
    const doc = document.scrollingElement || document.documentElement;
    return { y: Math.round(window.scrollY), height: doc.scrollHeight,
      view: window.innerHeight };
  }

  return { snapshot, tagFrame, frameBox, target, focus, valueOf, choose, sends, sendsFocused, pageText, quiet, scrollBy,
    describe: (ref) => { const f = element(ref); return f.error ? "" : describe(f.el); } };
})()
