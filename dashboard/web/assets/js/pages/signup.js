import { api } from "../api.js";
import { onSubmit, value } from "../forms.js";

const form = document.getElementById("signup-form");
onSubmit(form, async () => {
  const email = value(form, "email");
  // The same answer whether or not the address is registered: the page says no more.
  await api("POST", "/auth/signup", { email, password: form.elements.password.value });
  document.getElementById("signup-email").textContent = email;
  form.hidden = true;
  document.getElementById("signup-done").hidden = false;
});
