// A chat bot Worker that remembers, on memvault: one ChatAgent Durable Object per chat holds a
// LazyMemory, so the bot answers at once whatever memvault is doing, and every turn reaches
// memvault in the background, in order, once it can.
//   POST /chat/<chat id>         {"text": "..."}  -> {"reply": "...", "memory": {...}}
//   GET  /chat/<chat id>/memory  [?wait=seconds]  -> what the agent holds of the chat
import { DurableObject } from "cloudflare:workers";
import { LazyMemory, MemvaultClient, type MemoryView, type MemvaultRpc } from "@memvault/client";

export interface Env {
  /** memvault's Worker; the binding's props name the memory key (wrangler.jsonc). */
  MEMVAULT: MemvaultRpc;
  CHAT_AGENT: DurableObjectNamespace<ChatAgent>;
  /** How soon the agent tries again while saves wait for memvault (seconds). */
  MEMVAULT_RETRY_SECONDS?: string;
}

interface Reply {
  reply: string;
  memory: MemoryState;
}

interface MemoryState {
  fresh: boolean;
  degraded: boolean;
  queued: number;
  refused: number;
  messages: { role: string; content: string }[];
}

export class ChatAgent extends DurableObject<Env> {
  private readonly client: MemvaultClient;
  private readonly sessionId: string;
  private memory!: LazyMemory;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.client = MemvaultClient.overBinding(env.MEMVAULT, { timeoutSeconds: 5 });
    this.sessionId = `chat-${ctx.id.name ?? ctx.id.toString()}`;
    // As an Agents SDK agent starts: inside blockConcurrencyWhile, which must never wait on memvault.
    // LazyMemory's constructor does no I/O, so this settles at once whatever memvault is doing.
    void ctx.blockConcurrencyWhile(async () => {
      this.memory = new LazyMemory(this.client, ctx, { sessionId: this.sessionId });
    });
  }

  async chat(text: string): Promise<Reply> {
    const reply = text.trim().endsWith("?") ? await this.answer(text) : "Noted.";
    this.memory.save([{ role: "user", content: text }, { role: "assistant", content: reply }]);
    this.retryLater();
    return { reply, memory: this.state(this.memory.get()) };
  }

  async view(waitSeconds: number): Promise<MemoryState> {
    return this.state(waitSeconds > 0 ? await this.memory.fresh(waitSeconds) : this.memory.get());
  }

  /** Saves still waiting for memvault are sent again from an alarm, without waiting for the next message. */
  override async alarm(): Promise<void> {
    this.memory.get();
    await this.memory.flush();
    this.retryLater();
  }

  private async answer(question: string): Promise<string> {
    const recent = this.memory.get();
    try {
      const found = await this.client.search(question, { sessionId: this.sessionId, limit: 1 });
      const best = found.items[0];
      return best ? `From memory: ${best.text}` : "I have nothing on that yet.";
    } catch {
      const said = recent.messages.filter((m) => m.role === "user").length;
      return `My memory is unreachable right now; I have ${said} of your recent messages here and will remember this once it is back.`;
    }
  }

  private retryLater(): void {
    const seconds = Number(this.env.MEMVAULT_RETRY_SECONDS ?? "30");
    this.ctx.waitUntil(this.memory.flush().then(async (delivery) => {
      if (delivery.queued > 0 && (await this.ctx.storage.getAlarm()) === null) {
        await this.ctx.storage.setAlarm(Date.now() + seconds * 1000);
      }
    }));
  }

  private state(view: MemoryView): MemoryState {
    return {
      fresh: view.fresh,
      degraded: view.degraded,
      queued: view.queued,
      refused: this.memory.refusedCount(),
      messages: view.messages.map((m) => ({ role: m.role, content: m.content })),
    };
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, kind, chatId, what] = url.pathname.split("/");
    if (kind !== "chat" || !chatId) {
      return new Response("not found", { status: 404 });
    }
    const agent = env.CHAT_AGENT.getByName(decodeURIComponent(chatId));
    if (request.method === "POST" && what === undefined) {
      const body: unknown = await request.json().catch(() => null);
      const text = typeof body === "object" && body !== null && "text" in body ? body.text : undefined;
      if (typeof text !== "string" || !text.trim()) {
        return Response.json({ error: "text must be non-empty text" }, { status: 422 });
      }
      return Response.json(await agent.chat(text));
    }
    if (request.method === "GET" && what === "memory") {
      return Response.json(await agent.view(Number(url.searchParams.get("wait") ?? "0") || 0));
    }
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
