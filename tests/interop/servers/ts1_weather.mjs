// Weather-like MCP server on the TypeScript SDK 1.x (`@modelcontextprotocol/sdk` 1.32), a peer for
// mcpmini's interop tests: legacy era only (2024-11-05 ... 2025-11-25).
//
// Usage: node ts1_weather.mjs stdio [--tools-only]
//        node ts1_weather.mjs http PORT [--stateless] [--json] [--tools-only]
//        node ts1_weather.mjs sse PORT [--tools-only]
// `http` is the StreamableHTTPServerTransport at /mcp: stateful (a transport per session, created
// by an initialize POST, found again by its mcp-session-id) or --stateless (sessionIdGenerator
// undefined: a server and a transport per POST; GET and DELETE 405); --json sets
// enableJsonResponse. `sse` is the old
// SSEServerTransport: GET /sse, POST /messages?sessionId=... . --tools-only registers tools only,
// so McpServer declares neither the resources nor the prompts capability.
// interop_peers.py copies this file into the npm prefix that holds the SDK, so that the bare
// imports below resolve there, and runs it with the Node 22 from the registry. HTTP binds
// 127.0.0.1 only (createMcpExpressApp also checks the Host header).
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

const [mode = 'stdio', portArg = '8000', ...rest] = process.argv.slice(2);
const flags = new Set([portArg, ...rest].filter(arg => arg.startsWith('--')));
const port = Number(portArg.startsWith('--') ? 8000 : portArg);
const toolsOnly = flags.has('--tools-only');

function buildServer() {
    const server = new McpServer(
        { name: toolsOnly ? 'ts1-weather-tools' : 'ts1-weather', version: '1.0.0' },
        { instructions: "Canned weather data for mcpmini's interop tests." }
    );
    server.registerTool(
        'get_forecast',
        {
            description: 'Return a canned forecast for a city.',
            inputSchema: { city: z.string(), days: z.number().int().optional() }
        },
        async ({ city, days = 1 }) => ({
            content: [{ type: 'text', text: days === 1 ? `Forecast for ${city}: sunny, 22°C`
                                                       : `Forecast for ${city}, ${days} days: sunny, 22°C` }]
        })
    );
    server.registerTool(
        'add',
        { description: 'Add two integers.', inputSchema: { a: z.number().int(), b: z.number().int() } },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] })
    );
    if (!toolsOnly) {
        server.registerResource('cities', 'weather://cities', { mimeType: 'text/plain' }, async uri => ({
            contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Paris\nTokyo\nLima' }]
        }));
        server.registerPrompt(
            'forecast_prompt',
            { description: 'Ask for the weather in a city.', argsSchema: { city: z.string() } },
            ({ city }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `What is the weather in ${city}?` } }] })
        );
    }
    return server;
}

// The routing below is the one the SDK's README shows for Express (and most deployed servers
// follow): stateful, a POST without a known session id is an initialize or a 400; stateless, GET and
// DELETE get 405.
function rpcError(res, status, message) {
    res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

function serveHttp(app) {
    const json = flags.has('--json');
    if (flags.has('--stateless')) {
        app.post('/mcp', async (req, res) => {
            const server = buildServer();
            const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json });
            res.on('close', () => { transport.close(); server.close(); });
            await server.connect(transport);
            await transport.handleRequest(req, res, req.body);
        });
        app.get('/mcp', (req, res) => rpcError(res, 405, 'Method not allowed.'));
        app.delete('/mcp', (req, res) => rpcError(res, 405, 'Method not allowed.'));
        return;
    }
    const sessions = new Map();
    app.post('/mcp', async (req, res) => {
        const id = req.headers['mcp-session-id'];
        let transport = typeof id === 'string' ? sessions.get(id) : undefined;
        if (transport === undefined) {
            if (id !== undefined || !isInitializeRequest(req.body)) {
                rpcError(res, 400, 'Bad Request: No valid session ID provided');
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                enableJsonResponse: json,
                onsessioninitialized: sid => { sessions.set(sid, transport); }
            });
            transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
            await buildServer().connect(transport);
        }
        await transport.handleRequest(req, res, req.body);
    });
    const sessionRequest = async (req, res) => {
        const transport = sessions.get(String(req.headers['mcp-session-id']));
        if (transport === undefined) {
            res.status(400).send('Invalid or missing session ID');
            return;
        }
        await transport.handleRequest(req, res);
    };
    app.get('/mcp', sessionRequest);
    app.delete('/mcp', sessionRequest);
}

function serveSse(app) {
    const sessions = new Map();
    app.get('/sse', async (req, res) => {
        const transport = new SSEServerTransport('/messages', res);
        sessions.set(transport.sessionId, transport);
        res.on('close', () => { sessions.delete(transport.sessionId); });
        await buildServer().connect(transport);
    });
    app.post('/messages', async (req, res) => {
        const transport = sessions.get(String(req.query.sessionId));
        if (transport === undefined) {
            res.status(400).send('No transport found for sessionId');
            return;
        }
        await transport.handlePostMessage(req, res, req.body);
    });
}

if (mode === 'stdio') {
    await buildServer().connect(new StdioServerTransport());
} else if (mode === 'http' || mode === 'sse') {
    const app = createMcpExpressApp({ host: '127.0.0.1' });
    if (mode === 'http') serveHttp(app); else serveSse(app);
    app.listen(port, '127.0.0.1', error => {
        if (error) { console.error(error); process.exit(1); }
        console.error(`ts1-weather listening on http://127.0.0.1:${port} (${mode})`);
    });
} else {
    console.error(`unknown mode ${mode}: use stdio, http or sse`);
    process.exit(2);
}
