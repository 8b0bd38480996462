import { api } from "../api.js";
import { onSubmit, value } from "../forms.js";

const form = document.getElementById("forgot-form");
onSubmit(form, async () => {
  await api("POST", "/auth/password/forgot", { email: value(form, "email") });
  form.hidden = true;
  document.getElementById("forgot-done").hidden = false;
});
