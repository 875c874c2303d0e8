import { defineConfig } from '@playwright/test';
import { execFileSync } from 'node:child_process';

// Debian's chromium, not a downloaded browser: the tests run offline.
const chromium = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();

export default defineConfig({
  testDir: '.',
  testMatch: /.*\.spec\.ts$/,
  globalSetup: './global-setup.ts',
  // A stray test.only would pass while running one test: it fails the run instead.
  forbidOnly: true,
  // Two cores are shared: one worker, and generous timeouts for slow moments.
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  outputDir: '../test-results',
  use: {
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: chromium,
      // attacker.test is the rebinding page of guard.spec.ts: a foreign name for 127.0.0.1.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--host-resolver-rules=MAP attacker.test 127.0.0.1',
      ],
    },
  },
});
