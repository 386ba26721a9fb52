// What every view shares: who the token is, and the hash routes.

// Who the token is (MemoryService.GetCaller): its tenant, scopes and end user.
export const caller = { tenant: "", scopes: [], user_id: "", known: false };

export function may(scope) {
  return caller.known && caller.scopes.includes(scope);
}

// "#/session/abc?page=x" -> {view: "session", arg: "abc", params: URLSearchParams}
export function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "sessions";
  const [path, query = ""] = hash.split("?", 2);
  const [view, ...rest] = path.split("/");
  return { view, arg: rest.map(decodeURIComponent).join("/"), params: new URLSearchParams(query) };
}

export function link(view, arg, params) {
  let out = `#/${view}`;
  if (arg) out += `/${encodeURIComponent(arg)}`;
  const query = new URLSearchParams(Object.entries(params || {}).filter(([, v]) => v !== "" && v !== undefined && v !== null));
  const text = query.toString();
  return text ? `${out}?${text}` : out;
}

