// Where the documentation's screenshots go.
import { test } from '@playwright/test';
import { join } from 'node:path';

import { repo } from './backend';

/**
 * docImage is the path of a documentation screenshot: docs/img/NAME when
 * FLAMEDIFF_UPDATE_SCREENSHOTS=1 (`npm run screenshots`), else the test's
 * own output folder under test-results/, so that a test run leaves the
 * checkout as it was.
 */
export function docImage(name: string): string {
  return process.env.FLAMEDIFF_UPDATE_SCREENSHOTS === '1' ? join(repo, 'docs/img', name) : test.info().outputPath(name);
}
