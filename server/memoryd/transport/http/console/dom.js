// Small DOM helpers. Text always goes in as text (textContent), never as HTML.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style") for (const [name, v] of Object.entries(value)) el.style.setProperty(name, String(v)); // CSSOM: allowed by the CSP
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// Milliseconds since the epoch, as the user's local time (ISO-like, sortable).
export function time(ms) {
  const n = Number(ms || 0);
  if (!n) return "";
  const d = new Date(n);
  const pad = (x, w = 2) => String(x).padStart(w, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// A score as the console shows it: 4 decimals (the API's float, rounded).
export function score(value) {
  return Number(value || 0).toFixed(4);
}

export function table(headers, rows, attrs = {}) {
  return h("div", { class: "scroll" },
    h("table", attrs,
      h("thead", {}, h("tr", {}, headers.map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, rows)));
}

export function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

export function errorBox(error) {
  const code = error && error.code ? `${error.code}: ` : "";
  return h("p", { class: "error", role: "alert" }, `${code}${error && error.message ? error.message : error}`);
}

// Asks before a destructive call, naming what will go; resolves true when confirmed.
export function confirmAction(text, button = "Delete") {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = button;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}
