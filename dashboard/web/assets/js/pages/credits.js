import { api } from "../api.js";
import { onSubmit, value } from "../forms.js";
import { cell, row, usd, when } from "../format.js";
import { authedPage } from "../session.js";

// What each kind of history entry is called on the page.
const kinds = { top_up: "Top-up", refund: "Refund", charge: "Charges" };

// show fills the balance and the history.
function show(credits) {
  document.getElementById("balance").textContent = usd(credits.balance_usd);
  const history = credits.history || [];
  const rows = history.map((h) =>
    row(
      cell(h.date || when(h.time)),
      cell((h.description || kinds[h.kind] || h.kind) + (h.reference ? ` (${h.reference})` : "")),
      cell(usd(h.amount_usd), "num"),
    ),
  );
  document.getElementById("credit-rows").replaceChildren(...rows);
  document.getElementById("no-credits").hidden = history.length > 0;
}

// offerPurchase shows the purchase form when the gateway takes payments: the amounts on
// offer, or any amount in its range. Paying happens on the payment provider's page; the
// credits come from its confirmation to the gateway, never from this page.
function offerPurchase(purchase) {
  if (!purchase) return;
  const form = document.getElementById("buy-form");
  const select = document.getElementById("buy-amount");
  const any = document.getElementById("buy-amount-any");
  if ((purchase.amounts_usd || []).length > 0) {
    select.replaceChildren(...purchase.amounts_usd.map((a) => new Option(usd(a), a)));
    select.hidden = false;
  } else {
    any.hidden = false;
    const range = document.getElementById("buy-range");
    range.textContent = `From ${usd(purchase.min_usd)} to ${usd(purchase.max_usd)}.`;
    range.hidden = false;
  }
  onSubmit(form, async (f) => {
    const amount = select.hidden ? value(f, "amount_usd_any") : value(f, "amount_usd");
    const checkout = await api("POST", "/account/v1/credits/checkout", { amount_usd: amount });
    window.location.assign(checkout.url);
  });
  form.hidden = false;
}

authedPage(async () => {
  const credits = await api("GET", "/account/v1/credits");
  show(credits);
  offerPurchase(credits.purchase);
  // Back from a payment: the balance moves once the provider's confirmation arrives.
  if (new URLSearchParams(window.location.search).has("session")) {
    document.getElementById("paid-note").hidden = false;
    const before = credits.balance_usd;
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await api("GET", "/account/v1/credits");
      show(now);
      if (now.balance_usd !== before) break;
    }
  }
});
