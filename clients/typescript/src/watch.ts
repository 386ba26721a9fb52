// EventService.Watch that resumes from its last seq.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";

import { errorDetails, REASON_TOKEN_EXPIRED } from "./errors.js";
import type { Event } from "./gen/memoryd/v1/event_pb.js";
import {
  EventService,
  WatchRequestSchema,
  type WatchResponse,
} from "./gen/memoryd/v1/event_service_pb.js";

const RESUMABLE = new Set([Code.Unavailable, Code.ResourceExhausted]);

export interface WatchOptions {
  /** Stops the watch when aborted (as close() does). */
  signal?: AbortSignal;
  /** Extra request headers of every stream the watch opens. */
  headers?: Record<string, string>;
  initialBackoffMs?: number; // 100
  maxBackoffMs?: number; // 5000
  /**
   * The clients have a tokenProvider: a stream the server ends because its
   * token expired (UNAUTHENTICATED, reason TOKEN_EXPIRED) resumes with the
   * provider's next token.
   */
  renewsTokens?: boolean;
}

/**
 * The events of EventService.Watch, in seq order, across reconnects.
 *
 * When a stream ends with UNAVAILABLE, RESOURCE_EXHAUSTED (the watcher fell
 * behind) or cleanly (a server shutting down), the watch reopens it with
 * afterSeq = the seq of the last event it delivered, or of the latest progress
 * notification, so every event arrives exactly once. A resume point older
 * than the server's retention fails with OUT_OF_RANGE, reason EVENTS_COMPACTED
 * (see errorDetails): resync, then watch again. `for await` over it; close()
 * (or the signal) ends the iteration.
 */
export class EventWatch implements AsyncIterableIterator<Event> {
  /** Seq to resume from (last event delivered or progress seen); undefined: from now. */
  lastSeq: bigint | undefined;
  /** How many times the stream was reopened. */
  reconnects = 0;

  private readonly filters: MessageInitShape<typeof WatchRequestSchema>;
  private readonly stop = new AbortController();
  private stream?: {
    responses: AsyncIterator<WatchResponse>;
    pending?: Promise<IteratorResult<WatchResponse>>;
    headers: Promise<void>;
    abort: AbortController;
  };
  private failures = 0; // consecutive reopenings without receiving anything

  constructor(
    private readonly events: Client<typeof EventService>,
    request: MessageInitShape<typeof WatchRequestSchema>,
    private readonly options: WatchOptions = {},
  ) {
    this.filters = { ...request, afterSeq: undefined };
    this.lastSeq = request.afterSeq;
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  /**
   * Opens the stream now and resolves once the server has registered the watch
   * (it sends its response headers then): nothing written afterwards is missed.
   */
  async started(): Promise<void> {
    const stream = this.open();
    stream.pending ??= stream.responses.next();
    await Promise.race([stream.headers, stream.pending.then(() => undefined)]);
  }

  [Symbol.asyncIterator](): EventWatch {
    return this;
  }

  async next(): Promise<IteratorResult<Event>> {
    while (!this.stop.signal.aborted) {
      const stream = this.open();
      const pending = stream.pending ?? stream.responses.next();
      stream.pending = undefined;
      let result: IteratorResult<WatchResponse>;
      try {
        result = await pending;
      } catch (error) {
        if (this.stop.signal.aborted) break;
        await this.ended(ConnectError.from(error));
        continue;
      }
      if (result.done) {
        await this.ended(undefined); // a clean end (a server shutting down): resume
        continue;
      }
      const event = this.receive(result.value);
      if (event !== undefined) return { value: event, done: false };
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<Event>> {
    this.close();
    return { value: undefined, done: true };
  }

  /** Stops watching and cancels the stream. */
  close(): void {
    this.stop.abort();
    this.stream?.abort.abort();
    this.stream = undefined;
  }

  private open() {
    if (this.stream === undefined) {
      const abort = new AbortController();
      this.stop.signal.addEventListener("abort", () => abort.abort(), { once: true });
      let registered!: () => void;
      const headers = new Promise<void>((resolve) => (registered = resolve));
      const request = create(WatchRequestSchema, { ...this.filters, afterSeq: this.lastSeq });
      const responses = this.events
        .watch(request, { signal: abort.signal, timeoutMs: 0, headers: this.options.headers, onHeader: () => registered() })
        [Symbol.asyncIterator]();
      this.stream = { responses, headers, abort };
    }
    return this.stream;
  }

  private receive(response: WatchResponse): Event | undefined {
    this.failures = 0;
    if (response.kind.case === "event") {
      this.lastSeq = response.kind.value.seq;
      return response.kind.value;
    }
    if (response.kind.case === "progress") {
      const latest = response.kind.value.latestSeq;
      this.lastSeq = this.lastSeq === undefined || latest > this.lastSeq ? latest : this.lastSeq;
    }
    return undefined;
  }

  private expiredAndRenewable(error: ConnectError): boolean {
    return this.options.renewsTokens === true && error.code === Code.Unauthenticated
      && errorDetails(error).reason === REASON_TOKEN_EXPIRED;
  }

  private async ended(error: ConnectError | undefined): Promise<void> {
    this.stream?.abort.abort();
    this.stream = undefined;
    if (error !== undefined && !RESUMABLE.has(error.code) && !this.expiredAndRenewable(error)) throw error;
    const initial = this.options.initialBackoffMs ?? 100;
    const backoff = Math.min(this.options.maxBackoffMs ?? 5000, initial * 2 ** this.failures);
    this.failures++;
    this.reconnects++;
    await new Promise((resolve) => setTimeout(resolve, backoff / 2 + (Math.random() * backoff) / 2));
  }
}

/** Watches the event log from request.afterSeq (absent: from now); see EventWatch. */
export function watchEvents(
  events: Client<typeof EventService>,
  request: MessageInitShape<typeof WatchRequestSchema>,
  options?: WatchOptions,
): EventWatch {
  return new EventWatch(events, request, options);
}
