// The lint list under the picture: a block per finding (severity, key, where; the message on
// its own line); a click selects and highlights what the finding concerns.

import { html } from "./dom.js";

export function drawLint(ctx) {
  const lint = ctx.lint, found = ctx.scene.findings;
  lint.textContent = "";
  lint.dataset.findings = found.length;
  if (!found.length) { html("div", "cc-ok", lint, "✓ No findings: the linter is happy with this definition."); return; }
  const errors = found.filter(f => f.severity === "error").length, warnings = found.length - errors;
  const parts = [];
  if (errors) parts.push(`${errors} error${errors === 1 ? "" : "s"}`);
  if (warnings) parts.push(`${warnings} warning${warnings === 1 ? "" : "s"}`);
  html("div", "cc-count", lint, `Lint: ${parts.join(", ")}${found.some(f => f.target) ? " (click one to show it)" : ""}`);
  found.forEach((f, i) => {
    const row = html("div", "cc-finding", lint);
    row.dataset.index = i;
    html("span", `cc-sev ${f.severity}`, row, f.severity);
    html("code", "", row, f.key);
    html("span", "cc-where", row, f.where);
    html("span", "cc-msg", row, f.message);
    row.addEventListener("click", () => ctx.send({ type: "finding", index: i }));
  });
}
