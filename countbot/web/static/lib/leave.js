// Unsaved work: a page with edits registers a guard, and leaving it (closing or reloading the
// tab, or going to another page of the UI) asks first.

let guard = null;

/** `hasUnsaved()` says whether leaving now would lose edits; null removes the guard. */
export function guardLeave(hasUnsaved) {
  guard = hasUnsaved;
}

/** Whether the user may leave the current page: nothing unsaved, or they confirmed. */
export function mayLeave(question) {
  if (!guard?.()) return true;
  // Blocking on purpose: nothing may change before the answer.
  return confirm(question);
}

addEventListener("beforeunload", (event) => {
  if (!guard?.()) return;
  event.preventDefault();
  event.returnValue = "";
});
