// An app on the official OpenAI Node SDK, as its README shows it, pointed at memvault: the memory
// key is its API key. It prints one JSON object of what it saw.
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const seen = {};

const whole = await client.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "My dog is called Rex." }],
});
seen.whole = whole.choices[0].message.content;

const stream = await client.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "What is my dog called?" }],
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let usage = null;
for await (const chunk of stream) {
  text += chunk.choices[0]?.delta?.content ?? "";
  usage = chunk.usage ?? usage;
}
seen.streamed = text;
seen.usage = usage;

const left = await client.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "This stream is left after one chunk." }],
  stream: true,
});
for await (const chunk of left) {
  seen.left = chunk.id;
  break;
}

try {
  await client.chat.completions.create({ model: "gpt-4o-mini", messages: [] });
} catch (error) {
  seen.refused = { typed: error instanceof OpenAI.BadRequestError, status: error.status };
}
try {
  await new OpenAI({ baseURL, apiKey: "mk_not-a-key", maxRetries: 0 }).chat.completions.create({
    model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }],
  });
} catch (error) {
  seen.unauthorized = { typed: error instanceof OpenAI.AuthenticationError, status: error.status };
}
console.log(JSON.stringify(seen));
