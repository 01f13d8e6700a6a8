// `npm test`'s first step (`pretest`, also `npm run test:setup`): installs what only the tests
// use, kept out of Gatehouse's own `npm install`:
//
//   test/            playwright-core (the browser suites) and kubernetes-models (the container
//                    checks), resolved from test/node_modules by every file under test/
//   examples/nextjs/ Next.js, next-auth 5 and React: the example app, and the one install the
//                    Next.js test fixtures build and bundle against (test/helpers/next-app.ts)
//   examples/nextjs-authjs/before/
//                    the same Next.js, next-auth and React with the Drizzle adapter, libSQL and
//                    bcryptjs: the Auth.js app docs/migrate-from-authjs.md moves onto Gatehouse
//                    (test/examples/migrate-guide.test.ts links it into the app it follows)
//
// Each folder gets `npm ci` only when its package.json or lock differs from the last install's
// (a stamp in its node_modules holding their hash), with one line either way. An install that
// fails stops `npm test` (exit 1) with npm's output and the folder to fix: the browser, client
// and container suites cannot run without these, and a test run that quietly skipped them would
// look green without proving the integration. (Run one by one without it, a suite importing
// playwright-core fails to load, naming the package; the next-auth client suite skips, saying
// why.)
//
// Usage: node scripts/test-setup.ts [test | examples/nextjs | examples/nextjs-authjs/before]…
//        (default: all three)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(new URL('../package.json', import.meta.url)));
const folders = ['test', 'examples/nextjs', 'examples/nextjs-authjs/before'];
const stampName = '.gatehouse-install-stamp';

const wanted = process.argv.slice(2);
const unknown = wanted.filter((folder) => !folders.includes(folder));
if (unknown.length > 0) {
  process.stderr.write(
    `test-setup: unknown folder ${unknown.join(', ')}; use ${folders.join(' or ')}\n`,
  );
  process.exit(2);
}

function lockHash(dir: string): string {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    const where = path.join(dir, file);
    // A missing file hashes as such: `npm ci` then says what is wrong.
    hash.update(`${file}\n`).update(fs.existsSync(where) ? fs.readFileSync(where) : 'missing');
  }
  return hash.digest('hex').slice(0, 16);
}

let failed = false;
for (const folder of wanted.length > 0 ? wanted : folders) {
  const dir = path.join(root, folder);
  const stamp = path.join(dir, 'node_modules', stampName);
  const hash = lockHash(dir);
  let installed: string | undefined;
  try {
    installed = fs.readFileSync(stamp, 'utf8').trim();
  } catch {
    installed = undefined;
  }
  if (installed === hash) {
    console.log(`test-setup: ${folder}/node_modules is current (lock ${hash})`);
    continue;
  }
  const why = installed === undefined ? 'not installed yet' : 'its lock changed';
  const started = Date.now();
  const npm = process.env.npm_execpath;
  const args = ['ci', '--no-audit', '--no-fund'];
  // Under npm, its own CLI with this Node; run directly, the `npm` on PATH.
  const result = npm
    ? spawnSync(process.execPath, [npm, ...args], { cwd: dir, encoding: 'utf8' })
    : spawnSync('npm', args, { cwd: dir, encoding: 'utf8' });
  if (result.status === 0) {
    fs.mkdirSync(path.dirname(stamp), { recursive: true });
    fs.writeFileSync(stamp, `${hash}\n`);
    console.log(
      `test-setup: ${folder}/node_modules installed (${why}; npm ci in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    continue;
  }
  failed = true;
  process.stderr.write(
    `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `${result.error.message}\n` : ''}` +
      `test-setup: FAILED to install ${folder}/ (${why}): \`npm ci\` in ${folder}/ exited ` +
      `${result.status ?? result.signal}. The browser, client and container suites need it; ` +
      `fix the cause above (offline? run once with the network) and run \`npm run test:setup\`.\n`,
  );
}
if (failed) process.exit(1);
