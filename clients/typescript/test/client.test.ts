// The helper layer against a live memoryd, faults injected by the proxy in front of it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { create } from "@bufbuild/protobuf";

import {
  Code,
  createMemoryClients,
  errorDetails,
  EventType,
  MessageSchema,
  retryPolicyOf,
  SERVICE_CONFIG,
  watchEvents,
  type MemoryClients,
} from "../src/index.js";
import { memorydExecutable, startIssuer, startMemoryd, startProxy, type Memoryd } from "./memoryd.js";

const bin = memorydExecutable();
const required = process.env.MEMORYD_REQUIRE_SERVER === "1";
if (!bin && required) throw new Error("memoryd not found: set MEMORYD_BIN");

const user = (content: string) => create(MessageSchema, { role: "user", content });
/** Per-call proxy instruction, e.g. fault("memoryd-test-fault", "UNAVAILABLE", 2). */
const fault = (header: string, code: string, n: number) => ({ [header]: `${code}:${n}:${randomUUID()}` });
const session = () => `ts-${randomUUID()}`;

describe("service config", () => {
  it("gives exact methods their policy, whole services theirs, and others none", () => {
    assert.equal(retryPolicyOf(SERVICE_CONFIG, "memoryd.v1.MemoryService", "GetHistory")?.maxAttempts, 5);
    assert.equal(retryPolicyOf(SERVICE_CONFIG, "memoryd.v1.MemoryService", "ClearSession"), undefined);
    const policy = { maxAttempts: 2, initialBackoff: "1s", maxBackoff: "1s", backoffMultiplier: 1, retryableStatusCodes: [] };
    const wholeService = { methodConfig: [{ name: [{ service: "memoryd.v1.MemoryService" }], retryPolicy: policy }] };
    assert.equal(retryPolicyOf(wholeService, "memoryd.v1.MemoryService", "ClearSession"), policy);
  });
});

describe("memoryd over gRPC", { skip: bin ? false : "memoryd not found (set MEMORYD_BIN)" }, () => {
  let server: Memoryd;
  let proxy: Memoryd;
  let direct: MemoryClients;
  let proxied: MemoryClients;

  before(async () => {
    server = await startMemoryd(bin!);
    proxy = await startProxy(bin!, server);
    direct = createMemoryClients(server.address);
    proxied = createMemoryClients(proxy.address);
  });
  after(async () => {
    await proxy?.stop();
    await server?.stop();
  });

  it("rejects invalid input with INVALID_ARGUMENT and its google.rpc details", async () => {
    await assert.rejects(direct.memory.getHistory({ sessionId: "", limit: -1 }), (error: unknown) => {
      const details = errorDetails(error);
      assert.equal(details.code, Code.InvalidArgument);
      assert.ok(details.reason);
      assert.deepEqual(details.fieldViolations.map((v) => v.field).sort(), ["limit", "session_id"]);
      return true;
    });
  });

  it("retries the idempotent calls and not the others", async () => {
    const sessionId = session();
    const saved = await proxied.memory.saveMessage(
      { sessionId, message: user("hi") },
      { headers: fault("memoryd-test-fault", "UNAVAILABLE", 2) },
    );
    assert.equal(saved.message?.content, "hi");
    await assert.rejects(
      proxied.memory.clearSession({ sessionId }, { headers: fault("memoryd-test-fault", "UNAVAILABLE", 1) }),
      (error: unknown) => errorDetails(error).code === Code.Unavailable,
    );
    assert.equal((await proxied.memory.getHistory({ sessionId })).messages.length, 1);
  });

  it("retries nothing when serviceConfig is null", async () => {
    const sessionId = session();
    const unretried = createMemoryClients(proxy.address, { serviceConfig: null });
    await assert.rejects(
      unretried.memory.saveMessage({ sessionId, message: user("hi") }, { headers: fault("memoryd-test-fault", "UNAVAILABLE", 1) }),
      (error: unknown) => errorDetails(error).code === Code.Unavailable,
    );
    assert.equal((await proxied.memory.getHistory({ sessionId })).messages.length, 0);
  });

  it("stores an append once when its acknowledgement is lost and it is retried", async () => {
    const sessionId = session();
    // No idempotency key in the request: the client adds one, the same on both attempts.
    const saved = await proxied.memory.saveMessage(
      { sessionId, message: user("once") },
      { headers: fault("memoryd-test-lost-ack", "UNAVAILABLE", 1) },
    );
    assert.equal(saved.deduplicated, true);
    assert.equal((await proxied.memory.getHistory({ sessionId })).messages.length, 1);
  });

  it("gives unary calls the default deadline but not the watch", async () => {
    const sessionId = session();
    const hurried = createMemoryClients(server.address, { timeoutMs: 1 });
    await assert.rejects(hurried.memory.getHistory({ sessionId }), (e: unknown) => errorDetails(e).code === Code.DeadlineExceeded);
    const watch = watchEvents(hurried.events, { sessionIds: [sessionId] });
    try {
      await watch.started();
      await direct.memory.saveMessage({ sessionId, message: user("hi") });
      const { value } = await watch.next();
      assert.equal(value?.type, EventType.MESSAGES_APPENDED);
    } finally {
      watch.close();
    }
  });

  it("resumes a broken watch from its last seq", async () => {
    const sessionId = session();
    const watch = watchEvents(
      proxied.events,
      { sessionIds: [sessionId], types: [EventType.MESSAGES_APPENDED] },
      { headers: fault("memoryd-test-cut", "UNAVAILABLE", 2) },
    );
    try {
      await watch.started();
      const saved: string[] = [];
      for (let i = 0; i < 4; i++) {
        saved.push((await proxied.memory.saveMessage({ sessionId, message: user(`m${i}`) })).message!.id);
      }
      const received: string[] = [];
      let last = 0n;
      for await (const event of watch) {
        assert.ok(event.seq > last, "seqs increase");
        last = event.seq;
        if (event.payload.case === "messagesAppended") received.push(event.payload.value.messages[0].id);
        if (received.length === saved.length) break;
      }
      assert.deepEqual(received, saved); // every event once, in order, across the cut
      assert.equal(watch.reconnects, 1);
      assert.equal(watch.lastSeq, last);
    } finally {
      watch.close();
    }
  });

  it("selects the tenant by bearer token", async () => {
    const secured = await startMemoryd(bin!, { MEMORYD_TOKENS: "acme: token-acme-0123456789" });
    try {
      const sessionId = session();
      const acme = createMemoryClients(secured.address, { token: "token-acme-0123456789" });
      await acme.memory.saveMessage({ sessionId, message: user("hi") });
      assert.equal((await acme.memory.getHistory({ sessionId })).messages.length, 1);
      await assert.rejects(
        createMemoryClients(secured.address).memory.getHistory({ sessionId }),
        (e: unknown) => errorDetails(e).code === Code.Unauthenticated,
      );
    } finally {
      await secured.stop();
    }
  });
});

describe("token provider", { skip: bin ? false : "memoryd not found (set MEMORYD_BIN)" }, () => {
  let issuer: Memoryd;
  let server: Memoryd;
  before(async () => {
    issuer = await startIssuer(bin!);
    server = await startMemoryd(bin!, {
      MEMORYD_OIDC_ISSUER: `http://${issuer.address}`,
      MEMORYD_JWT_AUDIENCE: "memoryd-test",
      MEMORYD_JWT_LEEWAY_SECONDS: "0",
    });
  });
  after(async () => {
    await server?.stop();
    await issuer?.stop();
  });

  /** A provider minting tokens of `tenant` living `lifetime` s; counts its calls, or gives junk when broken. */
  const minting = (tenant: string, lifetime: number) => {
    const state = { calls: 0, broken: false };
    const provider = async () => {
      state.calls++;
      if (state.broken) return "not.a.token";
      return (await fetch(`http://${issuer.address}/mint?tenant=${tenant}&lifetime=${lifetime}`)).text();
    };
    return { state, provider };
  };

  it("gives every call the provider's token", async () => {
    const { state, provider } = minting(`t-${randomUUID()}`, 600);
    const clients = createMemoryClients(server.address, { tokenProvider: provider });
    const sessionId = session();
    await clients.memory.saveMessage({ sessionId, message: user("hi") });
    assert.equal((await clients.memory.getHistory({ sessionId })).messages.length, 1);
    assert.equal(state.calls, 2);
    state.broken = true; // the server sees the provider's token, call by call
    await assert.rejects(clients.memory.getHistory({ sessionId }), (e: unknown) => {
      const details = errorDetails(e);
      return details.code === Code.Unauthenticated && details.reason === "TOKEN_INVALID";
    });
    state.broken = false;
    assert.equal((await clients.memory.getHistory({ sessionId })).messages.length, 1);
    assert.throws(() => createMemoryClients(server.address, { token: "x", tokenProvider: provider }));
  });

  it("resumes a watch with a fresh token when its token expires", async () => {
    const { provider } = minting(`t-${randomUUID()}`, 2);
    const clients = createMemoryClients(server.address, { tokenProvider: provider });
    const watch = watchEvents(clients.events, { afterSeq: 0n }, { renewsTokens: true });
    try {
      await watch.started();
      const seqs: bigint[] = [];
      for (let i = 0; i < 3; i++) { // each save after the previous token expired: the stream ends and resumes
        await clients.memory.saveMessage({ sessionId: "w", message: user(`m${i}`) });
        const { value } = await watch.next();
        assert.equal(value!.payload.case, "messagesAppended");
        seqs.push((value!.payload.value as { messages: { seq: bigint }[] }).messages[0].seq);
        await new Promise((resolve) => setTimeout(resolve, 2500));
      }
      assert.deepEqual(seqs, [1n, 2n, 3n]);
      assert.ok(watch.reconnects >= 1);
    } finally {
      watch.close();
    }
  });
});
