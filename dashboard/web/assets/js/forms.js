// Form helpers: submit handling and errors shown at the field the API's param names.

import { ApiError } from "./api.js";

// fieldFor finds the control an API param names: controls are named after the params
// ("email", "limits.budget.amount_usd").
function fieldFor(form, param) {
  if (!param) return null;
  return form.querySelector(`[name="${CSS.escape(param)}"]`);
}

// errorSlot is the message element under a control, made on first use and tied to it with
// aria-describedby so screen readers read the error with the field.
function errorSlot(control) {
  const id = control.id + "-error";
  let slot = document.getElementById(id);
  if (!slot) {
    slot = document.createElement("p");
    slot.id = id;
    slot.className = "field-error";
    const field = control.closest(".field");
    if (field) field.append(slot);
    else control.after(slot);
    const described = (control.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    control.setAttribute("aria-describedby", [id, ...described].join(" "));
  }
  return slot;
}

export function clearErrors(form) {
  for (const slot of form.querySelectorAll(".field-error")) slot.textContent = "";
  for (const c of form.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
  const top = form.querySelector(".form-error");
  if (top) {
    top.textContent = "";
    top.hidden = true;
  }
}

// messageOf is what a person reads for a refused call.
export function messageOf(err) {
  if (err instanceof ApiError && err.status === 429 && err.retryAfter) {
    return `${err.message} Try again in ${err.retryAfter} seconds.`;
  }
  return err.message || String(err);
}

// showError puts err at the field its param names, or at the top of the form.
export function showError(form, err) {
  const control = err instanceof ApiError ? fieldFor(form, err.param) : null;
  if (control) {
    errorSlot(control).textContent = messageOf(err);
    control.setAttribute("aria-invalid", "true");
    control.focus();
    return;
  }
  const top = form.querySelector(".form-error");
  top.textContent = messageOf(err);
  top.hidden = false;
}

// fieldError is a client-side check's error, shown like the API's.
export function fieldError(param, message) {
  return new ApiError(400, { error: { message, type: "invalid_request_error", param } });
}

// onSubmit runs submit(form) on submission with the button disabled, and shows what it throws.
// The form is marked bound, so a test (or anything else) can tell that a click on its submit
// button now reaches submit, not the browser's own form submission.
export function onSubmit(form, submit) {
  form.dataset.bound = "true";
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearErrors(form);
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      await submit(form);
    } catch (err) {
      showError(form, err);
    } finally {
      button.disabled = false;
    }
  });
}

// value is a control's trimmed value ("" when the form has no such control).
export function value(form, name) {
  const c = form.elements.namedItem(name);
  return c ? c.value.trim() : "";
}
