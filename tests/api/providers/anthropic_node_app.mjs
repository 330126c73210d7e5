// An app on the official Anthropic TypeScript SDK, as its README and helpers show it, pointed at
// memvault: the memory key is its API key. It prints one JSON object of what it saw.
import Anthropic from "@anthropic-ai/sdk";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new Anthropic({ baseURL, apiKey, maxRetries: 0 });
const model = "claude-sonnet-4-5";
const seen = {};

const whole = await client.messages.create({
  model,
  max_tokens: 256,
  messages: [{ role: "user", content: "My dog is called Rex." }],
});
seen.whole = whole.content[0].text;

let text = "";
const stream = client.messages
  .stream({ model, max_tokens: 256, messages: [{ role: "user", content: "What is my dog called?" }] })
  .on("text", (delta) => {
    text += delta;
  });
const final = await stream.finalMessage();
seen.streamed = text;
seen.final = { text: final.content[0].text, stop: final.stop_reason, output_tokens: final.usage.output_tokens };

const left = await client.messages.create({
  model,
  max_tokens: 256,
  messages: [{ role: "user", content: "This stream is left after one event." }],
  stream: true,
});
for await (const event of left) {
  seen.left = event.type;
  break;
}

const counted = await client.messages.countTokens({ model, messages: [{ role: "user", content: "Count me." }] });
seen.counted = counted.input_tokens;

try {
  await client.messages.create({ model, max_tokens: 8, messages: [] });
} catch (error) {
  seen.refused = { typed: error instanceof Anthropic.BadRequestError, status: error.status, type: error.error?.error?.type };
}
try {
  await new Anthropic({ baseURL, apiKey: "mk_not-a-key", maxRetries: 0 }).messages.create({
    model, max_tokens: 8, messages: [{ role: "user", content: "hi" }],
  });
} catch (error) {
  seen.unauthorized = { typed: error instanceof Anthropic.AuthenticationError, status: error.status };
}
console.log(JSON.stringify(seen));
