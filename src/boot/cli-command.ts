import fs from 'node:fs';
import path from 'node:path';

let known: string | undefined;

/**
 * How an operator runs this install's CLI, for hints that must run as printed: `gatehouse` when
 * the `gatehouse` found on PATH is this install's own entry point, `dist/gatehouse` (the image
 * links it as /usr/local/bin/gatehouse), else `npx gatehouse` (a checkout: npx runs the
 * package's own bin from the checkout's folder). The bin itself does not count: npx puts it on
 * the PATH of what it runs, where the operator's shell does not have it.
 */
export function cliCommand(): string {
  known ??= entryPointOnPath(process.env, process.argv[1]) ? 'gatehouse' : 'npx gatehouse';
  return known;
}

function entryPointOnPath(env: NodeJS.ProcessEnv, entry: string | undefined): boolean {
  if (entry === undefined) return false;
  let dist: string;
  try {
    // The service (dist/gatehouse.mjs) and the CLI (dist/gatehouse-cli.cjs) both run from dist/.
    dist = path.dirname(fs.realpathSync(entry));
  } catch {
    return false;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      const found = fs.realpathSync(path.join(dir, 'gatehouse'));
      // The first `gatehouse` on PATH is the one a shell runs.
      return found === path.join(dist, 'gatehouse');
    } catch {
      // Not in this folder: the shell would look in the next one.
    }
  }
  return false;
}
