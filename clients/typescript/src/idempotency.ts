// Idempotency keys on appends, so that the retry policy may resend them.
import type { Interceptor } from "@connectrpc/connect";
import { randomUUID } from "node:crypto";

import { SaveMessageRequestSchema, SaveMessagesRequestSchema } from "./gen/memoryd/v1/memory_service_pb.js";

const APPENDS = new Set<string>([SaveMessageRequestSchema.typeName, SaveMessagesRequestSchema.typeName]);

/**
 * Gives every append (SaveMessage, SaveMessages) without an idempotency key a
 * fresh one, once per call: it runs outside retryInterceptor, so every
 * attempt carries the same key and the server stores the message once. The
 * caller's request object is left as it was.
 */
export const idempotencyKeys: Interceptor = (next) => async (req) => {
  if (req.stream || !APPENDS.has(req.method.input.typeName)) return next(req);
  if ((req.message as { idempotencyKey?: string }).idempotencyKey) return next(req);
  const keyed = { ...req.message, idempotencyKey: randomUUID().replaceAll("-", "") } as typeof req.message;
  return next({ ...req, message: keyed });
};
