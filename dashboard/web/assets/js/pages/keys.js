import { api } from "../api.js";
import { clearErrors, fieldError, onSubmit, value } from "../forms.js";
import { cell, localInput, rfc3339, row, usd, when } from "../format.js";
import { authedPage, pageError } from "../session.js";

const rowsEl = document.getElementById("key-rows");
const editDialog = document.getElementById("edit-key");
const revokeDialog = document.getElementById("revoke-key");
let editing = null; // the key the open dialog changes

// limitsOf reads a form's limit fields. Creating, unset limits are left out; editing, they
// are null so that PATCH clears them.
function limitsOf(form, forPatch) {
  const unset = forPatch ? null : undefined;
  const amount = value(form, "limits.budget.amount_usd");
  const rpm = value(form, "limits.rpm");
  const expires = value(form, "limits.expires_at");
  if (amount && !/^\d+(\.\d+)?$/.test(amount)) {
    throw fieldError("limits.budget.amount_usd", "Write the budget as a number of dollars, like 12.50.");
  }
  if (rpm && !/^[1-9]\d*$/.test(rpm)) throw fieldError("limits.rpm", "Requests per minute is a whole number from 1.");
  return {
    budget: amount ? { amount_usd: amount, period: value(form, "limits.budget.period") } : unset,
    expires_at: expires ? rfc3339(expires) : unset,
    rpm: rpm ? Number(rpm) : unset,
  };
}

function keyFields(form, forPatch) {
  const models = value(form, "models")
    .split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  return { name: value(form, "name"), models, zdr: form.elements.zdr.checked, limits: limitsOf(form, forPatch) };
}

function limitsText(l) {
  if (!l) return "—";
  const parts = [];
  if (l.budget) parts.push(`${usd(l.budget.amount_usd)} per ${l.budget.period}`.replace("per total", "in total"));
  if (l.rpm) parts.push(`${l.rpm} rpm`);
  if (l.expires_at) parts.push(`expires ${when(l.expires_at)}`);
  return parts.join(", ") || "—";
}

function button(text, className, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.className = className;
  b.addEventListener("click", onClick);
  return b;
}

function keyRow(k) {
  const revoked = Boolean(k.revoked_at);
  const actions = cell("", "actions");
  if (!revoked) {
    actions.append(
      button("Edit", "secondary", () => openEdit(k)),
      " ",
      button("Revoke", "danger", () => openRevoke(k)),
    );
    actions.querySelectorAll("button").forEach((b) => b.setAttribute("aria-label", `${b.textContent} ${k.name}`));
  }
  const tr = row(
    cell(k.name),
    cell(k.hint, "mono"),
    cell(k.models && k.models.length ? k.models.join(", ") : "all" + (k.zdr ? " (ZDR only)" : "")),
    cell(limitsText(k.limits)),
    cell(when(k.created_at * 1e9)),
    cell(revoked ? "revoked" : "active"),
    actions,
  );
  tr.dataset.keyId = k.id;
  return tr;
}

async function loadKeys() {
  const list = await api("GET", "/account/v1/keys");
  const keys = list.data || [];
  rowsEl.replaceChildren(...keys.map(keyRow));
  document.getElementById("no-keys").hidden = keys.length > 0;
}

function fillForm(form, k) {
  form.elements.name.value = k.name;
  form.elements.models.value = (k.models || []).join(", ");
  form.elements.zdr.checked = Boolean(k.zdr);
  const l = k.limits || {};
  form.elements["limits.budget.amount_usd"].value = l.budget ? l.budget.amount_usd : "";
  form.elements["limits.budget.period"].value = l.budget ? l.budget.period : "month";
  form.elements["limits.rpm"].value = l.rpm || "";
  form.elements["limits.expires_at"].value = localInput(l.expires_at);
}

function openEdit(k) {
  editing = k;
  const form = document.getElementById("edit-key-form");
  clearErrors(form);
  fillForm(form, k);
  editDialog.showModal();
}

function openRevoke(k) {
  editing = k;
  document.getElementById("revoke-name").textContent = k.name;
  clearErrors(document.getElementById("revoke-key-form"));
  revokeDialog.showModal();
}

function showSecret(secret) {
  document.getElementById("secret-value").value = secret;
  document.getElementById("copy-status").textContent = "";
  const panel = document.getElementById("new-secret");
  panel.hidden = false;
  panel.scrollIntoView();
}

document.getElementById("copy-secret").addEventListener("click", async () => {
  const input = document.getElementById("secret-value");
  const status = document.getElementById("copy-status");
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = "Copied.";
  } catch {
    input.select(); // a browser that refuses the clipboard: the secret is selected to copy by hand
    status.textContent = "Press Ctrl+C (⌘C) to copy the selected key.";
  }
});

document.getElementById("secret-done").addEventListener("click", () => {
  document.getElementById("secret-value").value = ""; // shown once: gone from the page
  document.getElementById("new-secret").hidden = true;
});

for (const b of document.querySelectorAll("dialog [data-close]")) {
  b.addEventListener("click", () => b.closest("dialog").close());
}

const createForm = document.getElementById("create-key-form");
onSubmit(createForm, async () => {
  const created = await api("POST", "/account/v1/keys", keyFields(createForm, false));
  createForm.reset();
  showSecret(created.key || created.secret);
  await loadKeys();
});

const editForm = document.getElementById("edit-key-form");
onSubmit(editForm, async () => {
  await api("PATCH", `/account/v1/keys/${encodeURIComponent(editing.id)}`, keyFields(editForm, true));
  editDialog.close();
  await loadKeys();
});

const revokeForm = document.getElementById("revoke-key-form");
onSubmit(revokeForm, async () => {
  await api("DELETE", `/account/v1/keys/${encodeURIComponent(editing.id)}`);
  revokeDialog.close();
  await loadKeys();
});

authedPage(() => loadKeys().catch(pageError));
