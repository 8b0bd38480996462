import { api } from "../api.js";
import { onSubmit } from "../forms.js";
import { cell, num, row, when } from "../format.js";
import { authedPage } from "../session.js";

// limit shows a plan's count, 0 being unlimited.
const limit = (n) => (n ? num(n) : "Unlimited");

// show fills the current plan, its scheduled move and the subscription.
function show(v) {
  document.getElementById("plan-name").textContent = v.plan;
  const next = document.getElementById("plan-next");
  next.textContent = v.next_plan ? `Moves to ${v.next_plan} on ${when(v.next_plan_at)}.` : "";
  next.hidden = !v.next_plan;
  const sub = document.getElementById("subscription");
  const s = v.subscription;
  if (s) {
    const ended = s.status === "canceled";
    sub.textContent = ended
      ? `Your subscription to ${s.plan} has ended.`
      : `Subscribed to ${s.plan} (${s.status}); ${s.cancel_at_period_end ? "ends" : "renews"} on ${when(s.current_period_end)}.`;
  }
  sub.hidden = !s;
  document.getElementById("portal-form").hidden = !s;
  // The plan the account is on or moving to is not offered again (but is to resume a
  // subscription set to end).
  for (const button of document.querySelectorAll("#plan-rows button")) {
    button.hidden = button.value === (v.next_plan || v.plan) && !(s && s.cancel_at_period_end);
  }
}

// offer lists the plans on sale, each with its button.
function offer(v) {
  if (v.plans.length === 0) {
    document.getElementById("no-plans").hidden = false;
    return;
  }
  const rows = v.plans.map((p) => {
    const button = document.createElement("button");
    button.type = "submit";
    button.name = "plan";
    button.value = p.name;
    button.id = `choose-${p.name}`;
    button.textContent = `Choose ${p.name}`;
    const action = cell("");
    action.append(button);
    return row(cell(p.name), cell(limit(p.window_requests), "num"), cell(limit(p.weekly_requests), "num"), cell(limit(p.burst_rpm), "num"), action);
  });
  document.getElementById("plan-rows").replaceChildren(...rows);
  const form = document.getElementById("plans-form");
  onSubmit(form, async (f) => {
    const change = await api("POST", "/account/v1/plan/checkout", { plan: f.dataset.chosen });
    if (change.url) {
      window.location.assign(change.url); // pay on the payment provider's page
      return;
    }
    document.getElementById("change-note").hidden = false;
    await follow(v.plan, v.next_plan);
  });
  // The button clicked names the plan (onSubmit passes the form, not the button that sent it).
  form.addEventListener("click", (ev) => {
    if (ev.target.name === "plan") form.dataset.chosen = ev.target.value;
  });
  form.hidden = false;
}

// follow reloads the plan until it or its scheduled move differs from what it was.
async function follow(plan, next) {
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const v = await api("GET", "/account/v1/plan");
    show(v);
    if (v.plan !== plan || (v.next_plan || "") !== (next || "")) return;
  }
}

authedPage(async () => {
  const v = await api("GET", "/account/v1/plan");
  offer(v);
  show(v);
  onSubmit(document.getElementById("portal-form"), async () => {
    const portal = await api("POST", "/account/v1/billing/portal");
    window.location.assign(portal.url);
  });
  // Back from a payment: the plan moves once the provider's confirmation arrives.
  if (new URLSearchParams(window.location.search).has("session")) {
    document.getElementById("paid-note").hidden = false;
    await follow(v.plan, v.next_plan);
  }
});
