import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MemvaultClient, MemvaultError, MemvaultTimeout, type MemvaultRpc, errorFromRpc } from "../src/index.js";
import { CALLS } from "./agent.js";
import { Network } from "./network.js";

function session(): string {
  return `client-${crypto.randomUUID().slice(0, 8)}`;
}

function over(network?: Network, timeoutSeconds = 5): MemvaultClient {
  const http = { baseUrl: env.MEMVAULT_URL, memoryKey: env.MEMVAULT_KEY, ...(network ? { fetch: network.fetch } : {}) };
  return MemvaultClient.overHttp(http, { timeoutSeconds, backoff: CALLS });
}

describe("MemvaultClient over HTTP, against a real memvault", () => {
  it("saves, reads, searches and forgets with an mk_ key", async () => {
    const client = over();
    const sid = session();
    const saved = await client.save(sid, [
      { role: "user", content: "The spare key is under the blue flowerpot.", metadata: { channel: "test" } },
      { role: "assistant", content: "Noted.", memory: false },
    ]);
    expect(saved.messages_accepted).toBe(1);
    expect(saved.message_ids[1]).toBeNull();
    const page = await client.get(sid, { limit: 10 });
    expect(page.items.map((m) => [m.role, m.content, m.metadata])).toEqual([
      ["user", "The spare key is under the blue flowerpot.", { channel: "test" }]]);
    expect(page.items[0]?.id).toBe(saved.message_ids[0]);
    const found = await client.search("where is the spare key?", { sessionId: sid, limit: 3 });
    expect(found.items[0]?.text).toBe("The spare key is under the blue flowerpot.");
    const id = String(saved.message_ids[0]);
    expect(await client.forget([id, "never-stored"], { sessionId: sid })).toEqual({ forgotten: [id], not_found: ["never-stored"] });
    expect((await client.get(sid)).items).toEqual([]);
  });

  it("stamps ids and timestamps before the first try, so a save whose answer was lost is stored once", async () => {
    const network = new Network();
    const sid = session();
    network.loseAnswers = 1;
    const said = 1_700_000_000;
    const saved = await over(network).save(sid, [{ role: "user", content: "Pay the plumber on Friday.", timestamp: said }]);
    expect(network.sent).toEqual(["POST /v1/memory", "POST /v1/memory"]);
    expect(saved.messages_accepted).toBe(0); // the second try found the message stored by the first
    const items = (await over().get(sid)).items;
    expect(items.map((m) => [m.id, m.timestamp])).toEqual([[saved.message_ids[0], said]]);
  });

  it("takes a refusal as final and names it: one try, the field in the message, nothing stored", async () => {
    const network = new Network();
    const sid = session();
    const refused = over(network).save(sid, [{ role: "robot" as "user", content: "beep" }]);
    await expect(refused).rejects.toMatchObject({ name: "MemvaultError", kind: "InvalidField", status: 422 });
    await expect(refused).rejects.toThrow(/role/);
    expect(network.sent).toHaveLength(1);
    expect((await over().get(sid)).items).toEqual([]);
  });

  it("tries again after an answer that is not memvault's, and after a timeout", async () => {
    const garbled = new Network();
    garbled.garble = 1;
    const sid = session();
    await over(garbled).save(sid, [{ role: "user", content: "Garbled once." }]);
    expect(garbled.sent).toEqual(["POST /v1/memory", "POST /v1/memory"]);

    const slow = new Network();
    slow.delaySeconds = 1;
    const timedOut = over(slow, 0.2).get(sid);
    await expect(timedOut).rejects.toBeInstanceOf(MemvaultTimeout);
    expect(slow.sent).toHaveLength(CALLS.attempts);
  });

  it("answers Unauthorized for a key memvault never issued, without trying again", async () => {
    const network = new Network();
    const client = MemvaultClient.overHttp({ baseUrl: env.MEMVAULT_URL, memoryKey: "mk_not-a-key", fetch: network.fetch },
      { backoff: CALLS });
    await expect(client.get()).rejects.toMatchObject({ kind: "Unauthorized", status: 401 });
    expect(network.sent).toHaveLength(1);
  });

  it("fails a brain call at once when it was given no brain credential", async () => {
    const network = new Network();
    await expect(over(network).searchFacts("anything")).rejects.toMatchObject({ kind: "Unauthorized" });
    expect(network.sent).toEqual([]);
  });
});

describe("MemvaultClient over a service binding", () => {
  // The binding's errors as workerd hands them over: a Python exception raised in memvault arrives
  // as an Error whose message is its traceback (the workerd tier checks it against the real Worker).
  const traceback = (last: string): Error => new Error(`Traceback (most recent call last):\n  File "entry.py", line 40\n${last}`);

  function binding(failure: Error, calls: string[]): MemvaultRpc {
    const fail = (name: string) => (): Promise<never> => {
      calls.push(name);
      return Promise.reject(failure);
    };
    return {
      getMemory: fail("getMemory"), saveMemory: fail("saveMemory"), searchMemory: fail("searchMemory"),
      forgetMemory: fail("forgetMemory"), get_memory: fail("get_memory"), save_memory: fail("save_memory"),
      search_memory: fail("search_memory"), forget_memory: fail("forget_memory"), brain_search: fail("brain_search"),
      brain_recall: fail("brain_recall"), brain_write: fail("brain_write"),
      brain_register_skill: fail("brain_register_skill"), brain_get_skill: fail("brain_get_skill"),
      brain_propose_skill: fail("brain_propose_skill"), brain_skill_proposals: fail("brain_skill_proposals"),
      brain_confirm_skill_proposal: fail("brain_confirm_skill_proposal"),
      brain_reject_skill_proposal: fail("brain_reject_skill_proposal"), brain_retire: fail("brain_retire"),
    };
  }

  it("rebuilds memvault's domain error and does not repeat a refusal", async () => {
    const calls: string[] = [];
    const failure = traceback("memvault.core.errors.InvalidField: messages[0].role must be one of user, assistant");
    const client = MemvaultClient.overBinding(binding(failure, calls), { backoff: CALLS });
    await expect(client.save("s", [{ role: "user", content: "x" }])).rejects.toMatchObject({ kind: "InvalidField", status: 422 });
    expect(calls).toEqual(["saveMemory"]);
  });

  it("takes any other failure as memvault being unavailable, tries again, and never quotes its text", async () => {
    const calls: string[] = [];
    const failure = traceback("KeyError: 'the secret stored text'");
    const client = MemvaultClient.overBinding(binding(failure, calls), { backoff: CALLS });
    const failed = client.get("s");
    await expect(failed).rejects.toMatchObject({ kind: "StorageUnavailable", status: 503 });
    await expect(failed).rejects.not.toThrow(/secret stored text/);
    expect(calls).toHaveLength(CALLS.attempts);
    expect(errorFromRpc("getMemory", new Error("Couldn't find a local dev session"))).toBeInstanceOf(MemvaultError);
  });

  it("sends no brain call without a brain credential", async () => {
    const calls: string[] = [];
    const client = MemvaultClient.overBinding(binding(new Error("unused"), calls));
    await expect(client.remember({ content: "x" })).rejects.toMatchObject({ kind: "Unauthorized" });
    expect(calls).toEqual([]);
  });
});
