import { api, setCsrfToken } from "../api.js";
import { onSubmit, value } from "../forms.js";
import { nextPath } from "../session.js";

const params = new URLSearchParams(location.search);

// What GET /auth/verify's redirect says about the link that was followed.
const verifyErrors = {
  expired: "This verification link has expired. Sign up again with the same address to get a new one.",
  used: "This verification link was already used. If your address is verified, log in.",
  invalid: "This verification link is not valid. Copy the whole link from the mail, or sign up again.",
};

const notice = document.getElementById("login-notice");
if (params.get("verified") === "1") {
  notice.textContent = "Your e-mail is verified. Log in to continue.";
  notice.hidden = false;
} else if (params.has("verify_error")) {
  notice.textContent = verifyErrors[params.get("verify_error")] || verifyErrors.invalid;
  notice.classList.add("error");
  notice.hidden = false;
}

const form = document.getElementById("login-form");
onSubmit(form, async () => {
  const session = await api("POST", "/auth/login", { email: value(form, "email"), password: form.elements.password.value });
  setCsrfToken(session.csrf_token);
  location.assign(nextPath(params));
});
