import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { run } from "../examples/watch-deletions.js";
import { Code, ConnectError, createMemoryClients, EventType, type MemoryClients } from "../src/index.js";
import { memorydExecutable, startMemoryd, type Memoryd } from "./memoryd.js";

const bin = memorydExecutable();
const required = process.env.MEMORYD_REQUIRE_SERVER === "1";
if (!bin && required) throw new Error("memoryd not found: set MEMORYD_BIN");

describe("memoryd over gRPC", { skip: bin ? false : "memoryd not found (set MEMORYD_BIN)" }, () => {
  let server: Memoryd;
  let clients: MemoryClients;

  before(async () => {
    server = await startMemoryd(bin!);
    clients = createMemoryClients(server.address);
  });
  after(async () => {
    await server?.stop();
  });

  it("saves, reads the history and sees a deletion it watches for", async () => {
    const sessionId = `ts-${randomUUID()}`;

    const outcome = await run(clients, sessionId);

    const ids = (ms: { id: string }[]) => ms.map((m) => m.id);
    assert.deepEqual(ids(outcome.history), ids(outcome.saved));
    assert.deepEqual(
      outcome.history.map((m) => m.content),
      ["What is the capital of France?", "Paris.", "And of Italy?"],
    );
    const seqs = outcome.history.map((m) => m.seq);
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), `seqs ${seqs} increase`);
    assert.equal(outcome.deletedCount, 1n);
    const gone = outcome.saved[1];
    assert.equal(outcome.deletion.type, EventType.MESSAGES_DELETED);
    assert.equal(outcome.deletion.sessionId, sessionId);
    assert.equal(outcome.deletion.payload.case, "messagesDeleted");
    if (outcome.deletion.payload.case === "messagesDeleted") {
      assert.deepEqual(outcome.deletion.payload.value.ids, [gone.id]);
      assert.deepEqual(outcome.deletion.payload.value.timestamps, [gone.timestamp]);
    }
    assert.deepEqual(ids(outcome.historyAfter), [outcome.saved[0].id, outcome.saved[2].id]);
  });

  it("rejects invalid input with INVALID_ARGUMENT and a google.rpc.BadRequest", async () => {
    await assert.rejects(clients.memory.getHistory({ sessionId: "", limit: -1 }), (error: unknown) => {
      const err = ConnectError.from(error);
      assert.equal(err.code, Code.InvalidArgument);
      assert.ok(
        err.details.some((d) => "type" in d && d.type === "google.rpc.BadRequest"),
        `details ${JSON.stringify(err.details.map((d) => ("type" in d ? d.type : "?")))}`,
      );
      return true;
    });
  });
});
