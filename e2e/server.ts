// A static HTTP server for the harness page, which also answers the panel's
// own queries (POST /query) with the real backend. Over file:// the browser refuses
// @grafana/ui's icon fetches (CORS), so the tests load the page over HTTP and
// the icons come from the installed @grafana/ui.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const types: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

/** Where @grafana/ui looks for its icons, and where they are installed. */
const iconPrefix = '/public/build/img/icons/';
const iconDir = 'node_modules/@grafana/ui/dist/public/img/icons/';

/** A POST handler: the request body in, the JSON answer out (a rejection answers 400 with its message). */
export type Handler = (body: string) => Promise<string>;

/**
 * serve serves root's files on a free loopback port, and POST requests to
 * the paths of handlers; it resolves to the base URL and a stop function.
 */
export async function serve(
  root: string,
  handlers: Record<string, Handler> = {}
): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const handler = req.method === 'POST' ? handlers[new URL(req.url ?? '/', 'http://x').pathname] : undefined;
    if (handler) {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () =>
        handler(body).then(
          (out) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(out),
          (e) => res.writeHead(400, { 'Content-Type': 'text/plain' }).end(e instanceof Error ? e.message : String(e))
        )
      );
      return;
    }
    let path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path.includes(iconPrefix)) {
      path = '/' + iconDir + path.slice(path.indexOf(iconPrefix) + iconPrefix.length);
    }
    const file = join(root, normalize(path));
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((ok) => server.close(() => ok())) };
}
