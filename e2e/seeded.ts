// `flamediff serve` on the seeded demo in a private ClickHouse, for the
// browser tests of the local UI and the report.
import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { buildGo, clickhouse, repo, tempDir } from './backend';

export interface Seeded {
  dir: string;
  dsn: string;
  /** serve's page, ending in "/". */
  url: string;
  /** run runs the CLI (e.g. report) on the seeded store. */
  run(args: string[]): Promise<string>;
  stop(): void;
}

/** serveSeeded builds the CLI, seeds a database named name and starts serve on it. */
export async function serveSeeded(name: string): Promise<Seeded> {
  const dir = tempDir();
  const bin = buildGo('./cmd/flamediff', dir);
  const ch = await clickhouse(dir);
  const dsn = `clickhouse://${ch.addr}/${name}_${process.pid}`;
  const run = (args: string[]) =>
    new Promise<string>((ok, fail) => {
      const child = spawn(bin, args, { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (b) => (out += b));
      child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`flamediff ${args[0]} exited with ${code}`))));
    });
  await run(['migrate', '--dsn', dsn]);
  await run(['seed', '--dsn', dsn]);
  const server: ChildProcess = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((ok) => createInterface({ input: server.stdout! }).once('line', ok));
  return {
    dir,
    dsn,
    url: line.replace('flamediff serve: ', ''),
    run,
    stop: () => {
      server.kill('SIGTERM');
      ch.stop();
    },
  };
}
