// Benchmark peer on the TypeScript SDK v2 (`@modelcontextprotocol/server`): stdio, dual era.
// `echo` returns its text; `big` returns one text block of `n` bytes ("x" repeated).
// bench.py copies this file into the npm prefix that holds the SDK (bare ESM imports resolve
// from the script's folder) and runs it with Node 22.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(() => {
    const server = new McpServer({ name: 'bench-ts', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Return the text unchanged.', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    server.registerTool(
        'big',
        { description: 'Return n bytes of text.', inputSchema: z.object({ n: z.number().int().min(0) }) },
        async ({ n }) => ({ content: [{ type: 'text', text: 'x'.repeat(n) }] })
    );
    return server;
});
