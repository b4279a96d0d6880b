// A second MCP implementation for the tests: the official TypeScript SDK
// client starts the Go server given as the first argument over stdio,
// lists its tools, calls them (answering elicitations as a person would)
// and prints what it saw as one JSON document on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [server] = process.argv.slice(2);
const client = new Client(
  { name: "ts-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);

const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const { message, requestedSchema } = request.params;
  asked.push({ message, requestedSchema });
  if (message.includes("A-1002")) {
    return { action: "decline" };
  }
  return { action: "accept", content: { approve: true, note: "from TypeScript" } };
});

await client.connect(new StdioClientTransport({ command: server, args: [], stderr: "ignore" }));

const { tools } = await client.listTools();
const calls = [];
for (const [name, args] of [
  ["get_weather", { city: "Lisbon" }],
  ["search_orders", { customer: "C-042" }],
  ["search_orders", { customer: "nobody" }],
  ["export_report", { month: "2026-11" }],
  ["refund_order", { order_id: "A-1001", amount: 12.5 }],
  ["refund_order", { order_id: "A-1002", amount: 20 }],
]) {
  const result = await client.callTool({ name, arguments: args });
  calls.push({ name, result });
}
let unknownTool;
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
} catch (error) {
  unknownTool = { code: error.code, message: error.message };
}

console.log(JSON.stringify({
  tools: tools.map((t) => ({ name: t.name, annotations: t.annotations, outputSchema: t.outputSchema ?? null })),
  calls,
  asked,
  unknownTool,
}));
await client.close();
