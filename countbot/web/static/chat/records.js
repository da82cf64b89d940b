// Rebuild the conversation on screen from stored history records (GET .../messages).

/** Render `records` (oldest first) into the transcript. */
export function renderRecords(transcript, records) {
  for (const record of records) {
    switch (record.type) {
      case "user":
        transcript.userMessage({ content: record.content, images: record.images || [] });
        break;
      case "assistant":
        if (record.text || record.reasoning) {
          transcript.assistantMessage(record.text || "", {
            reasoning: record.reasoning || "",
            model: record.model || "",
            usage: record.usage,
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
