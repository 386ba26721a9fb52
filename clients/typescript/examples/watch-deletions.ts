// Saves a few messages, reads the history, and watches for deletions while
// deleting one.
//
//   npm install && npm run build && npm start -- 127.0.0.1:50051 [token] [ca.pem]
import { create } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

import { Code, createMemoryClients, errorDetails, EventType, MessageSchema, watchEvents } from "@memoryd/client";

const [address = "127.0.0.1:50051", token, ca] = process.argv.slice(2);
const sessionId = `example-${randomUUID().slice(0, 8)}`;
const tls = ca ? { ca: readFileSync(ca) } : undefined; // a CA bundle: connect over TLS
const { memory, events } = createMemoryClients(address, { token: token || undefined, tls, timeoutMs: 10_000 });

const saved = [];
for (const [role, content] of [
  ["user", "What is the capital of France?"],
  ["assistant", "Paris."],
  ["user", "And of Italy?"],
]) {
  saved.push((await memory.saveMessage({ sessionId, message: create(MessageSchema, { role, content }) })).message!);
}
const { messages: history } = await memory.getHistory({ sessionId });
console.log(`session ${sessionId}`);
for (const m of history) console.log(`  #${m.seq} ${m.role}: ${m.content}`);

const deletions = watchEvents(events, { sessionIds: [sessionId], types: [EventType.MESSAGES_DELETED] });
try {
  await deletions.started(); // registered: the deletion cannot slip in first
  const { deletedCount } = await memory.deleteMessages({ sessionId, ids: [saved[1].id] });
  const { value: event } = await deletions.next();
  const ids = event?.payload.case === "messagesDeleted" ? event.payload.value.ids : [];
  console.log(`deleted ${deletedCount}; event seq ${event?.seq}: ids ${JSON.stringify(ids)}`);
} finally {
  deletions.close();
}

const { messages: after } = await memory.getHistory({ sessionId });
console.log(`history now: ${JSON.stringify(after.map((m) => m.content))}`);

try {
  await memory.getHistory({ sessionId: "" });
} catch (error) {
  const { code, reason, fieldViolations } = errorDetails(error);
  console.log(`invalid request: ${Code[code]} ${reason} ${fieldViolations[0]?.field}`);
}
