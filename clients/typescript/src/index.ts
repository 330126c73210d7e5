export type * from "./contract.js";
export { CALL_BACKOFF, type ClientOptions, MemvaultClient, type StampedMessage, stamped } from "./client.js";
export { type ErrorKind, MemvaultError, MemvaultTimeout, errorForStatus, errorFromRpc, isTransient } from "./errors.js";
export { type AgentContext, type Delivery, LazyMemory, type LazyMemoryOptions, type MemoryView, QUEUE_BACKOFF } from "./lazy.js";
export type { AgentStorage, SqlValue, ViewMessage } from "./outbox.js";
export { type Backoff, type Clockwork, REAL_TIME, backoffDelay } from "./retry.js";
export { type FactSearchOptions, type Fetch, type HttpOptions, HttpTransport, RpcTransport, type Transport } from "./transports.js";
