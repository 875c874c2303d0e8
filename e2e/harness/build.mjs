// Bundles a browser-test harness page's script: by default the panel harness
// (e2e/harness/main.tsx into e2e/harness/dist/harness.js); with two
// arguments, ENTRY into OUTFILE (the evolution harness uses that).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundle } from '../../scripts/bundle.mjs';

const here = dirname(fileURLToPath(import.meta.url));

await bundle(process.argv[2] ?? join(here, 'main.tsx'), process.argv[3] ?? join(here, 'dist', 'harness.js'));
