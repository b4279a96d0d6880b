// The TypeScript v2 client (protocol 2026-07-28) against the Go server at
// the endpoint given as the first argument: a client that can put forms to
// a person calls the tool approve twice (multi-round-trip requests: the
// answer and the sealed state come back on a retry), a client that
// declared no elicitation calls it too, and a call of the tool wait is
// abandoned after 300 ms. It prints what it saw as one JSON document on
// stdout.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [endpoint] = process.argv.slice(2);

async function connect(capabilities) {
  const client = new Client(
    { name: "ts-v2-client", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  return client;
}

const out = {};

// A person answers: approves the first form, declines the second.
const asking = await connect({ elicitation: { form: {} } });
const asked = [];
asking.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  if (asked.length > 1) {
    return { action: "decline" };
  }
  return { action: "accept", content: { approve: true, note: "from TypeScript v2" } };
});
out.version = asking.getNegotiatedProtocolVersion();
out.approved = await asking.callTool({ name: "approve", arguments: { order: "7" } });
out.declined = await asking.callTool({ name: "approve", arguments: { order: "7" } });
out.asked = asked;
await asking.close();

// No elicitation capability: the server does not ask.
const mute = await connect({});
out.cannotAsk = await mute.callTool({ name: "approve", arguments: { order: "7" } });

// A call given up after 300 ms.
const abort = new AbortController();
setTimeout(() => abort.abort(), 300);
try {
  await mute.callTool({ name: "wait", arguments: {} }, { signal: abort.signal });
  out.abandoned = "completed";
} catch (error) {
  out.abandoned = "aborted";
}
await mute.close();

console.log(JSON.stringify(out));
