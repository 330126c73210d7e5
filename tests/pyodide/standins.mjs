// Stand-ins for the bindings that have no local simulation: Workers AI and Vectorize. They take
// and return the documented shapes, and reject what the real services reject where that is
// documented (batch and topK limits), so they check our conversion code, not the services.

export const BGE_BASE = "@cf/baai/bge-base-en-v1.5";
const DIMENSION = 768;
const MAX_TEXTS = 100;

function hash32(text) {
  // FNV-1a: deterministic word features, nothing more.
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function featureVector(text) {
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const features = [...words, ...words.slice(1).map((w, i) => `${words[i]} ${w}`)];
  if (features.length === 0) features.push("<empty>");
  const vector = new Array(DIMENSION).fill(0);
  for (const feature of features) {
    const h = hash32(feature);
    vector[h % DIMENSION] += h & 0x80000000 ? -1 : 1;
  }
  let norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1;
    norm = 1;
  }
  return vector.map((x) => x / norm);
}

export function workersAi() {
  const calls = [];
  return {
    calls,
    async run(model, inputs) {
      if (model !== BGE_BASE) throw new Error(`AiError: unknown model ${model}`);
      const text = inputs?.text;
      const texts = typeof text === "string" ? [text] : text;
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) {
        throw new Error("AiError: text must be a string or an array of strings");
      }
      if (texts.length > MAX_TEXTS) throw new Error(`AiError: at most ${MAX_TEXTS} texts per request`);
      calls.push(texts.length);
      return { shape: [texts.length, DIMENSION], data: texts.map(featureVector) };
    },
  };
}

function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

const OPERATORS = {
  $eq: (v, x) => v === x,
  $ne: (v, x) => v !== x,
  $in: (v, x) => x.includes(v),
  $nin: (v, x) => !x.includes(v),
  $lt: (v, x) => v < x,
  $lte: (v, x) => v <= x,
  $gt: (v, x) => v > x,
  $gte: (v, x) => v >= x,
};

function matchesFilter(metadata, filter) {
  return Object.entries(filter ?? {}).every(([key, condition]) => {
    const value = metadata?.[key];
    if (condition === null || typeof condition !== "object" || Array.isArray(condition)) {
      return value === condition;
    }
    return Object.entries(condition).every(([op, operand]) => {
      if (!(op in OPERATORS)) throw new Error(`VectorizeError: unsupported filter operator ${op}`);
      return value !== undefined && OPERATORS[op](value, operand);
    });
  });
}

// The dimension is fixed by the first upsert unless given, as an index is created with one.
export function vectorize(dimension = null) {
  const vectors = new Map();
  const check = (values) => {
    dimension ??= values?.length;
    if (!Array.isArray(values) && !ArrayBuffer.isView(values)) throw new Error("VectorizeError: values must be an array");
    if (values.length !== dimension) throw new Error(`VectorizeError: expected ${dimension} dimensions, got ${values.length}`);
    if ([...values].some((x) => typeof x !== "number" || !Number.isFinite(x))) throw new Error("VectorizeError: bad value");
  };
  return {
    async upsert(items) {
      if (!Array.isArray(items)) throw new Error("VectorizeError: upsert takes an array");
      if (items.length > 1000) throw new Error("VectorizeError: at most 1000 vectors per upsert");
      for (const { id, values, metadata } of items) {
        if (typeof id !== "string" || new TextEncoder().encode(id).length > 64) throw new Error("VectorizeError: bad id");
        check(values);
        vectors.set(id, { id, values: [...values], metadata: structuredClone(metadata ?? {}) });
      }
      return { mutationId: `m${vectors.size}` };
    },
    async query(vector, options = {}) {
      check(vector);
      const topK = options.topK ?? 5;
      const metadataLevel = options.returnMetadata ?? "none";
      const heavy = options.returnValues || (metadataLevel !== "none" && metadataLevel !== false);
      if (topK > (heavy ? 20 : 100)) throw new Error(`VectorizeError: topK ${topK} too large`);
      const matches = [...vectors.values()]
        .filter((v) => matchesFilter(v.metadata, options.filter))
        .map((v) => ({ v, score: cosine(vector, v.values) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, topK)
        .map(({ v, score }) => ({
          id: v.id,
          score,
          ...(options.returnValues ? { values: v.values } : {}),
          ...(heavy && metadataLevel !== "none" ? { metadata: structuredClone(v.metadata) } : {}),
        }));
      return { count: matches.length, matches };
    },
    async getByIds(ids) {
      return ids.filter((id) => vectors.has(id)).map((id) => structuredClone(vectors.get(id)));
    },
    async deleteByIds(ids) {
      for (const id of ids) vectors.delete(id);
      return { mutationId: `d${vectors.size}` };
    },
  };
}
