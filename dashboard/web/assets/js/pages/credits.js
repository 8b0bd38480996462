import { api } from "../api.js";
import { cell, row, usd, when } from "../format.js";
import { authedPage } from "../session.js";

// What each kind of history entry is called on the page.
const kinds = { top_up: "Top-up", charge: "Charges" };

authedPage(async () => {
  const credits = await api("GET", "/account/v1/credits");
  document.getElementById("balance").textContent = usd(credits.balance_usd);
  const history = credits.history || [];
  const rows = history.map((h) =>
    row(cell(h.date || when(h.time)), cell(h.description || kinds[h.kind] || h.kind), cell(usd(h.amount_usd), "num")),
  );
  document.getElementById("credit-rows").replaceChildren(...rows);
  document.getElementById("no-credits").hidden = history.length > 0;
});
