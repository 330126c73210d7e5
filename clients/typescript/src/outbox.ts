import type { JsonObject } from "./contract.js";
import type { StampedMessage } from "./client.js";

/** A message as the agent keeps it in its view: one it saved, or one memvault's page showed. */
export interface ViewMessage {
  readonly id: string;
  readonly role: string;
  readonly content: string;
  readonly timestamp: number | string;
  readonly model?: string | null;
  readonly metadata?: JsonObject | null;
}

export type SqlValue = ArrayBuffer | string | number | null;

/** The part of a Durable Object's storage the queue uses (``ctx.storage`` is one). */
export interface AgentStorage {
  readonly sql: { exec(query: string, ...bindings: SqlValue[]): { toArray(): Record<string, SqlValue>[] } };
  transactionSync<T>(closure: () => T): T;
}

export interface QueuedSave {
  readonly seqs: readonly number[];
  readonly sessionId: string | null;
  readonly messages: readonly StampedMessage[];
  readonly metadata: JsonObject | null;
}

const TABLES = [
  `CREATE TABLE IF NOT EXISTS memvault_outbox (
    seq INTEGER PRIMARY KEY, session TEXT NOT NULL, messages TEXT NOT NULL, metadata TEXT, queued_at REAL NOT NULL)`,
  "CREATE TABLE IF NOT EXISTS memvault_views (session TEXT PRIMARY KEY, messages TEXT NOT NULL)",
  `CREATE TABLE IF NOT EXISTS memvault_refused (
    seq INTEGER PRIMARY KEY, session TEXT NOT NULL, messages TEXT NOT NULL, metadata TEXT, reason TEXT NOT NULL)`,
];
const SCAN = 100;

// The key's core vault has no session id; an empty session id is never a valid one.
function sessionKey(sessionId: string | null): string {
  return sessionId ?? "";
}

function text(value: SqlValue | undefined): string {
  if (typeof value !== "string") {
    throw new TypeError("the agent's memory tables hold text where text was expected");
  }
  return value;
}

/** The agent's own storage for ``LazyMemory``: saves queued until memvault acknowledges them, the
 * last view of each session, and saves memvault refused for good. It lives in the Durable Object's
 * SQLite storage, so a queued save survives the agent's eviction and is sent on its next start.
 * Nothing runs at construction: the tables are created on first use. */
export class Outbox {
  private ready = false;

  constructor(private readonly storage: AgentStorage) {}

  private rows(query: string, ...bindings: SqlValue[]): Record<string, SqlValue>[] {
    if (!this.ready) {
      for (const statement of TABLES) {
        this.storage.sql.exec(statement);
      }
      this.ready = true;
    }
    return this.storage.sql.exec(query, ...bindings).toArray();
  }

  /** Queue a save and keep the session's view, in one transaction. */
  queue(sessionId: string | null, messages: readonly StampedMessage[], metadata: JsonObject | null, now: number,
    view: readonly ViewMessage[]): void {
    this.storage.transactionSync(() => {
      this.rows(
        "INSERT INTO memvault_outbox (seq, session, messages, metadata, queued_at) " +
          "VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM memvault_outbox), ?, ?, ?, ?)",
        sessionKey(sessionId), JSON.stringify(messages), metadata === null ? null : JSON.stringify(metadata), now,
      );
      this.keepView(sessionId, view);
    });
  }

  /** The oldest queued saves that go out as one call: consecutive, of one session and one metadata
   * object, at most ``maxMessages`` messages (the first save whole, however long). */
  nextBatch(maxMessages: number): QueuedSave | null {
    const rows = this.rows(`SELECT seq, session, messages, metadata FROM memvault_outbox ORDER BY seq LIMIT ${SCAN}`);
    const first = rows[0];
    if (first === undefined) {
      return null;
    }
    const seqs: number[] = [];
    const messages: StampedMessage[] = [];
    for (const row of rows) {
      if (row["session"] !== first["session"] || row["metadata"] !== first["metadata"]) {
        break;
      }
      const more = JSON.parse(text(row["messages"])) as StampedMessage[];
      if (seqs.length > 0 && messages.length + more.length > maxMessages) {
        break;
      }
      seqs.push(Number(row["seq"]));
      messages.push(...more);
    }
    const metadata = first["metadata"];
    return {
      seqs,
      sessionId: text(first["session"]) || null,
      messages,
      metadata: metadata === null || metadata === undefined ? null : (JSON.parse(text(metadata)) as JsonObject),
    };
  }

  pendingCount(): number {
    return Number(this.rows("SELECT COUNT(*) AS n FROM memvault_outbox")[0]?.["n"] ?? 0);
  }

  pendingMessages(sessionId: string | null): StampedMessage[] {
    const rows = this.rows("SELECT messages FROM memvault_outbox WHERE session = ? ORDER BY seq", sessionKey(sessionId));
    return rows.flatMap((row) => JSON.parse(text(row["messages"])) as StampedMessage[]);
  }

  delivered(batch: QueuedSave): void {
    this.storage.transactionSync(() => this.drop(batch.seqs));
  }

  /** Set aside saves memvault will never take (bad input, a conflicting id), so those after them
   * are not held back; they stay here for the bot's operator to look at. */
  refused(batch: QueuedSave, reason: string): void {
    this.storage.transactionSync(() => {
      for (const seq of batch.seqs) {
        this.rows(
          "INSERT INTO memvault_refused (seq, session, messages, metadata, reason) " +
            "SELECT seq, session, messages, metadata, ? FROM memvault_outbox WHERE seq = ?",
          reason, seq,
        );
      }
      this.drop(batch.seqs);
    });
  }

  refusedCount(): number {
    return Number(this.rows("SELECT COUNT(*) AS n FROM memvault_refused")[0]?.["n"] ?? 0);
  }

  view(sessionId: string | null): ViewMessage[] | null {
    const found = this.rows("SELECT messages FROM memvault_views WHERE session = ?", sessionKey(sessionId))[0];
    return found === undefined ? null : (JSON.parse(text(found["messages"])) as ViewMessage[]);
  }

  keepView(sessionId: string | null, view: readonly ViewMessage[]): void {
    this.rows(
      "INSERT INTO memvault_views (session, messages) VALUES (?, ?) " +
        "ON CONFLICT (session) DO UPDATE SET messages = excluded.messages",
      sessionKey(sessionId), JSON.stringify(view),
    );
  }

  private drop(seqs: readonly number[]): void {
    for (const seq of seqs) {
      this.rows("DELETE FROM memvault_outbox WHERE seq = ?", seq);
    }
  }
}
