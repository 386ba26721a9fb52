// The contract's gRPC service config: which RPCs are retried (on UNAVAILABLE)
// and how. The same document ships with every language's client (copied from
// proto/memoryd/v1 by scripts/gen-proto); docs/CLIENTS.md explains the
// classification. grpc-js and the other gRPC libraries apply it inside the
// channel; Connect-ES has no service config, so retryInterceptor applies it.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

import contract from "./gen/memoryd/v1/memoryd_grpc_service_config.json" with { type: "json" };

export interface RetryPolicy {
  maxAttempts: number;
  initialBackoff: string; // "0.1s"
  maxBackoff: string;
  backoffMultiplier: number;
  retryableStatusCodes: string[]; // "UNAVAILABLE"
}

export interface ServiceConfig {
  methodConfig: { name: { service: string; method?: string }[]; retryPolicy?: RetryPolicy }[];
}

/** The contract's service config. */
export const SERVICE_CONFIG: ServiceConfig = contract;

/** The retry policy `config` gives an RPC ("memoryd.v1.MemoryService", "GetHistory"), if any. */
export function retryPolicyOf(config: ServiceConfig, service: string, method: string): RetryPolicy | undefined {
  const exact = config.methodConfig.find((c) => c.name.some((n) => n.service === service && n.method === method));
  const wholeService = config.methodConfig.find((c) => c.name.some((n) => n.service === service && n.method === undefined));
  return (exact ?? wholeService)?.retryPolicy;
}

const seconds = (duration: string) => Number(duration.replace(/s$/, ""));
const codeOf = (name: string) =>
  Code[name.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase()) as keyof typeof Code];

/**
 * Retries unary calls as gRPC's retry policy does: up to maxAttempts, on the
 * retryable codes, after a random delay of up to initialBackoff ×
 * backoffMultiplier^(n-1) (at most maxBackoff), all within the call's deadline.
 * Each attempt announces the deadline that is left (grpc-timeout).
 */
export function retryInterceptor(config: ServiceConfig): Interceptor {
  return (next) => async (req) => {
    const policy = req.stream ? undefined : retryPolicyOf(config, req.service.typeName, req.method.name);
    if (policy === undefined) return next(req);
    const retryable = new Set(policy.retryableStatusCodes.map(codeOf));
    const timeout = req.header.get("grpc-timeout"); // "<n>m", set by the transport from timeoutMs
    const deadline = timeout === null ? undefined : Date.now() + Number(timeout.slice(0, -1));
    let backoff = seconds(policy.initialBackoff) * 1000;
    for (let attempt = 1; ; attempt++) {
      if (deadline !== undefined) req.header.set("grpc-timeout", `${Math.max(1, deadline - Date.now())}m`);
      try {
        return await next(req);
      } catch (error) {
        const code = ConnectError.from(error).code;
        if (attempt >= policy.maxAttempts || !retryable.has(code) || req.signal.aborted) throw error;
      }
      await pause(Math.random() * backoff, req.signal);
      backoff = Math.min(backoff * policy.backoffMultiplier, seconds(policy.maxBackoff) * 1000);
    }
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
