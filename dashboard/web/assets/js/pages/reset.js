import { api } from "../api.js";
import { fieldError, onSubmit } from "../forms.js";

// The token of the reset link is read once and taken out of the address bar.
const token = new URLSearchParams(location.search).get("token") || "";
history.replaceState(null, "", location.pathname);

const form = document.getElementById("reset-form");
onSubmit(form, async () => {
  const password = form.elements.password.value;
  if (password !== form.elements.confirm.value) throw fieldError("confirm", "The two passwords differ.");
  await api("POST", "/auth/password/reset", { token, password });
  form.hidden = true;
  document.getElementById("reset-done").hidden = false;
});
