// Rebuild the conversation on screen from stored history records (GET .../messages).

/**
 * Each turn's usage, summed over its model calls, keyed by the turn's last assistant record with
 * text: the one place a live `done` shows the whole turn's tokens, so a reload shows the same.
 */
function turnUsage(records) {
  const shown = new Map();
  let sum = null;
  let last = null;
  const close = () => {
    if (last) shown.set(last, sum);
    sum = null;
    last = null;
  };
  for (const record of records) {
    if (record.type === "user") close();
    if (record.type !== "assistant") continue;
    const usage = record.usage || {};
    sum ??= { prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 };
    sum.prompt_tokens += usage.prompt_tokens || 0;
    sum.completion_tokens += usage.completion_tokens || 0;
    sum.cost_usd += usage.cost_usd || 0;
    if (record.text) last = record;
  }
  close();
  return shown;
}

/** Render `records` (oldest first) into the transcript. */
export function renderRecords(transcript, records) {
  const usage = turnUsage(records);
  for (const record of records) {
    switch (record.type) {
      case "user":
        if (record.author?.kind === "subagent") {
          // A subagent's report: its words, not the user's (no Copy/Edit as if they wrote it).
          transcript.reportMessage(record.content, record.author.who || "");
          break;
        }
        transcript.userMessage({
          content: record.content,
          images: record.images || [],
          attachments: (record.parts || []).filter((part) => part.file).map(attachmentOf),
        }).dataset.recordId = record.id;
        break;
      case "assistant":
        if (record.text || record.reasoning) {
          transcript.assistantMessage(record.text || "", {
            reasoning: record.reasoning || "",
            model: usage.has(record) ? record.model || "" : "",
            usage: usage.get(record) ?? null,
          });
        }
        for (const call of record.tool_calls || []) {
          transcript.toolCall({
            id: call.id,
            name: call.name,
            args: call.arguments_raw ?? "",
            status: "missing",
          });
        }
        break;
      case "tool_result":
        transcript.toolResult({
          id: record.tool_call_id,
          name: record.name,
          result: record.content,
          status: record.status,
          durationMs: record.duration_ms,
          images: record.images,
        });
        break;
      case "summary":
        transcript.summary(record.text || "");
        break;
      case "note":
        // Notes stored before they had codes: "Cancelled." is the one the UI words itself.
        if (record.code || record.text === "Cancelled.") {
          transcript.codedNotice(record.code || "cancelled", record.text || "");
        } else transcript.notice("note", { text: record.text || "" });
        break;
      default:
        break;
    }
  }
}

/** A stored part's file as the attachment the message named ({file, name, kind, text}). */
function attachmentOf(part) {
  const kind = part.kind === "voice" ? "voice" : "file";
  const text = part.kind === "voice" ? part.text || "" : "";
  return { file: part.file, name: part.name || part.file.split("/").pop(), kind, text };
}
