import type {
  FactsWritten,
  ForgetMemoryOptions,
  ForgetReceipt,
  FoundFacts,
  GetMemoryOptions,
  JsonObject,
  MemoryPage,
  MemvaultRpc,
  MessageIn,
  SearchMemoryOptions,
  SearchResult,
  StoreReceipt,
  WriteFactsIn,
} from "./contract.js";
import { type Backoff, type Clockwork, REAL_TIME, retrying } from "./retry.js";
import { type FactSearchOptions, type HttpOptions, HttpTransport, RpcTransport, type Transport } from "./transports.js";

export const CALL_BACKOFF: Backoff = { attempts: 3, baseSeconds: 0.1, maxSeconds: 1.0 };

export interface ClientOptions {
  /** How long one try may take (default 10 s). */
  readonly timeoutSeconds?: number;
  readonly backoff?: Backoff;
  readonly clockwork?: Clockwork;
}

/** A message ready to be sent: its id and timestamp fixed. */
export type StampedMessage = MessageIn & { id: string; timestamp: number | string };

/** The messages with an id and a timestamp each (the caller's own, where given). */
export function stamped(messages: readonly MessageIn[], now: number): StampedMessage[] {
  return messages.map((message) => ({
    ...message,
    id: message.id === undefined || message.id === null || message.id === "" ? crypto.randomUUID().replaceAll("-", "") : String(message.id),
    timestamp: message.timestamp ?? now,
  }));
}

/** memvault's client interface over one transport, each call bounded by a timeout and tried again
 * with backoff while it fails in a passing way.
 *
 * Every call is safe to repeat: reads are, and a save is made so before its first try — each
 * message gets its id and timestamp here, so a save whose answer was lost stores nothing twice when
 * it is sent again (memvault stores an id once) and keeps the moment it was said. */
export class MemvaultClient {
  private readonly timeout: number;
  private readonly backoff: Backoff;
  readonly clockwork: Clockwork;

  constructor(private readonly transport: Transport, options: ClientOptions = {}) {
    this.timeout = options.timeoutSeconds ?? 10;
    this.backoff = options.backoff ?? CALL_BACKOFF;
    this.clockwork = options.clockwork ?? REAL_TIME;
  }

  /** Over a service binding to memvault's Worker, whose props name the memory key. */
  static overBinding(binding: MemvaultRpc, options: ClientOptions & { brainToken?: string } = {}): MemvaultClient {
    return new MemvaultClient(new RpcTransport(binding, options.brainToken), options);
  }

  /** Over memvault's HTTP API with an ``mk_`` key. */
  static overHttp(http: HttpOptions, options: ClientOptions = {}): MemvaultClient {
    return new MemvaultClient(new HttpTransport(http), options);
  }

  private call<T>(run: () => Promise<T>): Promise<T> {
    return retrying(run, this.timeout, this.backoff, this.clockwork);
  }

  stamp(messages: readonly MessageIn[]): StampedMessage[] {
    return stamped(messages, this.clockwork.now());
  }

  /** One page of a session's messages (the core vault's without one), newest first. */
  get(sessionId: string | null = null, options: GetMemoryOptions = {}): Promise<MemoryPage> {
    return this.call(() => this.transport.getMemory(sessionId, options));
  }

  /** Store messages in order; answers as ``POST /v1/memory`` does (``message_ids``, …). */
  save(sessionId: string | null, messages: readonly MessageIn[], metadata: JsonObject | null = null): Promise<StoreReceipt> {
    const ready = this.stamp(messages);
    return this.call(() => this.transport.saveMemory(sessionId, ready, metadata));
  }

  /** The best items of the key's memory for ``query``: ``{items, tokens, metrics}``. */
  search(query: string, options: SearchMemoryOptions = {}): Promise<SearchResult> {
    return this.call(() => this.transport.searchMemory(query, options));
  }

  /** Forget messages by id, in every vault of the key or in one session's. */
  forget(ids: readonly string[], options: ForgetMemoryOptions = {}): Promise<ForgetReceipt> {
    return this.call(() => this.transport.forgetMemory([...ids], options));
  }

  /** Write facts to the brain with this client's brain credential (idempotent by source and text). */
  remember(input: WriteFactsIn): Promise<FactsWritten> {
    return this.call(() => this.transport.writeFacts(input));
  }

  /** Brain facts matching a query, as this client's brain credential may read them. */
  searchFacts(query: string, options: FactSearchOptions = {}): Promise<FoundFacts> {
    return this.call(() => this.transport.searchFacts(query, options));
  }
}
