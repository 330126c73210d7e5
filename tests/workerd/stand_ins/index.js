// Local stand-ins for the two bindings that have no local simulation, bound to memvault as service
// bindings to these entrypoints: memvault's adapters call the same method names they call on the
// real Workers AI and Vectorize bindings, with the same arguments, over RPC.
import { WorkerEntrypoint } from "cloudflare:workers";

const DIMENSION = 768;

// A deterministic bag-of-words embedding: each word adds ±1 at a hashed position, so texts that
// share words point the same way and an unrelated text is nearly orthogonal.
function embed(text) {
  const vector = new Array(DIMENSION).fill(0);
  for (const word of String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let hash = 2166136261;
    for (const char of word) {
      hash = Math.imul(hash ^ char.codePointAt(0), 16777619) >>> 0;
    }
    vector[hash % DIMENSION] += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  return norm > 0 ? vector.map((x) => x / norm) : vector;
}

export class WorkersAi extends WorkerEntrypoint {
  async run(model, input) {
    const texts = Array.isArray(input?.text) ? input.text : [input?.text];
    const data = texts.map(embed);
    return { shape: [data.length, DIMENSION], data, model };
  }
}

// One index for the isolate's life, as a real index outlives any request.
const vectors = new Map();

function matches(metadata, filter) {
  for (const [field, condition] of Object.entries(filter ?? {})) {
    const have = metadata?.[field];
    const [op, want] = condition !== null && typeof condition === "object" ? Object.entries(condition)[0] : ["$eq", condition];
    const ok = op === "$eq" ? have === want
      : op === "$ne" ? have !== want
      : op === "$in" ? want.includes(have)
      : op === "$nin" ? !want.includes(have)
      : false;
    if (!ok) return false;
  }
  return true;
}

export class Vectorize extends WorkerEntrypoint {
  async upsert(items) {
    for (const item of items) {
      vectors.set(item.id, { id: item.id, values: Array.from(item.values), metadata: item.metadata ?? {} });
    }
    return { count: items.length, ids: items.map((item) => item.id) };
  }

  async query(vector, options = {}) {
    const topK = options.topK ?? 5;
    const scored = [];
    for (const stored of vectors.values()) {
      if (!matches(stored.metadata, options.filter)) continue;
      let dot = 0;
      for (let i = 0; i < vector.length; i++) dot += vector[i] * stored.values[i];
      scored.push({ id: stored.id, score: dot, metadata: stored.metadata });
    }
    scored.sort((a, b) => b.score - a.score);
    const withMetadata = options.returnMetadata && options.returnMetadata !== "none";
    const found = scored.slice(0, topK).map((m) => (withMetadata ? m : { id: m.id, score: m.score }));
    return { matches: found, count: found.length };
  }

  async getByIds(ids) {
    return ids.filter((id) => vectors.has(id)).map((id) => vectors.get(id));
  }

  async deleteByIds(ids) {
    let count = 0;
    for (const id of ids) count += vectors.delete(id) ? 1 : 0;
    return { count, ids };
  }
}

export default {
  async fetch() {
    return new Response("memvault's local stand-ins for Workers AI and Vectorize", { status: 404 });
  },
};
