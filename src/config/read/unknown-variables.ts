import { editsWithin } from '../../util/edit-distance.js';

/**
 * Variables of ours read outside the config schemas: by the process machinery
 * (src/boot/, src/metrics/cluster.ts), by the tests and scripts, and by compose.yaml (its
 * published port). Never a setting an operator looks for in docs/configuration.md.
 */
const machineryPrefixes = ['GATEHOUSE_TEST_', 'GATEHOUSE_FUZZ_'];
const machineryVariables = new Set([
  'GATEHOUSE_WORKER_SLOT',
  'GATEHOUSE_WARM_CODE_CACHE',
  'GATEHOUSE_PORT',
  'GATEHOUSE_IMAGE',
  'GATEHOUSE_CONTAINERS',
  'GATEHOUSE_NODE_CACHE',
  'GATEHOUSE_DOCKER_CACHE',
]);

/**
 * Set by Node, npm, shells and platforms: never warned about, even when one happens to lie
 * within an edit or two of a name of ours (`HOME`/`HOST` are two apart; a limit of one keeps
 * them apart, this keeps the rest).
 */
const platformVariables = new Set([
  'HOME',
  'HOSTNAME',
  'HOSTTYPE',
  'PATH',
  'PWD',
  'OLDPWD',
  'SHELL',
  'USER',
  'LOGNAME',
  'LANG',
  'TERM',
  'TZ',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_VERSION',
  'NODE_EXTRA_CA_CERTS',
]);
const platformPrefixes = [
  'npm_',
  'NPM_',
  'KUBERNETES_',
  'FLY_',
  'RENDER_',
  'HEROKU_',
  'RAILWAY_',
  'DYNO',
  'AWS_',
  'ECS_',
  'GOOGLE_',
  'K_',
  'VERCEL_',
  'LC_',
  'XDG_',
  'SSH_',
];

/** Prefixes that say "this is meant for Gatehouse" (next-auth's old one included). */
const ourPrefixes = ['GATEHOUSE_', 'AUTH_', 'NEXTAUTH_'];

/**
 * A Kubernetes service link (`<SERVICE>_PORT=tcp://10.0.0.1:3000` and friends) for a Service
 * named like us: injected by the platform, not set by the operator.
 */
function isServiceLink(name: string, value: string | undefined): boolean {
  if (/_SERVICE_(HOST|PORT(_[A-Z0-9_]+)?)$/.test(name)) return true;
  if (/_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name)) return true;
  return /_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value ?? '');
}

/** The known name within reach of `name`, or undefined. */
function nearest(name: string, known: readonly string[]): string | undefined {
  // One edit for a short name (HOST, PORT), two from nine letters on (DATABSE_URL).
  const limit = name.length >= 9 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    // Only whether it is within reach, worked out no further than that (every variable of the
    // environment against every name, at every start).
    const distance = editsWithin(name, candidate, limit);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= limit ? best : undefined;
}

/**
 * One warning per variable that Gatehouse does not read but that looks meant for it: within
 * an edit or two of a name it reads (`DATABSE_URL`), in the wrong case (`database_url`), or
 * under one of its prefixes (`GATEHOUSE_*`, `AUTH_*`, `NEXTAUTH_*`). Names only, never values:
 * a value may be a secret. Gatehouse configures Auth.js itself and never hands it the
 * environment, so Auth.js's own variables (`AUTH_DEBUG`, `AUTH_REDIRECT_PROXY_URL`,
 * `AUTH_SECRET_1`) are warned about too: they would do nothing.
 */
export function unknownVariableWarnings(
  env: NodeJS.ProcessEnv,
  known: ReadonlySet<string>,
): string[] {
  const knownNames = [...known];
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || machineryVariables.has(name) || platformVariables.has(name)) continue;
    if (machineryPrefixes.some((prefix) => name.startsWith(prefix))) continue;
    if (isServiceLink(name, env[name])) continue;
    const upper = name.toUpperCase();
    const ours = ourPrefixes.some((prefix) => upper.startsWith(prefix));
    if (!ours && platformPrefixes.some((prefix) => name.startsWith(prefix))) continue;
    const suggestion =
      (known.has(upper) ? upper : undefined) ??
      // next-auth v4 names: NEXTAUTH_URL is AUTH_URL here.
      (upper.startsWith('NEXTAUTH_') && known.has(upper.slice('NEXT'.length))
        ? upper.slice('NEXT'.length)
        : undefined) ??
      nearest(upper, knownNames);
    if (suggestion !== undefined) {
      warnings.push(`${name} is set but Gatehouse does not read it; did you mean ${suggestion}?`);
    } else if (ours) {
      warnings.push(
        `${name} is set but Gatehouse does not read it (the variables it reads: docs/configuration.md)`,
      );
    }
  }
  return warnings;
}
