// A hostile web page against `flamediff serve` in Chromium: a page of
// another local server, and a page whose name is rebound to 127.0.0.1
// (--host-resolver-rules in playwright.config.ts maps attacker.test), try
// to read the stored runs and get nothing.
import { expect, test } from '@playwright/test';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { ClickHouse, buildGo, clickhouse, repo, tempDir } from './backend';
import { serve } from './server';

const secretApp = 'secret-app';
const model = JSON.stringify({ queryType: 'runs', app: secretApp, head: { builds: ['1.0'] } });

/** attack is the hostile page's script: every read it tries, and what each got. */
const attack = (target: string) => `
  const target = ${JSON.stringify(target)};
  const tries = {
    'cors GET apps': () => fetch(target + '/api/resources/apps'),
    'no-cors GET apps': () => fetch(target + '/api/resources/apps', { mode: 'no-cors' }),
    'text/plain POST': () => fetch(target + '/api/query', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: ${JSON.stringify(model)} }),
    'form POST': () => fetch(target + '/api/query', { method: 'POST', mode: 'no-cors', body: new URLSearchParams({ q: ${JSON.stringify(model)} }) }),
    'JSON POST': () => fetch(target + '/api/query', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: ${JSON.stringify(model)} }),
    'page': () => fetch(target + '/'),
  };
  window.results = (async () => {
    const out = {};
    for (const [name, f] of Object.entries(tries)) {
      try {
        const res = await f();
        out[name] = res.type + ' ' + res.status + ' ' + (await res.text());
      } catch (e) {
        out[name] = 'failed: ' + e;
      }
    }
    return out;
  })();
`;

test.describe('serve against a hostile page', () => {
  let dir: string;
  let ch: ClickHouse;
  let server: ChildProcess;
  let url: string;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    dir = tempDir();
    const bin = buildGo('./cmd/flamediff', dir);
    ch = await clickhouse(dir);
    const dsn = `clickhouse://${ch.addr}/e2e_guard_${process.pid}`;
    const run = (args: string[]) => execFileSync(bin, args, { cwd: repo, encoding: 'utf8' });
    run(['migrate', '--dsn', dsn]);
    run(['ingest', '--dsn', dsn, '--app', secretApp, '--build', '1.0', '--run', '1', 'testdata/pprof/head-run1.pb.gz']);
    server = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((ok) => createInterface({ input: server.stdout! }).once('line', ok));
    url = line.replace('flamediff serve: ', '').replace(/\/$/, '');
  });
  test.afterAll(() => {
    server?.kill('SIGTERM');
    ch?.stop();
  });

  test("the UI's own page reads the runs (the control)", async ({ page }) => {
    await page.goto(url + '/');
    const apps = await page.evaluate(() => fetch('api/resources/apps').then((r) => r.text()));
    expect(apps).toContain(secretApp);
  });

  test('a page of another local server gets nothing', async ({ page }) => {
    const root = join(dir, 'site');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'evil.html'), `<!doctype html><script>${attack(url)}</script>`);
    const site = await serve(root);
    try {
      const answered: Record<string, number> = {};
      page.on('response', (r) => {
        if (r.url().startsWith(url)) {
          answered[`${r.request().method()} ${new URL(r.url()).pathname}`] = r.status();
        }
      });
      // localhost, not 127.0.0.1: another port of an allowed name is still another origin.
      await page.goto(site.url.replace('127.0.0.1', 'localhost') + '/evil.html');
      const results: Record<string, string> = await page.evaluate('window.results');
      expect(Object.keys(results)).toHaveLength(6);
      for (const [name, got] of Object.entries(results)) {
        expect(got, name).not.toContain(secretApp);
        expect(got, name).toMatch(/^(failed: TypeError|opaque 0 $)/);
      }
      // The server itself refused each data request, not only the browser.
      expect(answered['GET /api/resources/apps']).toBe(403);
      expect(answered['POST /api/query']).toBe(403);
    } finally {
      await site.stop();
    }
  });

  test('a page rebound to 127.0.0.1 gets nothing', async ({ page }) => {
    // After the rebinding the attacker's page has origin attacker.test:PORT and
    // its requests go to 127.0.0.1:PORT: the state of a page opened at that
    // name, whose own script then reads its "own" server. (A page still on a
    // public address is stopped by Chromium's Private Network Access before
    // serve sees anything.)
    const rebound = `http://attacker.test:${new URL(url).port}`;
    const nav = await page.goto(`${rebound}/`);
    expect(nav?.status()).toBe(421);
    expect(await nav?.text()).not.toContain(secretApp);
    await page.addScriptTag({ content: attack(rebound) });
    const results: Record<string, string> = await page.evaluate('window.results');
    expect(Object.keys(results)).toHaveLength(6);
    for (const [name, got] of Object.entries(results)) {
      expect(got, name).not.toContain(secretApp);
      expect(got, name).toMatch(/^(basic 421 \{"error":"Host \\"attacker.test:|opaque 0 $)/);
    }
    expect(results['cors GET apps']).toMatch(/^basic 421 /);
    expect(results['JSON POST']).toMatch(/^basic 421 /);
  });
});
