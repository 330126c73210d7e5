import type { ErrorStatuses, TransientStatus } from "./contract.js";

/** A kind of failure memvault names (its domain errors), or one met on the way to it. */
export type ErrorKind = keyof ErrorStatuses;

// Typed by the generated contract: a kind memvault adds or drops fails the build until it is here.
const STATUSES: ErrorStatuses = {
  MemvaultError: 500,
  InvalidInput: 400,
  InvalidField: 422,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  WriteRaced: 409,
  PayloadTooLarge: 413,
  StorageUnavailable: 503,
  TransientStorageError: 503,
  StorageFull: 507,
  UpstreamUnavailable: 502,
  NotConfigured: 503,
  Undecryptable: 500,
  RateLimited: 429,
};

const TRANSIENT: Record<TransientStatus, true> = { 408: true, 425: true, 429: true, 500: true, 502: true, 503: true, 504: true };

function isKind(name: string): name is ErrorKind {
  return Object.prototype.hasOwnProperty.call(STATUSES, name);
}

/** memvault refused or failed a call: ``kind`` is its domain error's name, ``status`` the HTTP
 * status it is answered with on every surface. */
export class MemvaultError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;

  constructor(kind: ErrorKind, message: string, status: number = STATUSES[kind]) {
    super(message);
    this.name = "MemvaultError";
    this.kind = kind;
    this.status = status;
  }
}

/** A call that did not answer within the client's timeout. */
export class MemvaultTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MemvaultTimeout";
  }
}

/** Whether a failure may pass if the same call is sent again: a timeout, or a status that says
 * "not now" (rate limited, a server or gateway failing). Refusals are final. */
export function isTransient(error: unknown): boolean {
  if (error instanceof MemvaultTimeout) {
    return true;
  }
  return error instanceof MemvaultError && Object.prototype.hasOwnProperty.call(TRANSIENT, error.status);
}

/** The error an HTTP answer stands for: memvault's envelope names the message; a status no kind
 * claims keeps its number. */
export function errorForStatus(status: number, message: string): MemvaultError {
  const order: ErrorKind[] = ["InvalidInput", "Unauthorized", "Forbidden", "NotFound", "Conflict", "PayloadTooLarge",
    "InvalidField", "UpstreamUnavailable", "StorageUnavailable", "StorageFull", "RateLimited"];
  const kind = order.find((name) => STATUSES[name] === status);
  return kind === undefined ? new MemvaultError("MemvaultError", message, status) : new MemvaultError(kind, message);
}

// A Python exception raised in memvault reaches the caller as an Error whose message is its
// traceback; the last "module.Class: message" line names the exception.
const LAST_EXCEPTION = /^([A-Za-z_][\w.]*): (.*)$/;
const ERRORS_MODULE = "memvault.core.errors";

/** The domain error memvault raised in an RPC call, rebuilt here; anything else (memvault crashed,
 * is not deployed or not running, the call never arrived) is memvault being unavailable. */
export function errorFromRpc(method: string, error: unknown): MemvaultError {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.trim().split("\n").reverse();
  let cause = error instanceof Error ? error.name : "unknown error";
  for (const line of lines) {
    const found = LAST_EXCEPTION.exec(line.trim());
    if (found === null) {
      continue;
    }
    const qualified = found[1] ?? "";
    const dot = qualified.lastIndexOf(".");
    const name = qualified.slice(dot + 1);
    if (qualified.slice(0, Math.max(dot, 0)) === ERRORS_MODULE && isKind(name)) {
      return new MemvaultError(name, found[2] ?? "");
    }
    cause = qualified;
    break;
  }
  // The failure's type only: its text may quote stored memory.
  return new MemvaultError("StorageUnavailable", `rpc call ${method} failed (${cause})`);
}
