import { api } from "../api.js";

// The result page of a verification link opened at /dashboard/verify?token=…: the token is
// sent once with POST /auth/verify and removed from the address bar.
const status = document.getElementById("verify-status");
const next = document.getElementById("verify-next");
const token = new URLSearchParams(location.search).get("token");
history.replaceState(null, "", location.pathname);

if (!token) {
  status.textContent = "This page needs the link from your verification mail.";
} else {
  api("POST", "/auth/verify", { token })
    .then(() => {
      status.textContent = "Your e-mail is verified.";
      next.hidden = false;
    })
    .catch((err) => {
      status.textContent = err.message;
      status.classList.add("error");
    });
}
