// A failed call's status with the google.rpc details memoryd attaches (AIP-193).
import { Code, ConnectError } from "@connectrpc/connect";

import {
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
  type BadRequest_FieldViolation,
} from "./gen/google/rpc/error_details_pb.js";

/** ErrorInfo reason of a Watch resumed from a seq older than retention (metadata.oldest_seq). */
export const REASON_EVENTS_COMPACTED = "EVENTS_COMPACTED";

/** ErrorInfo reason of a call or Watch stream whose JWT expired (a tokenProvider gives a fresh one). */
export const REASON_TOKEN_EXPIRED = "TOKEN_EXPIRED";

export interface ErrorDetails {
  code: Code;
  message: string;
  /** ErrorInfo.reason, the stable machine-readable cause ("" when absent). */
  reason: string;
  /** ErrorInfo.metadata ({} when absent). */
  metadata: Record<string, string>;
  /** BadRequest field violations ([] when absent). */
  fieldViolations: BadRequest_FieldViolation[];
  /** RetryInfo.retry_delay in ms, when the server suggested one. */
  retryDelayMs?: number;
}

/** Decodes a failed call (any thrown value: ConnectError.from converts it). */
export function errorDetails(error: unknown): ErrorDetails {
  const err = ConnectError.from(error);
  const info = err.findDetails(ErrorInfoSchema)[0];
  const retry = err.findDetails(RetryInfoSchema)[0]?.retryDelay;
  return {
    code: err.code,
    message: err.rawMessage,
    reason: info?.reason ?? "",
    metadata: info?.metadata ?? {},
    fieldViolations: err.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations),
    retryDelayMs: retry === undefined ? undefined : Number(retry.seconds) * 1000 + retry.nanos / 1e6,
  };
}
