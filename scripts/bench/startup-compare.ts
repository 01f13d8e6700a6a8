// Usage: node scripts/bench/startup-compare.ts [--runs N] [--compare DIST]… [--cpu N]
//
// Start-up alone, as `npm start` starts the server (its flags, production, the default log
// level, output to a file), against the bare node:http floor: spawn → first 200 from
// /api/health, N starts of each (default 15), interleaved so a burst of other load on the
// machine falls on every side alike, each pinned to one CPU. `--compare` adds a copy of another
// build (a dist/ folder inside this checkout, so its external modules resolve) as a row of its
// own. Prints each side's median, spread and ratio to the floor's median, and the RSS of one
// idle server a second after it answered.
import fs from 'node:fs';
import path from 'node:path';
import { baselineMain, gatehouseArgs, log, median, root, sleep, type Env } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import { rssMb } from './machine.ts';
import {
  freePort,
  installCleanupHandlers,
  makeTemp,
  setup,
  startServer,
  stopChild,
} from './processes.ts';

interface Side {
  label: string;
  args: string[];
  env: (port: number) => Env;
  fd?: number;
  startups: number[];
  /** CPU time the process used up to its first 200 (every thread), ms. */
  cpu: number[];
  rss: number[];
}

function parseArgs(argv: string[]): { runs: number; dists: string[]; cpu: number } {
  let runs = 15;
  let cpu = 1;
  const dists: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--runs' && value !== undefined) runs = Number(argv[++i]);
    else if (arg === '--cpu' && value !== undefined) cpu = Number(argv[++i]);
    else if (arg === '--compare' && value !== undefined) {
      const dist = path.resolve(value);
      i += 1;
      if (!fs.existsSync(path.join(dist, 'gatehouse.mjs')))
        throw new Error(`--compare ${dist}: no gatehouse.mjs there`);
      dists.push(dist);
    } else throw new Error(`unknown argument ${JSON.stringify(arg)} (--runs, --compare, --cpu)`);
  }
  return { runs, dists, cpu };
}

const { runs, dists, cpu } = parseArgs(process.argv.slice(2));
installCleanupHandlers();
setup.serverCpu = setup.taskset ? cpu : undefined;
const dir = makeTemp('startup');

function gatehouseSide(label: string, dist: string | undefined, key: string): Side {
  const dataDir = path.join(dir, key);
  fs.mkdirSync(dataDir);
  const secret = randomSecret();
  addUser(
    { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
    { email: 'bench@example.com', password: 'bench-password-correct-horse', name: 'Bench' },
  );
  const args =
    dist === undefined
      ? gatehouseArgs
      : [...gatehouseArgs.slice(0, -1), path.join(dist, 'gatehouse.mjs')];
  return {
    label,
    args,
    env: (port) => {
      const env = benchEnv({ port, dataDir, secret, fastPaths: true });
      delete env.LOG_LEVEL;
      return env;
    },
    fd: fs.openSync(path.join(dir, `${key}.log`), 'a'),
    startups: [],
    cpu: [],
    rss: [],
  };
}

const sides: Side[] = [
  {
    label: 'bare node:http',
    args: [baselineMain],
    env: (port) => ({ PORT: String(port), HOST: '127.0.0.1' }),
    startups: [],
    cpu: [],
    rss: [],
  },
  gatehouseSide(
    `this build (${path.relative(root, path.dirname(gatehouseArgs.at(-1) ?? ''))})`,
    undefined,
    'this',
  ),
  ...dists.map((dist, i) => gatehouseSide(path.relative(root, dist), dist, `compare-${i}`)),
];

/**
 * CPU time so far of every thread of `pid`, in ms, from the scheduler's nanosecond counters
 * (/proc/<pid>/task/<tid>/schedstat): a figure other load on the machine disturbs far less than
 * the wall-clock one. NaN where /proc has no such counters.
 */
function cpuMs(pid: number): number {
  try {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

async function startOnce(side: Side, keepRss: boolean): Promise<number> {
  const server = await startServer(side.label, side.args, side.env(await freePort()), {
    ...(side.fd !== undefined && { stdio: ['ignore', side.fd, side.fd] }),
  });
  side.cpu.push(cpuMs(server.pid));
  if (keepRss) {
    await sleep(1000);
    side.rss.push(rssMb(server.pid));
  }
  await stopChild(server.child);
  return server.startupMs;
}

// One untimed start each: migrations on a fresh database, the page cache warm.
for (const side of sides) await startOnce(side, false);
for (let run = 0; run < runs; run += 1) {
  // Rotate who goes first, so no side always follows the same one.
  for (let k = 0; k < sides.length; k += 1) {
    const side = sides[(run + k) % sides.length] as Side;
    side.startups.push(await startOnce(side, run % 5 === 0));
  }
  log(`run ${run + 1}/${runs}`);
}

const floor = median((sides[0] as Side).startups);
const floorRss = median((sides[0] as Side).rss);
const floorCpu = median((sides[0] as Side).cpu);
const rows = sides.map((side) => {
  const sorted = [...side.startups].sort((a, b) => a - b);
  const ms = median(side.startups);
  const rss = median(side.rss);
  return [
    side.label,
    ms.toFixed(1),
    `${(sorted[0] ?? NaN).toFixed(0)}-${(sorted.at(-1) ?? NaN).toFixed(0)}`,
    `${(ms / floor).toFixed(2)}×`,
    median(side.cpu).toFixed(1),
    `${(median(side.cpu) / floorCpu).toFixed(2)}×`,
    rss.toFixed(1),
    `${(rss / floorRss).toFixed(2)}×`,
  ];
});
const head = [
  'side',
  'median ms',
  'range ms',
  'vs bare',
  'CPU ms',
  'CPU vs bare',
  'RSS idle MB',
  'RSS vs bare',
];
process.stdout.write(
  `start-up, ${runs} interleaved starts each, pinned to CPU ${setup.serverCpu ?? 'none'}\n` +
    [head, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n') +
    '\n',
);
for (const side of sides) if (side.fd !== undefined) fs.closeSync(side.fd);
process.exit(0);
