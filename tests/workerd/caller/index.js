// The tier's way in to what only other Workers can reach: memvault's RPC methods over a service
// binding (one with props naming a memory key, one without), and the bot Worker's webhook.
//   POST /rpc/<binding>/<method>  {"args": [...]}  -> {"result": ...} or {"error": "<message>"}
//   ANY  /bot/<path>                               -> the bot Worker's /<path>, as Telegram reaches it
//   ANY  /to/<binding>/<path>                      -> /<path> of the Worker that binding names
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, kind, ...rest] = url.pathname.split("/");
    if (kind === "bot") {
      url.pathname = "/" + rest.join("/");
      return env.BOT.fetch(new Request(url, request));
    }
    if (kind === "to" && rest.length >= 1 && env[rest[0]]) {
      url.pathname = "/" + rest.slice(1).join("/");
      return env[rest[0]].fetch(new Request(url, request));
    }
    if (kind === "rpc" && request.method === "POST" && rest.length === 2) {
      const [binding, method] = rest;
      const { args = [] } = await request.json();
      try {
        const result = await env[binding][method](...args);
        return Response.json({ result: result ?? null });
      } catch (error) {
        return Response.json({ error: String(error?.message ?? error) });
      }
    }
    return new Response("not found", { status: 404 });
  },
};
