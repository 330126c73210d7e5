import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MemvaultClient, type MemoryView } from "../src/index.js";
import type { TestAgent } from "./agent.js";

const memvault = (): MemvaultClient => MemvaultClient.overHttp({ baseUrl: env.MEMVAULT_URL, memoryKey: env.MEMVAULT_KEY });

function agent(): DurableObjectStub<TestAgent> {
  return env.AGENT.get(env.AGENT.newUniqueId());
}

async function stored(sessionId: string): Promise<string[]> {
  const page = await memvault().get(sessionId, { limit: 50 });
  return [...page.items].reverse().map((m) => m.content);
}

/** Poll until ``check`` holds, for events that happen in the background (a fetch, a flush). */
async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, seconds = 30): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const found = await check();
    if (found) {
      return found;
    }
    if (Date.now() > deadline) {
      throw new Error(`gave up waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("LazyMemory in a Durable Object", () => {
  it("does nothing at construction and answers get() at once while memvault is slow", async () => {
    const stub = agent();
    await runInDurableObject(stub, async (instance: TestAgent) => {
      expect(instance.network.sent).toEqual([]);
      expect(instance.tables()).toEqual([]); // not even its tables
      instance.network.delaySeconds = 2;
      const first = instance.memory.get();
      expect(first).toEqual({ messages: [], fresh: false, degraded: false, queued: 0 });
      const waited = await instance.memory.fresh(0.05); // a short wait, then what the agent holds
      expect(waited.fresh).toBe(false);
    });
  });

  it("queues saves in the agent's SQLite and drops them only once memvault acknowledged them", async () => {
    const stub = agent();
    const sessionId = await runInDurableObject(stub, async (instance: TestAgent) => {
      instance.network.down = true;
      const ids = instance.memory.save([{ role: "user", content: "First: the boiler was serviced in May." }]);
      instance.memory.save([{ role: "user", content: "Second: the gas meter is read on the 3rd." }]);
      expect(ids[0]).toMatch(/^[0-9a-f]{32}$/);
      expect(instance.queuedRows()).toBe(2);
      const delivery = await instance.memory.flush();
      expect(delivery).toMatchObject({ delivered: 0, queued: 2, error: "UpstreamUnavailable" });
      expect(instance.queuedRows()).toBe(2);
      const view = instance.memory.get();
      expect(view.messages.map((m) => m.content)).toEqual(["First: the boiler was serviced in May.",
        "Second: the gas meter is read on the 3rd."]);
      expect(view.queued).toBe(2);
      instance.network.down = false;
      const back = await instance.memory.flush();
      expect(back).toMatchObject({ delivered: 2, queued: 0, refused: 0, error: null });
      expect(instance.queuedRows()).toBe(0);
      return instance.sessionId;
    });
    expect(await stored(sessionId)).toEqual(["First: the boiler was serviced in May.", "Second: the gas meter is read on the 3rd."]);
  });

  it("reads degraded while memvault is down, and fresh once it is back", async () => {
    const stub = agent();
    await runInDurableObject(stub, async (instance: TestAgent) => {
      await memvault().save(instance.sessionId, [{ role: "user", content: "Written by another device." }]);
      instance.network.down = true;
      instance.memory.get();
      const down = await eventually<MemoryView>("a failed fetch", async () => {
        const view = instance.memory.get();
        return view.degraded ? view : undefined;
      });
      expect(down.messages).toEqual([]);
      instance.network.down = false;
      const back = await eventually<MemoryView>("a fetch after the wait", async () => {
        const view = instance.memory.get();
        return view.fresh ? view : undefined;
      });
      expect(back.degraded).toBe(false);
      expect(back.messages.map((m) => m.content)).toEqual(["Written by another device."]);
    });
  });

  it("sends the queue an evicted agent left, in order, from the next instance's first get()", async () => {
    const stub = agent();
    const sessionId = await runInDurableObject(stub, async (instance: TestAgent) => {
      instance.network.down = true;
      for (const n of [1, 2, 3]) {
        instance.memory.save([{ role: "user", content: `Turn ${n} said while memvault was down.` }]);
      }
      await instance.memory.flush();
      return instance.sessionId;
    });
    await evictDurableObject(stub);
    expect(await stored(sessionId)).toEqual([]);
    const view = await runInDurableObject(stub, async (instance: TestAgent) => {
      expect(instance.network.sent).toEqual([]);
      const first = instance.memory.get(); // the new instance's network is up
      await instance.memory.flush();
      return first;
    });
    expect(view.queued).toBe(3);
    expect(view.messages.map((m) => m.content)).toHaveLength(3);
    expect(await stored(sessionId)).toEqual(["Turn 1 said while memvault was down.", "Turn 2 said while memvault was down.",
      "Turn 3 said while memvault was down."]);
  });

  it("sets aside a save memvault refuses for good and delivers the ones after it", async () => {
    const stub = agent();
    const sessionId = await runInDurableObject(stub, async (instance: TestAgent) => {
      instance.network.down = true;
      instance.memory.save([{ role: "user", content: "Kept before." }]);
      instance.memory.save([{ role: "user", content: "Refused.", id: "x".repeat(201) }], { batch: "odd" });
      instance.memory.save([{ role: "user", content: "Kept after." }]);
      await instance.memory.flush();
      instance.network.down = false;
      const delivery = await instance.memory.flush();
      expect(delivery).toMatchObject({ delivered: 2, refused: 1, queued: 0 });
      expect(instance.memory.refusedCount()).toBe(1);
      return instance.sessionId;
    });
    expect(await stored(sessionId)).toEqual(["Kept before.", "Kept after."]);
  });

  it("delivers a save whose answer was lost once, under the id it was given before the first try", async () => {
    const stub = agent();
    const [sessionId, ids] = await runInDurableObject(stub, async (instance: TestAgent) => {
      instance.network.loseAnswers = 1;
      const saved = instance.memory.save([{ role: "user", content: "Said once, sent twice." }]);
      expect(await instance.memory.flush()).toMatchObject({ delivered: 1, queued: 0 });
      return [instance.sessionId, saved] as const;
    });
    const page = await memvault().get(sessionId);
    expect(page.items.map((m) => m.id)).toEqual(ids);
  });
});
