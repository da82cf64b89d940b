// What every panel page shares: a titled page, a loading state, and a failed load that can be
// retried, so each panel module only builds its own content.

import { h, label, labelAttrs } from "../lib/dom.js";

/** Fill `root` with a page (titled unless `titleKey` is null) whose body is `build(await load())`. */
export async function loadPanel(root, titleKey, load, build) {
  const body = h("div", { class: "panel-body" }, h("p", { class: "muted", i18n: "common.loading" }));
  const title = titleKey ? h("h2", { class: "visually-hidden", i18n: titleKey }) : null;
  root.replaceChildren(...[title, body].filter(Boolean));
  try {
    const data = await load();
    body.replaceChildren(build(data));
  } catch (error) {
    body.replaceChildren(
      h(
        "div",
        { class: "load-error", role: "alert" },
        h("p", { i18n: "common.loadFailed", i18nArgs: { error: error.message } }),
        h("button", {
          type: "button",
          i18n: "common.retry",
          onclick: () => loadPanel(root, titleKey, load, build),
        }),
      ),
    );
  }
}

/** A labelled form row; `hintKey` adds a line of help under the control. */
export function field(labelKey, control, hintKey) {
  return h(
    "label",
    { class: "field" },
    h("span", { class: "field-label", i18n: labelKey }),
    control,
    hintKey ? h("span", { class: "field-hint", i18n: hintKey }) : null,
  );
}

/** A small status line for save results: `show(kind, key, args)` or `clear()`. */
export function statusLine(testid) {
  const el = h("span", { class: "status-line", testid, role: "status" });
  return {
    el,
    show(kind, key, args) {
      el.dataset.kind = kind;
      label(el, key, args);
    },
    clear() {
      delete el.dataset.i18n;
      el.textContent = "";
    },
  };
}

/** A data table with translated column headings (`""`: an unlabelled column) over `rows` (its
 * `tr`s); on a phone each row becomes a card of lines labelled by their column (styles.css).
 * `testid` names the table for tests. */
export function dataTable(headingKeys, rows, testid) {
  // Each cell knows its column's heading: on a phone a row is drawn as a card of labelled lines.
  for (const row of rows) {
    if (!(row instanceof Element)) continue;
    [...row.children].forEach((cell, column) => {
      if (headingKeys[column]) labelAttrs(cell, { "data-label": headingKeys[column] });
    });
  }
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data-table", testid },
      h("thead", {}, h("tr", {}, headingKeys.map((key) => h("th", key ? { i18n: key } : {})))),
      h("tbody", {}, rows),
    ),
  );
}
