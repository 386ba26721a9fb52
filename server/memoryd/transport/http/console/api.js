// memoryd's own HTTP/JSON (Connect) endpoints, called with the user's token: nothing else.
// Unary calls are POST /memoryd.v1.<Service>/<Method> with a JSON body; Watch is a Connect
// server stream (envelopes: a flags byte, a 4-byte big-endian length, the JSON message).

const TOKEN_KEY = "memoryd.console.token";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(contentType) {
  const h = { "Content-Type": contentType };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

export class ApiError extends Error {
  constructor(code, message, details) {
    super(message);
    this.code = code;
    this.details = details || [];
  }
}

// One unary RPC: resolves to the response message (proto field names), or throws ApiError.
export async function call(service, method, request = {}, { signal } = {}) {
  const response = await fetch(`/memoryd.v1.${service}/${method}`, {
    method: "POST",
    headers: headers("application/json"),
    body: JSON.stringify(request),
    signal,
  });
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError("unknown", `HTTP ${response.status}`);
  }
  if (!response.ok) throw new ApiError(body.code || "unknown", body.message || `HTTP ${response.status}`, body.details);
  return body;
}

function envelope(message) {
  const bytes = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(5 + bytes.length);
  new DataView(out.buffer).setUint32(1, bytes.length);
  out.set(bytes, 5);
  return out;
}

// A server stream: calls onMessage(message) for each response as it arrives; resolves when
// the stream ends, throws ApiError for the error its end-of-stream envelope carries.
export async function stream(service, method, request, onMessage, { signal } = {}) {
  const response = await fetch(`/memoryd.v1.${service}/${method}`, {
    method: "POST",
    headers: headers("application/connect+json"),
    body: envelope(request),
    signal,
  });
  if (!response.ok) {
    let body = {};
    try { body = await response.json(); } catch { /* not JSON */ }
    throw new ApiError(body.code || "unknown", body.message || `HTTP ${response.status}`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const joined = new Uint8Array(buffer.length + value.length);
    joined.set(buffer);
    joined.set(value, buffer.length);
    buffer = joined;
    while (buffer.length >= 5) {
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
      const flags = view.getUint8(0);
      const length = view.getUint32(1);
      if (buffer.length < 5 + length) break;
      const message = JSON.parse(decoder.decode(buffer.subarray(5, 5 + length)));
      buffer = buffer.slice(5 + length);
      if (flags & 2) {
        if (message.error) throw new ApiError(message.error.code, message.error.message, message.error.details);
        return;
      }
      onMessage(message);
    }
  }
}

// GET /healthz (no token needed).
export async function health() {
  const response = await fetch("/healthz");
  return response.json();
}
