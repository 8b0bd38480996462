import { api } from "../api.js";
import { onSubmit } from "../forms.js";
import { cell, inDuration, num, row, usd, when } from "../format.js";
import { authedPage } from "../session.js";

// The allowances GET /account/v1/me reports, in the order shown. A limit of 0 is unlimited.
const allowances = [
  ["window", "Calls this window"],
  ["weekly", "Calls this week"],
  ["burst", "Calls per minute (burst)"],
  ["images", "Images today"],
  ["video_seconds", "Video seconds today"],
];

function allowanceRow(label, a) {
  const used = a.used !== undefined ? a.used + (a.reserved || 0) : a.limit - a.remaining;
  const left = a.remaining !== undefined ? a.remaining : Math.max(0, a.limit - used);
  const soon = inDuration(a.resets_at);
  const resets = a.resets_at ? when(a.resets_at) + (soon ? ` (${soon})` : "") : "—";
  if (!a.limit) return row(cell(label), cell(num(used)), cell("unlimited"), cell("—"));
  return row(cell(label), cell(`${num(used)} of ${num(a.limit)}`), cell(num(left)), cell(resets));
}

authedPage(async () => {
  const me = await api("GET", "/account/v1/me");
  document.getElementById("plan").textContent = me.plan;
  document.getElementById("balance").textContent = usd(me.balance_usd);
  const rows = allowances.filter(([k]) => me[k]).map(([k, label]) => allowanceRow(label, me[k]));
  document.getElementById("allowance-rows").replaceChildren(...rows);
});

const form = document.getElementById("password-form");
onSubmit(form, async () => {
  await api("POST", "/auth/password/change", {
    current_password: form.elements.current_password.value,
    new_password: form.elements.new_password.value,
  });
  form.reset();
  form.querySelector(".form-done").hidden = false;
});
