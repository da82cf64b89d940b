// Scheduled jobs: add one, edit it, switch it on or off, run it now, read its history, delete it.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { t } from "../lib/i18n.js";
import { toast } from "../lib/toast.js";
import { dataTable, field, loadPanel, statusLine } from "./panel.js";

const KINDS = ["cron", "every", "at"];
const STATUSES = ["ok", "error", "timeout", "missed", "running"];
const jobPath = (id, rest = "") => `/api/cron/jobs/${encodeURIComponent(id)}${rest}`;

/** `openSession(id)` jumps to a job's conversation. */
export function renderCron(root, { openSession }) {
  const list = h("div", { class: "cron-jobs" });
  const load = () =>
    loadPanel(list, null, () => api("/api/cron/jobs"), (data) => jobList(data, changed, openSession));
  // "Job added." is about the last job added: a change made since (an edit, a switch, a delete)
  // takes it away rather than leave it beside a later, unrelated save.
  const added = statusLine("cron-status");
  const changed = () => {
    added.clear();
    return load();
  };
  const title = h("h2", { class: "visually-hidden", i18n: "cron.title" });
  const created = () => {
    load();
    return "cron.created";
  };
  root.replaceChildren(title, jobForm(null, { onSaved: created, status: added }), list);
  return load();
}

/** Stored seconds as the unit a person types ("7200" → "2h"), as `cron add --every` takes it. */
function durationText(seconds) {
  const total = Number(seconds);
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (total % size === 0) return `${total / size}${unit}`;
  }
  return `${total}s`;
}

function statusKey(status) {
  return STATUSES.includes(status) ? `cron.status.${status}` : "cron.never";
}

/**
 * The form for a new job (`job` null: POST) or for editing `job` (PATCH); `onSaved()` returns the
 * key of the line to show after a save (in `status`, its own by default), `onCancel` (editing
 * only) closes the form.
 */
function jobForm(job, { onSaved, onCancel, status = statusLine("cron-status") }) {
  const schedule = job?.schedule || {};
  const inputs = {
    name: h("input", {
      type: "text",
      required: true,
      testid: "cron-name",
      autocomplete: "off",
      value: job?.name ?? "",
    }),
    kind: h(
      "select",
      { testid: "cron-kind" },
      KINDS.map((kind) => h("option", { value: kind, i18n: `cron.kind.${kind}` })),
    ),
    value: h("input", {
      type: "text",
      required: true,
      testid: "cron-value",
      autocomplete: "off",
      value: schedule.kind === "every" ? durationText(schedule.value) : (schedule.value ?? ""),
    }),
    timezone: h("input", {
      type: "text",
      autocomplete: "off",
      value: schedule.timezone ?? "",
      i18nAttrs: { placeholder: "cron.timezoneDefault" },
    }),
    prompt: h("textarea", { rows: 3, required: true, testid: "cron-prompt" }),
    deliverTo: h("input", {
      type: "text",
      value: job?.deliver_to ?? "web",
      testid: "cron-deliver",
      autocomplete: "off",
    }),
  };
  inputs.kind.value = schedule.kind ?? "cron";
  inputs.prompt.value = job?.prompt ?? "";
  const form = h(
    "form",
    { class: "settings-form", novalidate: true, testid: job ? "cron-edit-form" : "cron-form" },
    h(
      "fieldset",
      {},
      h("legend", { i18n: job ? "cron.edit" : "cron.new" }),
      field("cron.name", inputs.name),
      h(
        "div",
        { class: "field-row" },
        field("cron.kind", inputs.kind),
        field("cron.value", inputs.value, "cron.valueHint"),
      ),
      field("cron.timezone", inputs.timezone),
      field("cron.prompt", inputs.prompt, "cron.promptHint"),
      field("cron.deliverTo", inputs.deliverTo, "cron.deliverHint"),
    ),
    h(
      "div",
      { class: "form-actions" },
      h("button", {
        type: "submit",
        class: "primary",
        testid: job ? "cron-save" : "cron-create",
        i18n: job ? "common.save" : "cron.create",
      }),
      job ? h("button", { type: "button", i18n: "common.cancel", onclick: onCancel }) : null,
      status.el,
    ),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const body = {
      name: inputs.name.value.trim(),
      prompt: inputs.prompt.value.trim(),
      schedule: {
        kind: inputs.kind.value,
        value: inputs.value.value.trim(),
        timezone: inputs.timezone.value.trim() || null,
      },
      deliver_to: inputs.deliverTo.value.trim() || "none",
    };
    status.show("busy", "common.saving");
    try {
      if (job) await api(jobPath(job.id), { method: "PATCH", body });
      else {
        await api("/api/cron/jobs", { method: "POST", body });
        form.reset();
        inputs.deliverTo.value = "web";
      }
      status.show("ok", onSaved());
    } catch (error) {
      status.show("error", "common.saveFailed", { error: error.message });
    }
  });
  return form;
}

function jobList(data, refresh, openSession) {
  const jobs = data.jobs || [];
  if (!jobs.length) return h("p", { class: "muted", testid: "cron-empty", i18n: "cron.none" });
  return h("ul", { class: "card-list" }, jobs.map((job) => jobCard(job, refresh, openSession)));
}

function jobCard(job, refresh, openSession) {
  const toggle = h("input", {
    type: "checkbox",
    role: "switch",
    testid: "cron-toggle",
    checked: Boolean(job.enabled),
    i18nAttrs: { "aria-label": "cron.enabled" },
  });
  const state = h("span", { class: "muted", i18n: job.enabled ? "cron.enabled" : "cron.disabled" });
  toggle.addEventListener("change", async () => {
    toggle.disabled = true;
    try {
      await api(jobPath(job.id), { method: "PATCH", body: { enabled: toggle.checked } });
      refresh();
    } catch (error) {
      toggle.checked = !toggle.checked;
      toggle.disabled = false;
      toast(error.message);
    }
  });
  const history = h("div", { class: "cron-history", hidden: true });
  const showHistory = async () => {
    history.hidden = !history.hidden;
    if (history.hidden) return;
    await loadPanel(history, null, () => api(jobPath(job.id, "/runs?limit=20")), runTable);
  };
  const runNow = async () => {
    try {
      await api(jobPath(job.id, "/run"), { method: "POST" });
      toast(t("cron.started"), "info");
    } catch (error) {
      toast(error.message);
    }
  };
  const remove = async () => {
    if (!confirm(t("cron.confirmDelete", { name: job.name }))) return;
    try {
      await api(jobPath(job.id), { method: "DELETE" });
      refresh();
    } catch (error) {
      toast(error.message);
    }
  };
  const next = job.next_run
    ? h("span", { i18n: "cron.next", i18nArgs: { time: formatTime(job.next_run) } })
    : h("span", { i18n: "cron.noNext" });
  const card = h(
    "li",
    { class: "card", testid: "cron-item", dataset: { job: job.id } },
    h(
      "div",
      { class: "card-head" },
      h("strong", {}, job.name),
      h("span", { class: "badge" }, job.schedule_text),
      job.last_status
        ? h("span", { class: `badge state-${job.last_status}`, i18n: statusKey(job.last_status) })
        : null,
      h("label", { class: "switch" }, toggle, state),
    ),
    h("p", {}, job.prompt),
    h(
      "p",
      { class: "muted" },
      next,
      " · ",
      h("span", { i18n: "cron.deliversTo", i18nArgs: { target: job.deliver_to } }),
    ),
    h(
      "div",
      { class: "form-actions" },
      h("button", { type: "button", testid: "cron-run", i18n: "cron.runNow", onclick: runNow }),
      h("button", { type: "button", testid: "cron-history", i18n: "cron.history", onclick: showHistory }),
      h("button", {
        type: "button",
        class: "link-button",
        i18n: "cron.openSession",
        onclick: () => openSession(job.session),
      }),
      h("button", { type: "button", testid: "cron-edit", i18n: "cron.editJob", onclick: () => edit() }),
      h("button", { type: "button", testid: "cron-delete", i18n: "cron.delete", onclick: remove }),
    ),
    history,
  );
  // Editing swaps the card's content for the job's form; saving reloads the list.
  const edit = () => {
    const shown = [...card.children];
    const saved = () => {
      refresh();
      return "common.saved";
    };
    const close = () => card.replaceChildren(...shown);
    card.replaceChildren(jobForm(job, { onSaved: saved, onCancel: close }));
  };
  return card;
}

function runTable(data) {
  const runs = data.runs || [];
  if (!runs.length) return h("p", { class: "muted", i18n: "cron.noRuns" });
  const heads = ["cron.startedAt", "cron.status", "cron.delivered", "cron.result"];
  return dataTable(
    heads,
    runs.map((run) =>
      h(
        "tr",
        { testid: "cron-run-row", dataset: { status: run.status } },
        h("td", {}, formatTime(run.started_at)),
        h("td", {}, h("span", { class: `state state-${run.status}`, i18n: statusKey(run.status) })),
        h("td", {
          i18n: run.delivered ? "common.yes" : "common.no",
          title: run.delivery_detail || "",
        }),
        h(
          "td",
          {},
          run.error || run.output || "",
          run.notes ? h("div", { class: "muted run-notes", testid: "cron-run-notes" }, run.notes) : null,
        ),
      ),
    ),
  );
}
