// The session of the authed pages: read once per page load, its CSRF token kept for the
// page's calls; no session sends the visitor to log in and back.

import { api, setCsrfToken } from "./api.js";

export const loginPath = "/dashboard/login";

// requireSession resolves with {account, csrf_token}; without a session it leaves the page.
export async function requireSession() {
  let session;
  try {
    session = await api("GET", "/auth/session");
  } catch (err) {
    if (err.status === 401) {
      const next = location.pathname + location.search;
      location.replace(`${loginPath}?next=${encodeURIComponent(next)}`);
      return new Promise(() => {}); // the page is going away
    }
    throw err;
  }
  setCsrfToken(session.csrf_token);
  document.getElementById("account-email").textContent = session.account.email;
  document.getElementById("logout").addEventListener("click", logout);
  return session;
}

async function logout() {
  try {
    await api("POST", "/auth/logout");
  } finally {
    location.assign(loginPath);
  }
}

// nextPath is the dashboard page a login returns to: only a /dashboard/ path, never another site.
export function nextPath(params) {
  const next = params.get("next") || "";
  return next.startsWith("/dashboard/") && !next.startsWith("//") ? next : "/dashboard/";
}

// pageError shows what stopped a page from loading.
export function pageError(err) {
  const el = document.getElementById("page-error");
  el.textContent = err.message || String(err);
  el.hidden = false;
}

// authedPage runs load(session) after the session check, showing any failure on the page.
export function authedPage(load) {
  requireSession().then(load).catch(pageError);
}
