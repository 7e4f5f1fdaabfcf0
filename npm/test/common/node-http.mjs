// A fetch-style handler (`createHandler`'s) behind Node's http server, for
// the tests that serve the endpoint on a real port: Node speaks
// IncomingMessage, the handler speaks fetch. (The README's serve-node.mjs
// writes the same few lines out for users.)
export function nodeListener(handle) {
  return async (req, res) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const response = await handle(new Request(new URL(req.url ?? '/', 'http://localhost'), { method: req.method, headers }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
    return response.status;
  };
}
