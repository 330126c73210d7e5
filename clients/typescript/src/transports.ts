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
  SearchFacts,
  SearchMemoryOptions,
  SearchResult,
  StoreReceipt,
  WriteFactsIn,
} from "./contract.js";
import { MemvaultError, errorForStatus, errorFromRpc } from "./errors.js";

/** How a client reaches memvault. Both transports answer with memvault's results as they are (the
 * same on every surface) and fail with ``MemvaultError``, so nothing above them knows which one it has. */
export interface Transport {
  getMemory(sessionId: string | null, options: GetMemoryOptions): Promise<MemoryPage>;
  saveMemory(sessionId: string | null, messages: MessageIn[], metadata: JsonObject | null): Promise<StoreReceipt>;
  searchMemory(query: string, options: SearchMemoryOptions): Promise<SearchResult>;
  forgetMemory(ids: string[], options: ForgetMemoryOptions): Promise<ForgetReceipt>;
  writeFacts(input: WriteFactsIn): Promise<FactsWritten>;
  searchFacts(query: string, options: FactSearchOptions): Promise<FoundFacts>;
}

/** What a brain search takes beside its query (as the RPC method does). */
export type FactSearchOptions = Pick<SearchFacts, "mode" | "limit">;

function given<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null)) as Partial<T>;
}

function noCredential(): MemvaultError {
  return new MemvaultError("Unauthorized", "this client was given no credential for that call");
}

/** A service binding to memvault's Worker: the memory key is the one the binding's props name
 * (``memoryKeyId``); a brain credential, if the bot has one, travels with each brain call. */
export class RpcTransport implements Transport {
  constructor(private readonly binding: MemvaultRpc, private readonly brainToken?: string) {}

  private async call<T>(method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw error instanceof MemvaultError ? error : errorFromRpc(method, error);
    }
  }

  getMemory(sessionId: string | null, options: GetMemoryOptions): Promise<MemoryPage> {
    return this.call("getMemory", () => this.binding.getMemory(sessionId, given(options)));
  }

  saveMemory(sessionId: string | null, messages: MessageIn[], metadata: JsonObject | null): Promise<StoreReceipt> {
    return this.call("saveMemory", () => this.binding.saveMemory(sessionId, messages, metadata));
  }

  searchMemory(query: string, options: SearchMemoryOptions): Promise<SearchResult> {
    return this.call("searchMemory", () => this.binding.searchMemory(query, given(options)));
  }

  forgetMemory(ids: string[], options: ForgetMemoryOptions): Promise<ForgetReceipt> {
    return this.call("forgetMemory", () => this.binding.forgetMemory(ids, given(options)));
  }

  writeFacts(input: WriteFactsIn): Promise<FactsWritten> {
    return this.call("brain_write", () => this.binding.brain_write(this.token(), input));
  }

  searchFacts(query: string, options: FactSearchOptions): Promise<FoundFacts> {
    return this.call("brain_search", () => this.binding.brain_search(this.token(), query, options.mode ?? "keyword", options.limit ?? null));
  }

  private token(): string {
    if (!this.brainToken) {
      throw noCredential();
    }
    return this.brainToken;
  }
}

/** The fetch an ``HttpTransport`` sends with (the global one, unless a test or a proxy hands in another). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpOptions {
  /** memvault's address, e.g. ``https://memvault.example.workers.dev``. */
  readonly baseUrl: string;
  /** The memory key's secret (``mk_…``). */
  readonly memoryKey: string;
  readonly brainToken?: string;
  readonly fetch?: Fetch;
}

/** memvault's HTTP API: the memory key is this transport's bearer key. */
export class HttpTransport implements Transport {
  private readonly base: string;
  private readonly send: Fetch;

  constructor(private readonly options: HttpOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.send = options.fetch ?? ((input, init) => fetch(input, init));
  }

  private async request<T>(method: string, path: string, token: string | undefined, body?: object): Promise<T> {
    if (!token) {
      throw noCredential();
    }
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response: Response;
    try {
      response = await this.send(this.base + path, init);
    } catch (error) {
      throw new MemvaultError("UpstreamUnavailable", `memvault could not be reached (${error instanceof Error ? error.name : "error"})`);
    }
    const text = await response.text();
    if (response.status >= 400) {
      const message = envelopeMessage(text);
      if (message === null) {
        // Not memvault's own answer (a proxy, a server that could not read the request): nothing
        // was refused on its merits, so the call may pass when it is sent again.
        throw new MemvaultError("UpstreamUnavailable", `memvault's address answered ${response.status} without memvault's error body`);
      }
      throw errorForStatus(response.status, message);
    }
    return JSON.parse(text) as T;
  }

  getMemory(sessionId: string | null, options: GetMemoryOptions): Promise<MemoryPage> {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries({ session_id: sessionId, limit: options.limit, offset: options.offset })) {
      if (value !== undefined && value !== null) {
        query.set(name, String(value));
      }
    }
    return this.request("GET", `/v1/memory?${query.toString()}`, this.options.memoryKey);
  }

  saveMemory(sessionId: string | null, messages: MessageIn[], metadata: JsonObject | null): Promise<StoreReceipt> {
    return this.request("POST", "/v1/memory", this.options.memoryKey, given({ messages, metadata, session_id: sessionId }));
  }

  searchMemory(query: string, options: SearchMemoryOptions): Promise<SearchResult> {
    const body = given({ query, limit: options.limit, budget_tokens: options.budgetTokens, now: options.now,
      session_id: options.sessionId });
    return this.request("POST", "/v1/memory/search", this.options.memoryKey, body);
  }

  async forgetMemory(ids: string[], options: ForgetMemoryOptions): Promise<ForgetReceipt> {
    // The HTTP API forgets one message a request.
    const receipt: { forgotten: string[]; not_found: string[] } = { forgotten: [], not_found: [] };
    const sessionId = options.sessionId;
    const session = sessionId === undefined || sessionId === null ? "" : `?${new URLSearchParams({ session_id: String(sessionId) }).toString()}`;
    for (const id of new Set(ids)) {
      const one = await this.request<ForgetReceipt>("DELETE", `/v1/memory/${encodeURIComponent(id)}${session}`, this.options.memoryKey);
      receipt.forgotten.push(...one.forgotten);
      receipt.not_found.push(...one.not_found);
    }
    return receipt;
  }

  writeFacts(input: WriteFactsIn): Promise<FactsWritten> {
    return this.request("POST", "/v1/brain/facts", this.options.brainToken, input);
  }

  searchFacts(query: string, options: FactSearchOptions): Promise<FoundFacts> {
    return this.request("POST", "/v1/brain/facts/search", this.options.brainToken, given({ query, ...options }));
  }
}

function envelopeMessage(text: string): string | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error: unknown = parsed.error;
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
        return error.message;
      }
    }
  } catch {
    return null;
  }
  return null;
}
