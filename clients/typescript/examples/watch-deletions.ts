// Saves a few messages, reads the history, and watches for deletions while
// deleting one.
//
//   npm run build && node dist/examples/watch-deletions.js [host:port] [token]
import { create } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";

import {
  createMemoryClients,
  EventType,
  MessageSchema,
  type Event,
  type MemoryClients,
  type Message,
} from "../src/index.js";

export interface Outcome {
  saved: Message[];
  history: Message[];
  deletedCount: bigint;
  deletion: Event;
  historyAfter: Message[];
}

export async function run(clients: MemoryClients, sessionId: string): Promise<Outcome> {
  const { memory, events } = clients;
  const saved: Message[] = [];
  for (const [role, content] of [
    ["user", "What is the capital of France?"],
    ["assistant", "Paris."],
    ["user", "And of Italy?"],
  ]) {
    const response = await memory.saveMessage({ sessionId, message: create(MessageSchema, { role, content }) });
    saved.push(response.message!);
  }
  const { messages: history } = await memory.getHistory({ sessionId });

  // Watch from now, without a deadline. The server sends the response headers
  // once the watch is registered, so the deletion is issued only after them.
  const stop = new AbortController();
  let registered!: () => void;
  const headers = new Promise<void>((resolve) => (registered = resolve));
  const stream = events
    .watch(
      { sessionIds: [sessionId], types: [EventType.MESSAGES_DELETED] },
      { signal: stop.signal, timeoutMs: 0, onHeader: () => registered() },
    )
    [Symbol.asyncIterator]();
  try {
    let next = stream.next(); // starts the call
    await headers;
    const { deletedCount } = await memory.deleteMessages({ sessionId, ids: [saved[1].id] });
    let deletion: Event | undefined;
    while (deletion === undefined) {
      const { value, done } = await next;
      if (done) throw new Error("watch ended before the deletion arrived");
      if (value.kind.case === "event") deletion = value.kind.value;
      else next = stream.next(); // a progress notification
    }
    const { messages: historyAfter } = await memory.getHistory({ sessionId });
    return { saved, history, deletedCount, deletion, historyAfter };
  } finally {
    stop.abort();
  }
}

async function main(): Promise<void> {
  const [address = "127.0.0.1:50051", token] = process.argv.slice(2);
  const sessionId = `example-${randomUUID().slice(0, 8)}`;
  const outcome = await run(createMemoryClients(address, { token }), sessionId);
  console.log(`session ${sessionId}`);
  for (const m of outcome.history) console.log(`  #${m.seq} ${m.role}: ${m.content}`);
  const deleted = outcome.deletion.payload.case === "messagesDeleted" ? outcome.deletion.payload.value : undefined;
  console.log(`deleted ${outcome.deletedCount}; event seq ${outcome.deletion.seq}: ids ${JSON.stringify(deleted?.ids)}`);
  console.log(`history now: ${JSON.stringify(outcome.historyAfter.map((m) => m.content))}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
