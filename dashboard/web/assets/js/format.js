// Display helpers. Amounts stay the API's exact decimal strings; only their look changes.

// usd shows a decimal USD string as "$1.204" (exact: no float rounding).
export function usd(amount) {
  if (amount === undefined || amount === null || amount === "") return "—";
  const s = String(amount);
  return s.startsWith("-") ? "−$" + s.slice(1) : "$" + s;
}

// toDate reads the API's times: RFC 3339 strings, or unix nanoseconds.
export function toDate(t) {
  if (t === undefined || t === null || t === "") return null;
  if (typeof t === "number") return new Date(Math.floor(t / 1e6));
  const d = new Date(t);
  return isNaN(d) ? null : d;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

export function when(t) {
  const d = toDate(t);
  return d ? dateTime.format(d) : "—";
}

// inDuration is how far ahead t is, in words ("in 3 h 20 min"); "" once it has passed.
export function inDuration(t) {
  const d = toDate(t);
  if (!d || d <= Date.now()) return "";
  let min = Math.round((d - Date.now()) / 60000);
  const days = Math.floor(min / 1440);
  min -= days * 1440;
  const h = Math.floor(min / 60);
  min -= h * 60;
  const parts = [];
  if (days) parts.push(`${days} d`);
  if (h) parts.push(`${h} h`);
  if (!days) parts.push(`${min} min`);
  return "in " + parts.join(" ");
}

// num shows a count with thousands separators; fractional allowance calls keep one decimal.
export function num(n) {
  if (n === undefined || n === null) return "—";
  return Number(n).toLocaleString(undefined, { maximumFractionDigits: 1 });
}

// cell makes a table cell with text (never HTML: API strings are data).
export function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

export function row(...cells) {
  const tr = document.createElement("tr");
  tr.append(...cells);
  return tr;
}

// rfc3339 turns a datetime-local value (local time) into the API's RFC 3339 UTC form.
export function rfc3339(local) {
  if (!local) return "";
  const d = new Date(local);
  return isNaN(d) ? local : d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

// localInput turns an API time into a datetime-local value.
export function localInput(t) {
  const d = toDate(t);
  if (!d) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
