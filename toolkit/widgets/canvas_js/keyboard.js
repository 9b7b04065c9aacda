// Keys on the canvas: Ctrl/Cmd+Z undoes, Ctrl/Cmd+Shift+Z or Ctrl+Y redoes, Delete/Backspace
// removes the selection, Escape closes a popup and clears the selection.

import { closePopup, deleteSelection } from "./popups.js";

export function listenToKeys(ctx) {
  ctx.root.addEventListener("keydown", ev => {
    if (ev.target.tagName === "INPUT") { if (ev.key === "Escape") closePopup(ctx); ev.stopPropagation(); return; }
    const mod = ev.ctrlKey || ev.metaKey, key = ev.key.toLowerCase();
    let handled = true;
    if (mod && key === "z" && ev.shiftKey) ctx.send({ type: "redo" });
    else if (mod && key === "z") ctx.send({ type: "undo" });
    else if (ev.ctrlKey && key === "y") ctx.send({ type: "redo" });
    else if (ev.key === "Delete" || ev.key === "Backspace") deleteSelection(ctx);
    else if (ev.key === "Escape") { closePopup(ctx); ctx.send({ type: "select", target: "" }); }
    else handled = false;
    if (handled) { ev.preventDefault(); ev.stopPropagation(); }
  });
}
