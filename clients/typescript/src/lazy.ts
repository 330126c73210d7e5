import type { JsonObject, MessageIn } from "./contract.js";
import { type MemvaultClient, type StampedMessage } from "./client.js";
import { MemvaultError } from "./errors.js";
import { type AgentStorage, Outbox, type QueuedSave, type ViewMessage } from "./outbox.js";
import { type Backoff, type Clockwork, backoffDelay } from "./retry.js";

/** What ``LazyMemory`` needs of a Durable Object: its storage and ``waitUntil`` (``this.ctx`` is one). */
export interface AgentContext {
  readonly storage: AgentStorage;
  waitUntil(promise: Promise<unknown>): void;
}

export const QUEUE_BACKOFF: Backoff = { attempts: 4, baseSeconds: 0.5, maxSeconds: 60 };
// Statuses that will not change however often the same save is sent.
const REFUSED_FOR_GOOD = new Set([400, 409, 413, 422]);

export interface MemoryView {
  /** Oldest first. */
  readonly messages: readonly ViewMessage[];
  /** memvault's own answer, fetched since this agent started, is in it. */
  readonly fresh: boolean;
  /** memvault could not be read: this is only what the agent itself holds. */
  readonly degraded: boolean;
  /** Saves waiting for memvault's acknowledgement. */
  readonly queued: number;
}

export interface Delivery {
  /** Saves memvault acknowledged in this round. */
  readonly delivered: number;
  /** Saves still waiting. */
  readonly queued: number;
  /** Saves set aside in this round (memvault refused them for good). */
  readonly refused: number;
  /** While saves still wait: the kind of the last failure to send them. */
  readonly error: string | null;
}

export interface LazyMemoryOptions {
  /** The session vault this conversation lives in (the key's core vault without one). */
  readonly sessionId?: string | null;
  /** How many recent messages the agent keeps in its own view (default 50). */
  readonly viewSize?: number;
  /** Most messages one save call carries (default 100). */
  readonly batchMessages?: number;
  readonly backoff?: Backoff;
  /** How long one flush may keep waiting for memvault before it leaves the rest queued (default 20 s). */
  readonly deliveryBudgetSeconds?: number;
}

function kindOf(error: unknown): string {
  if (error instanceof MemvaultError) {
    return error.kind;
  }
  return error instanceof Error ? error.name : "Error";
}

/** The memory a Durable Object agent holds for one conversation, built so that memvault can never
 * stall the agent.
 *
 * - Constructing it keeps its arguments and does nothing else: no storage, no network (a Durable
 *   Object's constructor runs inside ``blockConcurrencyWhile``, and one that hangs there resets it).
 * - ``get()`` answers at once with what the agent holds (the last view it kept in its own storage,
 *   empty the first time) and schedules the fetch; once the fetch is in, ``get()`` answers with it.
 * - ``save()`` stamps the messages (id, timestamp), queues them in the agent's own storage and
 *   returns; ``flush()`` sends what is queued, in order and batched, in ``ctx.waitUntil``.
 * - A save leaves the queue only once memvault acknowledged it; a queue left by an evicted instance
 *   is sent on the next start. While memvault fails, reads answer from what the agent holds with
 *   ``degraded`` set, and saves stay queued, tried again after a growing, jittered wait; a save
 *   memvault refuses for good (bad input, a conflicting id) is set aside instead of blocking the rest. */
export class LazyMemory {
  private readonly outbox: Outbox;
  private readonly sessionId: string | null;
  private readonly viewSize: number;
  private readonly batchMessages: number;
  private readonly backoff: Backoff;
  private readonly budget: number;
  private readonly time: Clockwork;
  private view: ViewMessage[] | null = null;
  private started = false;
  private isFresh = false;
  private degraded = false;
  private fetching: Promise<void> | null = null;
  private fetchFailures = 0;
  private fetchAfter = 0;
  private savedWhileFetching: StampedMessage[] = [];
  private sendFailures = 0;
  private sendAfter = 0;
  private sendError: string | null = null;
  private delivery: Promise<Delivery> | null = null;

  constructor(private readonly client: MemvaultClient, private readonly ctx: AgentContext, options: LazyMemoryOptions = {}) {
    this.outbox = new Outbox(ctx.storage);
    this.sessionId = options.sessionId ?? null;
    this.viewSize = options.viewSize ?? 50;
    this.batchMessages = options.batchMessages ?? 100;
    this.backoff = options.backoff ?? QUEUE_BACKOFF;
    this.budget = options.deliveryBudgetSeconds ?? 20;
    this.time = client.clockwork;
  }

  /** What the agent knows of the conversation, at once; the first call (and a call after a failed
   * fetch, once its wait is over) schedules a fetch from memvault. */
  get(): MemoryView {
    const view = this.loaded();
    if (!this.started) {
      this.started = true;
      if (this.outbox.pendingCount() > 0) {
        void this.flush(); // saves an earlier instance queued and never saw acknowledged
      }
    }
    if (!this.isFresh && this.fetching === null && this.time.now() >= this.fetchAfter) {
      this.savedWhileFetching = [];
      const fetching = this.fetch().finally(() => {
        this.fetching = null;
      });
      this.fetching = fetching;
      this.ctx.waitUntil(fetching);
    }
    return { messages: [...view], fresh: this.isFresh, degraded: this.degraded, queued: this.outbox.pendingCount() };
  }

  /** ``get()`` after waiting at most ``timeoutSeconds`` for memvault's answer: for a caller that can
   * spend a short wait on fresh data; past the wait, what the agent holds is the answer. */
  async fresh(timeoutSeconds: number): Promise<MemoryView> {
    const first = this.get();
    const fetching = this.fetching;
    if (first.fresh || fetching === null) {
      return first;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutSeconds * 1000);
    });
    await Promise.race([fetching, waited]).finally(() => {
      if (timer !== undefined) {
        clearTimeout(timer);
      }
    });
    return this.get();
  }

  /** Fetch again at the next ``get()`` (another writer may have added to the conversation). */
  refresh(): void {
    this.isFresh = false;
    this.fetchAfter = 0;
  }

  /** Queue messages for memvault and start sending them in the background; returns their ids. */
  save(messages: readonly MessageIn[], metadata: JsonObject | null = null): string[] {
    const ready = this.client.stamp(messages);
    const remembered = ready.filter((message) => message.memory !== false);
    const view = this.trimmed([...this.loaded(), ...remembered]);
    this.outbox.queue(this.sessionId, ready, metadata, this.time.now(), view);
    this.view = view;
    this.savedWhileFetching.push(...remembered);
    void this.flush();
    return ready.map((message) => message.id);
  }

  /** Send every queued save in ``ctx.waitUntil``; the promise settles when this round ends (await
   * it or not). */
  flush(): Promise<Delivery> {
    if (this.delivery === null) {
      const delivery = this.deliver().finally(() => {
        this.delivery = null;
      });
      this.delivery = delivery;
      this.ctx.waitUntil(delivery);
    }
    return this.delivery;
  }

  /** Saves memvault refused for good, kept aside in the agent's storage. */
  refusedCount(): number {
    return this.outbox.refusedCount();
  }

  private loaded(): ViewMessage[] {
    if (this.view === null) {
      this.view = this.outbox.view(this.sessionId) ?? [];
    }
    return this.view;
  }

  private trimmed(messages: readonly ViewMessage[]): ViewMessage[] {
    const unique = new Map<string, ViewMessage>();
    for (const message of messages) {
      unique.delete(message.id);
      unique.set(message.id, message);
    }
    return [...unique.values()].slice(-this.viewSize);
  }

  private async fetch(): Promise<void> {
    let items: readonly ViewMessage[];
    try {
      const page = await this.client.get(this.sessionId, { limit: this.viewSize });
      items = page.items;
    } catch (error) {
      this.fetchFailures += 1;
      this.degraded = true;
      this.fetchAfter = this.time.now() + backoffDelay(this.backoff, this.fetchFailures, this.time.random);
      console.warn(`memvault read failed, answering from the agent's own view: ${kindOf(error)}`);
      return;
    }
    const fetched = [...items].reverse();
    const known = new Set(fetched.map((message) => message.id));
    // Saves memvault has not shown yet: still queued, or sent while the page was being read.
    const local = [...this.outbox.pendingMessages(this.sessionId), ...this.savedWhileFetching];
    const view = this.trimmed([...fetched, ...local.filter((message) => !known.has(message.id))]);
    this.outbox.keepView(this.sessionId, view);
    this.view = view;
    this.isFresh = true;
    this.degraded = false;
    this.fetchFailures = 0;
  }

  private async deliver(): Promise<Delivery> {
    const started = this.time.now();
    let delivered = 0;
    let refused = 0;
    for (let batch = this.outbox.nextBatch(this.batchMessages); batch !== null; batch = this.outbox.nextBatch(this.batchMessages)) {
      const wait = this.sendAfter - this.time.now();
      if (wait > 0) {
        if (this.time.now() + wait - started > this.budget) {
          break; // left queued: the next flush (or the next start) sends it
        }
        await this.time.sleep(wait);
      }
      if (await this.send(batch)) {
        delivered += batch.seqs.length;
      } else if (this.sendError === null) {
        refused += batch.seqs.length;
      }
    }
    const queued = this.outbox.pendingCount();
    return { delivered, queued, refused, error: queued > 0 ? this.sendError : null };
  }

  /** Send one batch; whether memvault acknowledged it (if not, it is either set aside for good or
   * kept queued, with the failure's kind in ``sendError``). */
  private async send(batch: QueuedSave): Promise<boolean> {
    try {
      await this.client.save(batch.sessionId, batch.messages, batch.metadata);
    } catch (error) {
      const kind = kindOf(error);
      if (error instanceof MemvaultError && REFUSED_FOR_GOOD.has(error.status)) {
        this.outbox.refused(batch, `${kind} (${error.status})`);
        console.warn(`memvault refused a queued save for good (${kind}); it is set aside`);
        this.sendError = null;
        return false;
      }
      this.sendFailures += 1;
      this.sendAfter = this.time.now() + backoffDelay(this.backoff, this.sendFailures, this.time.random);
      this.sendError = kind;
      console.warn(`memvault save failed, kept queued: ${kind}`);
      return false;
    }
    this.outbox.delivered(batch);
    this.sendFailures = 0;
    this.sendAfter = 0;
    this.sendError = null;
    return true;
  }
}
