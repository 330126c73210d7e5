// An app on the official Gemini JavaScript SDK (@google/genai), as its README and typings show it,
// pointed at memvault: `httpOptions.baseUrl` is memvault, `httpOptions.headers` carries the memory
// key, and the SDK's own API key (sent as `x-goog-api-key`) is the provider's. It prints one JSON
// object of what it saw.
import { ApiError, GoogleGenAI } from "@google/genai";

const [baseUrl, memoryKey, limitedKey, apiKey] = process.argv.slice(2);
const client = (key) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl, headers: { "X-Memory-Key": key } } });
const ai = client(memoryKey);
const model = "gemini-test";
const seen = {};

const whole = await ai.models.generateContent({ model, contents: "My dog is called Rex." });
seen.whole = whole.text;

let text = "";
for await (const chunk of await ai.models.generateContentStream({ model, contents: "What is my dog called?" })) {
  text += chunk.text;
  seen.finish = chunk.candidates?.[0]?.finishReason ?? seen.finish;
}
seen.streamed = text;

// Leaving a stream's loop leaves its connection open (the SDK only releases its reader), so the
// rest of the answer still arrives; aborting through `config.abortSignal` hangs up.
for await (const chunk of await ai.models.generateContentStream({ model, contents: "This stream's loop is left." })) {
  seen.left = chunk.text;
  break;
}
const abort = new AbortController();
try {
  for await (const chunk of await ai.models.generateContentStream({
    model,
    contents: "This stream is aborted after one chunk.",
    config: { abortSignal: abort.signal },
  })) {
    seen.aborted = chunk.text;
    abort.abort();
  }
} catch (error) {
  seen.abortError = error.name;
}

const counted = await ai.models.countTokens({ model, contents: "Count me." });
seen.counted = counted.totalTokens;

const embedded = await ai.models.embedContent({ model: "gemini-embedding-test", contents: "Embed me." });
seen.embedded = embedded.embeddings?.[0]?.values;

const chat = ai.chats.create({ model });
const first = await chat.sendMessage({ message: "My cat is called Tom." });
const second = await chat.sendMessage({ message: "And what is my cat called?" });
seen.chat = [first.text, second.text, chat.getHistory().length];

const interaction = await ai.interactions.create({ model, input: "Hi, my name is Amir." });
seen.interaction = interaction.outputs?.[0]?.text;

const uploaded = await ai.files.upload({
  file: new Blob(["one line of notes\n"], { type: "text/plain" }),
  config: { mimeType: "text/plain", displayName: "notes" },
});
seen.uploaded = { name: uploaded.name, sizeBytes: uploaded.sizeBytes };
const listed = [];
for await (const file of await ai.files.list()) {
  listed.push(file.name);
}
seen.listed = listed;

try {
  await client("mk_not-a-key").models.generateContent({ model, contents: "hi" });
} catch (error) {
  seen.unauthorized = { typed: error instanceof ApiError, status: error.status, message: error.message };
}
const limited = client(limitedKey);
await limited.models.generateContent({ model, contents: "The one call this key has a minute." });
try {
  await limited.models.generateContent({ model, contents: "One call too many." });
} catch (error) {
  seen.limited = { typed: error instanceof ApiError, status: error.status, message: error.message };
}
console.log(JSON.stringify(seen));
