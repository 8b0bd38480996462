// The dashboard's one door to the gateway: JSON in and out, the session's CSRF token on
// every state-changing call, and errors read from the API's envelope
// {"error":{"message","type","code","param"}}.

let csrfToken = "";

// setCsrfToken keeps the token login and GET /auth/session return, for the calls after.
export function setCsrfToken(token) {
  csrfToken = token || "";
}

// ApiError is a refused call: its status, the envelope's code and param (the field it names).
export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    const e = (body && body.error) || {};
    super(e.message || `The gateway answered ${status}.`);
    this.status = status;
    this.code = e.code || "";
    this.type = e.type || "";
    this.param = e.param || "";
    this.retryAfter = retryAfter || "";
  }
}

const safeMethods = new Set(["GET", "HEAD"]);

// api calls the gateway; it resolves with the parsed answer (null when it has no body) and
// rejects with an ApiError when the status is not 2xx.
export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (!safeMethods.has(method) && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, { error: { message: "The gateway cannot be reached. Check your connection and try again." } });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) throw new ApiError(res.status, data, res.headers.get("Retry-After"));
  return data;
}

// query builds "?a=1&b=2" from the set values of params ("" when none is set).
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? "?" + s : "";
}
