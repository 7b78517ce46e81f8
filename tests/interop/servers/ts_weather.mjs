// Weather-like MCP server on the TypeScript SDK v2 (`@modelcontextprotocol/server`), a peer for
// mcpmini's interop tests. stdio only; dual era (serveStdio pins the era from the opening message).
// interop_peers.py copies this file into the npm prefix that holds the SDK, so that the bare imports
// below resolve there, and runs it with the Node 22 from the registry.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(() => {
    const server = new McpServer({ name: 'ts-weather', version: '1.0.0' });
    server.registerTool(
        'get_forecast',
        { description: 'Return a canned forecast for a city.', inputSchema: z.object({ city: z.string() }) },
        async ({ city }) => ({ content: [{ type: 'text', text: `Forecast for ${city}: sunny, 22°C` }] })
    );
    server.registerTool(
        'add',
        { description: 'Add two integers.', inputSchema: z.object({ a: z.number().int(), b: z.number().int() }) },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
    );
    server.registerResource('cities', 'weather://cities', { mimeType: 'text/plain' }, async uri => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Paris\nTokyo\nLima' }]
    }));
    server.registerPrompt(
        'forecast_prompt',
        { description: 'Ask for the weather in a city.', argsSchema: z.object({ city: z.string() }) },
        ({ city }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `What is the weather in ${city}?` } }] })
    );
    return server;
});
