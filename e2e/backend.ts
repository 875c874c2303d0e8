// Real frames for the browser tests: the flamediff CLI runs the backend engine
// on testdata/ files and, through the data source's query executor, on the
// seeded demo data in a private ClickHouse.
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** The repository root. */
export const repo = resolve(__dirname, '..');

/** buildGo builds a Go command of this module into dir and returns its path. */
export function buildGo(pkg: string, dir: string): string {
  const out = join(dir, pkg.split('/').pop()!);
  execFileSync('go', ['build', '-o', out, pkg], { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

/** flamediffBin builds the CLI into dir (or takes FLAMEDIFF_BIN) and returns its path. */
export function flamediffBin(dir: string): string {
  return process.env.FLAMEDIFF_BIN || buildGo('./cmd/flamediff', dir);
}

/** flamediff returns a runner of the CLI (bin, else built into dir) printing stdout. */
export function flamediff(dir: string, bin = flamediffBin(dir)): (args: string[]) => string {
  return (args) => execFileSync(bin, args, { cwd: repo, maxBuffer: 1 << 30, encoding: 'utf8' });
}

/**
 * queryStored answers a query model as the data source would, with the CLI
 * on the stored runs (`flamediff query --dsn --model`): the frames as JSON.
 */
export function queryStored(bin: string, dsn: string, model: string): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(
      bin,
      ['query', '--dsn', dsn, '--model', model, '--output', 'json'],
      { cwd: repo, maxBuffer: 1 << 30, encoding: 'utf8' },
      (err, stdout, stderr) => (err ? fail(new Error(stderr || err.message)) : ok(stdout))
    )
  );
}

/** A ClickHouse to seed: the one in FLAMEDIFF_CLICKHOUSE_ADDR, or a private chserver. */
export interface ClickHouse {
  addr: string;
  stop(): void;
}

/** clickhouse reuses FLAMEDIFF_CLICKHOUSE_ADDR or starts ./internal/chtest/cmd/chserver. */
export async function clickhouse(dir: string): Promise<ClickHouse> {
  if (process.env.FLAMEDIFF_CLICKHOUSE_ADDR) {
    return { addr: process.env.FLAMEDIFF_CLICKHOUSE_ADDR, stop: () => undefined };
  }
  const server: ChildProcess = spawn(buildGo('./internal/chtest/cmd/chserver', dir), [], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((ok, fail) => {
    createInterface({ input: server.stdout! }).once('line', ok);
    server.once('exit', (code) => fail(new Error(`chserver exited with ${code} before printing its address`)));
  });
  return { addr: first.split(' ')[0], stop: () => server.kill('SIGTERM') };
}

/** tempDir makes a fresh directory for binaries and frames. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'flamediff-e2e-'));
}
