// The top self-time functions of a V8 .cpuprofile (`node --cpu-prof`), for reading where a
// request's main-thread time goes: `node scripts/bench/profile-top.ts <file.cpuprofile> [count]`.
// Self time is a function's own samples, not its callees'; the share is of every sample taken,
// idle included, with idle, GC and program listed as V8 names them.
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, countArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node scripts/bench/profile-top.ts <file.cpuprofile> [count]\n');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<string, number>();
let totalUs = 0;
profile.samples.forEach((id, i) => {
  const frame = byId.get(id)?.callFrame;
  const delta = profile.timeDeltas[i] ?? 0;
  totalUs += delta;
  if (frame === undefined) return;
  const where =
    frame.url === '' ? '' : ` ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
  const key = `${frame.functionName || '(anonymous)'}${where}`;
  selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
});
const rows = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, Number(countArg ?? 40));
process.stdout.write(`${(totalUs / 1e6).toFixed(2)} s sampled\n`);
for (const [name, us] of rows) {
  process.stdout.write(
    `${((us / totalUs) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}\n`,
  );
}
