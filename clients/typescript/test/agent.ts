import { DurableObject } from "cloudflare:workers";
import { type Backoff, LazyMemory, MemvaultClient } from "../src/index.js";
import { Network } from "./network.js";

// Short waits, so a test sees several rounds of retries in a second or two.
export const CALLS: Backoff = { attempts: 2, baseSeconds: 0.02, maxSeconds: 0.05 };
export const QUEUE: Backoff = { attempts: 4, baseSeconds: 0.05, maxSeconds: 0.2 };

/** A Durable Object agent holding a LazyMemory for its conversation (its own id is the session),
 * reaching memvault through a network the test can break. */
export class TestAgent extends DurableObject<Cloudflare.Env> {
  readonly network = new Network();
  readonly memory: LazyMemory;
  readonly sessionId: string;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.sessionId = `agent-${ctx.id.toString().slice(0, 16)}`;
    const client = MemvaultClient.overHttp({ baseUrl: env.MEMVAULT_URL, memoryKey: env.MEMVAULT_KEY, fetch: this.network.fetch },
      { timeoutSeconds: 5, backoff: CALLS });
    this.memory = new LazyMemory(client, ctx, { sessionId: this.sessionId, backoff: QUEUE, deliveryBudgetSeconds: 0.5 });
  }

  /** The memvault tables in this agent's storage. */
  tables(): string[] {
    return this.ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE name LIKE 'memvault_%' ORDER BY name")
      .toArray().map((row) => String(row["name"]));
  }

  queuedRows(): number {
    return Number(this.ctx.storage.sql.exec("SELECT COUNT(*) AS n FROM memvault_outbox").one()["n"]);
  }
}

export default {
  fetch(): Response {
    return new Response("memvault client tests");
  },
};
