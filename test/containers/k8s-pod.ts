// Runs the pod template of deploy/k8s's Deployment under Docker, as close to what a kubelet
// does as a single `docker run` allows, and drives its life cycle the way a kubelet would:
// startup probe, then liveness and readiness on their periods, then preStop, SIGTERM with the
// remaining grace period, and the exit code. Each step is reported as one JSON line.
//
//   node test/containers/k8s-pod.ts --image TAG --port PORT [--env KEY=VALUE | --env KEY]...
//        [--secret KEY=VALUE | --secret KEY]... [--name NAME] [--observe-seconds 12]
//        [--dir deploy/k8s] [--dry-run]
//
// The Docker engine here has no bridge network, so the container shares the host's network:
// the service listens on 127.0.0.1:PORT (PORT and HOST are set from --port; --env overrides
// the rest, e.g. DATABASE_URL, AUTH_SECRET, AUTH_URL) and every probe aimed at the container's
// port is sent there. `--env KEY` without a value takes KEY from this process's environment.
// Values are handed to docker through its environment (`docker run --env KEY`), never on its
// command line, where any local user could read them. `--secret KEY=VALUE` (or `--secret KEY`,
// from this environment) gives the pod's Secrets that key in place of the example's
// placeholder, wherever the pod takes it: an env entry or a `secret` volume. A `secret` volume
// becomes a read-only bind mount of files written as the kubelet writes them (root-owned,
// `defaultMode`/`mode`, and with an fsGroup group-owned by it and group-readable).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type {
  IContainer,
  IEnvFromSource,
  ILifecycleHandler,
  IProbe,
  IVolume,
  IVolumeMount,
} from 'kubernetes-models/v1';
import {
  defaultDir,
  loadBase,
  rendered,
  validateBase,
  type Base,
  type Manifest,
} from './k8s-validate.ts';

const usage =
  'usage: node test/containers/k8s-pod.ts --image TAG --port PORT [--env KEY=VALUE|KEY]...\n' +
  '       [--secret KEY=VALUE|KEY]... [--name NAME] [--observe-seconds N] [--dir DIR] [--dry-run]';

/** An expected failure: reported by its message alone; exit 2 for usage errors. */
class Failure extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Cli {
  image: string;
  port: number;
  name: string;
  dir: string;
  observeSeconds: number;
  dryRun: boolean;
  /** The container's environment set here, over the manifests' (PORT and HOST included). */
  overrides: Map<string, string>;
  /** Keys whose values came from this process's environment: secrets, never printed. */
  hidden: Set<string>;
  /** Keys of the pod's Secrets set here, over the base's placeholders; never printed. */
  secrets: Map<string, string>;
}

export function parseCli(argv: string[], environment = process.env): Cli {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        image: { type: 'string' },
        port: { type: 'string' },
        env: { type: 'string', multiple: true, default: [] },
        secret: { type: 'string', multiple: true, default: [] },
        name: { type: 'string', default: `gatehouse-k8s-pod-${process.pid}` },
        'observe-seconds': { type: 'string', default: '12' },
        dir: { type: 'string', default: defaultDir },
        'dry-run': { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new Failure(`${(error as Error).message}\n${usage}`, 2);
  }
  const port = Number(values.port);
  const observeSeconds = Number(values['observe-seconds']);
  const bad = (message: string) => new Failure(`${message}\n${usage}`, 2);
  if (!values.image) throw bad('--image is required');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad('--port must be a TCP port');
  if (!(observeSeconds >= 0)) throw bad('--observe-seconds must be a number >= 0');
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(values.name)) throw bad('--name: not a container name');
  // Host networking: listen on loopback only, on the port the probes are sent to.
  const overrides = new Map([
    ['PORT', String(port)],
    ['HOST', '127.0.0.1'],
  ]);
  // Values taken from the environment are treated as secrets: never printed.
  const hidden = new Set<string>();
  for (const entry of values.env) {
    const [key = '', ...rest] = entry.split('=');
    const value = rest.length > 0 ? rest.join('=') : environment[key];
    if (!envName.test(key)) throw bad(`--env ${entry}: bad variable name`);
    if (value === undefined) throw bad(`--env ${key}: not set in this environment`);
    if (rest.length === 0) hidden.add(key);
    overrides.set(key, value);
  }
  const secrets = new Map<string, string>();
  for (const entry of values.secret) {
    const [key = '', ...rest] = entry.split('=');
    const value = rest.length > 0 ? rest.join('=') : environment[key];
    if (!/^[-._a-zA-Z0-9]+$/.test(key)) throw bad(`--secret ${key}: bad Secret key`);
    if (value === undefined) throw bad(`--secret ${key}: not set in this environment`);
    secrets.set(key, value);
  }
  if (overrides.get('PORT') !== String(port))
    throw bad('--env PORT must equal --port (the probes are sent to --port)');
  return {
    image: values.image,
    port,
    name: values.name,
    dir: values.dir,
    observeSeconds,
    dryRun: values['dry-run'],
    overrides,
    hidden,
    secrets,
  };
}

const units: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
for (const [i, suffix] of ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'].entries())
  units[suffix] = 1024 ** (i + 1);

/** A Kubernetes quantity ("256Mi", "250m", "1") as a number. */
export function quantity(value: string | number): number {
  const match = /^(\d+(?:\.\d+)?)([a-zA-Z]{0,2})$/.exec(String(value));
  if (!match || (match[2] && !(match[2] in units)))
    throw new Failure(`unsupported quantity ${value}`);
  return Number(match[1]) * (match[2] ? (units[match[2]] as number) : 1);
}

/** kubelet's $(VAR) expansion: known variables are replaced, $$ escapes a $. */
export function expand(text: string, env: Map<string, string>): string {
  return String(text).replace(
    /\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g,
    (whole, name: string | undefined) =>
      name === undefined ? '$' : env.has(name) ? (env.get(name) as string) : whole,
  );
}

function find(base: Base, kind: string, name: string | undefined): Manifest | undefined {
  return base.docs.find(({ doc }) => doc.kind === kind && doc.metadata?.name === name)?.doc;
}

/**
 * A ConfigMap's or Secret's key/value pairs, decoded as the kubelet hands them over; a
 * Secret's keys given in `secrets` (--secret) replace the base's.
 */
function dataOf(doc: Manifest, secrets = new Map<string, string>()): Map<string, string> {
  const data = Object.entries(doc.data ?? {}).map(([key, value]): [string, string] => [
    key,
    doc.kind === 'Secret' ? Buffer.from(value, 'base64').toString('utf8') : value,
  ]);
  const all = new Map([...data, ...Object.entries(doc.stringData ?? {})]);
  if (doc.kind === 'Secret') for (const [key, value] of secrets) all.set(key, value);
  return all;
}

/**
 * The container's environment in the kubelet's order: envFrom sources, then env entries
 * (each may refer to earlier ones as $(VAR)), then the overrides. `secret` names the keys a
 * Secret supplied, so that they are never printed.
 */
export function resolveEnv(
  base: Base,
  container: IContainer,
  overrides: Map<string, string>,
  secrets = new Map<string, string>(),
): { env: Map<string, string>; secret: Set<string> } {
  const env = new Map<string, string>();
  const secret = new Set<string>();
  const source = (ref: { name?: string; optional?: boolean }, kind: 'ConfigMap' | 'Secret') => {
    const doc = find(base, kind, ref.name);
    if (!doc && !ref.optional) throw new Failure(`${kind} ${ref.name} not found in the base`);
    return doc ? dataOf(doc, secrets) : new Map<string, string>();
  };
  for (const from of container.envFrom ?? ([] as IEnvFromSource[])) {
    const kind = from.secretRef ? 'Secret' : 'ConfigMap';
    for (const [key, value] of source(from.secretRef ?? from.configMapRef ?? {}, kind)) {
      env.set(`${from.prefix ?? ''}${key}`, value);
      if (kind === 'Secret') secret.add(`${from.prefix ?? ''}${key}`);
    }
  }
  for (const entry of container.env ?? []) {
    const from = entry.valueFrom;
    if (!from) {
      env.set(entry.name, expand(entry.value ?? '', env));
      continue;
    }
    const ref = from.secretKeyRef ?? from.configMapKeyRef;
    if (!ref) throw new Failure(`env ${entry.name}: only configMapKeyRef/secretKeyRef here`);
    const kind = from.secretKeyRef ? 'Secret' : 'ConfigMap';
    const data = source(ref, kind);
    if (!data.has(ref.key) && !ref.optional)
      throw new Failure(`env ${entry.name}: ${kind} ${ref.name} has no key ${ref.key}`);
    if (data.has(ref.key)) env.set(entry.name, data.get(ref.key) as string);
    if (kind === 'Secret') secret.add(entry.name);
  }
  for (const [key, value] of overrides) env.set(key, value);
  return { env, secret };
}

/** Probe defaults are the API's; the port is whatever --port the service listens on. */
/** A probe (or a preStop httpGet) with the API's defaults filled in. */
export interface Probe {
  type: 'httpGet' | 'tcpSocket' | 'exec';
  path: string;
  headers: Record<string, string>;
  command?: string[];
  port: number;
  initialDelay: number;
  period: number;
  timeout: number;
  failureThreshold: number;
}

function normaliseProbe(
  probe: IProbe | undefined,
  container: IContainer,
  port: number,
): Probe | undefined {
  if (!probe) return undefined;
  const action = probe.httpGet ?? probe.tcpSocket;
  if (probe.grpc) throw new Failure('grpc probes are not supported here');
  if (probe.httpGet?.host || probe.tcpSocket?.host) throw new Failure('probe host not supported');
  if ((probe.httpGet?.scheme ?? 'HTTP') !== 'HTTP') throw new Failure('only HTTP probes');
  const declared = container.ports ?? [];
  if (action) {
    const target =
      typeof action.port === 'string'
        ? declared.find((p) => p.name === action.port)?.containerPort
        : action.port;
    // Under host networking only one container port can be moved to --port.
    if (target === undefined || declared.length > 1 || declared[0]?.containerPort !== target)
      throw new Failure(`probe port ${action.port} is not the container's one declared port`);
  }
  return {
    type: probe.httpGet ? 'httpGet' : probe.tcpSocket ? 'tcpSocket' : 'exec',
    path: probe.httpGet?.path ?? '/',
    headers: Object.fromEntries((probe.httpGet?.httpHeaders ?? []).map((h) => [h.name, h.value])),
    command: probe.exec?.command,
    port,
    initialDelay: probe.initialDelaySeconds ?? 0,
    period: probe.periodSeconds ?? 10,
    timeout: probe.timeoutSeconds ?? 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}

function tmpfsOptions(
  mount: IVolumeMount,
  volume: IVolume | undefined,
  user: number | undefined,
  fsGroup: number | undefined,
): string {
  if (!volume?.emptyDir) throw new Failure(`volume ${mount.name}: only emptyDir is supported`);
  if (mount.subPath || mount.subPathExpr) throw new Failure(`${mount.mountPath}: no subPath`);
  // An emptyDir is a fresh directory, mode 0777, exec allowed; fsGroup makes it group-owned
  // by that group with the setgid bit. Docker's tmpfs defaults to noexec, hence `exec`. Docker
  // 20.10 gives a tmpfs the mode of the image's directory at that path whatever `mode=` says
  // (measured: the image's 0700 /data stayed 0700), so the pod's user owns it instead: what
  // matters, that this user may write there, holds as it does under an emptyDir.
  const options = [mount.readOnly ? 'ro' : 'rw', 'exec', 'nosuid', 'nodev'];
  if (volume.emptyDir.sizeLimit) options.push(`size=${quantity(volume.emptyDir.sizeLimit)}`);
  if (user !== undefined) options.push(`uid=${user}`);
  options.push(...(fsGroup === undefined ? ['mode=0777'] : [`gid=${fsGroup}`, 'mode=2777']));
  return `${mount.mountPath}:${options.join(',')}`;
}

/** One file of a `secret` volume, as the kubelet writes it. */
export interface SecretFile {
  /** Where it is written on this machine (bind-mounted read-only into the container). */
  hostPath: string;
  containerPath: string;
  content: string;
  mode: number;
  /** Its group: the pod's fsGroup, else root's. */
  gid: number;
}

/**
 * A `secret` volume as the kubelet mounts it: the Secret's keys (or just `items`) as files,
 * owned by root, mode `mode` ?? `defaultMode` ?? 0644; with an fsGroup, group-owned by it and
 * made group-readable (the kubelet adds 0440 to a read-only volume's files). Always read-only.
 */
function secretVolume(
  base: Base,
  mount: IVolumeMount,
  volume: IVolume,
  fsGroup: number | undefined,
  hostDir: string,
  secrets: Map<string, string>,
): SecretFile[] {
  const source = volume.secret ?? {};
  if (mount.subPath || mount.subPathExpr) throw new Failure(`${mount.mountPath}: no subPath`);
  const doc = find(base, 'Secret', source.secretName);
  if (!doc) {
    if (source.optional) return [];
    throw new Failure(`volume ${volume.name}: Secret ${source.secretName} not found in the base`);
  }
  const data = dataOf(doc, secrets);
  const items: { key: string; path: string; mode?: number }[] =
    source.items ?? [...data.keys()].map((key) => ({ key, path: key }));
  const files: SecretFile[] = [];
  for (const item of items) {
    const content = data.get(item.key);
    if (content === undefined) {
      if (source.optional) continue;
      throw new Failure(
        `volume ${volume.name}: Secret ${source.secretName} has no key ${item.key}`,
      );
    }
    if (item.path.split('/').includes('..') || path.isAbsolute(item.path))
      throw new Failure(`volume ${volume.name}: bad item path ${item.path}`);
    const mode = item.mode ?? source.defaultMode ?? 0o644;
    files.push({
      hostPath: path.join(hostDir, item.path),
      containerPath: path.posix.join(mount.mountPath, item.path),
      content,
      mode: fsGroup === undefined ? mode : mode | 0o440,
      gid: fsGroup ?? 0,
    });
  }
  return files;
}

/** Where this run keeps its `secret` volumes' files on this machine. */
export const secretsRootOf = (cli: Cli) => path.join(os.tmpdir(), `${cli.name}-secrets`);

/**
 * Everything needed to run and judge the pod: the `docker run` argv (without "docker"), the
 * environment, the probes and the termination settings.
 */
export interface Plan {
  id: string;
  container: IContainer;
  /** `docker run …` without "docker". */
  args: string[];
  /** Where the image is in `args`: what follows it is the container's command. */
  imageIndex: number;
  env: Map<string, string>;
  /** Keys whose values are never printed. */
  secret: Set<string>;
  /** The files of every `secret` volume, written before `docker run`. */
  secretFiles: SecretFile[];
  /** Their volumes' folders on this machine, each bind-mounted, with its group. */
  secretDirs: { hostDir: string; gid: number }[];
  probes: { startup?: Probe; liveness?: Probe; readiness?: Probe };
  preStop: ILifecycleHandler | undefined;
  grace: number;
  user: number | undefined;
  group: number | undefined;
  fsGroup: number | undefined;
  runAsNonRoot: boolean;
  readOnlyRoot: boolean;
  dropsAll: boolean;
  noNewPrivileges: boolean;
  writable: string[];
}

export function buildPlan(base: Base, cli: Cli): Plan {
  const deployments = rendered(base).filter((e) => e.inResources && e.doc.kind === 'Deployment');
  const deployment = deployments[0]?.doc;
  if (deployments.length !== 1 || deployment === undefined)
    throw new Failure('the base must hold exactly one Deployment');
  const template = deployment.spec?.template;
  const spec = template?.spec;
  if (spec === undefined) throw new Failure('the Deployment has no pod template');
  if (spec.initContainers?.length || spec.containers.length !== 1)
    throw new Failure('only a pod with exactly one container (no init containers) is supported');
  const container = spec.containers[0] as IContainer;
  const pod = spec.securityContext ?? {};
  const own = container.securityContext ?? {};
  const user = own.runAsUser ?? pod.runAsUser;
  const group = own.runAsGroup ?? pod.runAsGroup;
  const { env, secret } = resolveEnv(base, container, cli.overrides, cli.secrets);
  for (const key of cli.hidden ?? []) secret.add(key);

  // The kubelet ignores the image's HEALTHCHECK; the probes below stand in for it.
  const args = ['run', '--detach', '--name', cli.name, '--network', 'host', '--no-healthcheck'];
  args.push('--label', 'gatehouse.k8s-pod=1');
  for (const [key, value] of Object.entries(template?.metadata?.labels ?? {}))
    args.push('--label', `${key}=${value}`);
  if (group !== undefined && user === undefined) throw new Failure('runAsGroup needs runAsUser');
  if (user !== undefined) args.push('--user', group === undefined ? `${user}` : `${user}:${group}`);
  // The kubelet adds fsGroup and supplementalGroups to the process's groups.
  for (const extra of [pod.fsGroup, ...(pod.supplementalGroups ?? [])])
    if (extra !== undefined) args.push('--group-add', String(extra));
  if (own.privileged) throw new Failure('privileged containers are not supported here');
  if (own.readOnlyRootFilesystem) args.push('--read-only');
  for (const cap of own.capabilities?.drop ?? []) args.push('--cap-drop', cap);
  for (const cap of own.capabilities?.add ?? []) args.push('--cap-add', cap);
  if (own.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  // Docker applies its default profile unless told otherwise; Kubernetes runs without one
  // unless RuntimeDefault is asked for.
  const seccomp = (own.seccompProfile ?? pod.seccompProfile)?.type ?? 'Unconfined';
  if (seccomp === 'Localhost') throw new Failure('Localhost seccomp profiles are not supported');
  if (seccomp === 'Unconfined') args.push('--security-opt', 'seccomp=unconfined');
  const secretFiles: SecretFile[] = [];
  const secretDirs: { hostDir: string; gid: number }[] = [];
  // A secret volume is read-only whatever its mount says.
  const readOnlyMounts = new Set<string>();
  for (const mount of container.volumeMounts ?? []) {
    const volume = (spec.volumes ?? []).find((v) => v.name === mount.name);
    if (volume?.secret) {
      const hostDir = path.join(secretsRootOf(cli), volume.name);
      secretFiles.push(...secretVolume(base, mount, volume, pod.fsGroup, hostDir, cli.secrets));
      secretDirs.push({ hostDir, gid: pod.fsGroup ?? 0 });
      readOnlyMounts.add(mount.mountPath);
      args.push('--mount', `type=bind,source=${hostDir},target=${mount.mountPath},readonly`);
      continue;
    }
    args.push('--tmpfs', tmpfsOptions(mount, volume, user, pod.fsGroup));
  }
  // Limits map to the cgroup limits the kubelet sets; kubelet nodes run without swap. The
  // memory request has no cgroup effect by default, so nothing to map.
  const { limits = {}, requests = {} } = container.resources ?? {};
  if (limits.memory) {
    const bytes = String(Math.round(quantity(limits.memory)));
    args.push('--memory', bytes, '--memory-swap', bytes);
  }
  if (limits.cpu) args.push('--cpus', String(quantity(limits.cpu)));
  const cpuRequest = requests.cpu ?? limits.cpu;
  if (cpuRequest)
    args.push('--cpu-shares', String(Math.max(2, Math.floor(quantity(cpuRequest) * 1024))));
  if (container.workingDir) args.push('--workdir', container.workingDir);
  const command = (container.command ?? []).map((part) => expand(part, env));
  // --entrypoint also drops the image's CMD, as `command` does in Kubernetes.
  if (command.length > 0) args.push('--entrypoint', command[0]);
  for (const key of env.keys()) args.push('--env', key);
  const imageIndex = args.length;
  args.push(cli.image, ...command.slice(1));
  args.push(...(container.args ?? []).map((part) => expand(part, env)));

  const probe = (name: 'startupProbe' | 'livenessProbe' | 'readinessProbe') =>
    normaliseProbe(container[name], container, cli.port);
  return {
    id: `Deployment/${deployment.metadata?.name}`,
    container,
    args,
    imageIndex,
    env,
    secret,
    secretFiles,
    secretDirs,
    probes: {
      startup: probe('startupProbe'),
      liveness: probe('livenessProbe'),
      readiness: probe('readinessProbe'),
    },
    preStop: container.lifecycle?.preStop,
    grace: spec.terminationGracePeriodSeconds ?? 30,
    user,
    group,
    fsGroup: pod.fsGroup,
    runAsNonRoot: own.runAsNonRoot ?? pod.runAsNonRoot ?? false,
    readOnlyRoot: own.readOnlyRootFilesystem === true,
    dropsAll: (own.capabilities?.drop ?? []).includes('ALL'),
    noNewPrivileges: own.allowPrivilegeEscalation === false,
    writable: (container.volumeMounts ?? [])
      .filter((m) => !m.readOnly && !readOnlyMounts.has(m.mountPath))
      .map((m) => m.mountPath),
  };
}

const flags = new Set(['--detach', '--no-healthcheck', '--read-only']);
const quote = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

function describeProbe(name: string, p: Probe | undefined): string {
  if (!p) return `#   ${name}: none`;
  const target =
    p.type === 'httpGet'
      ? `httpGet http://127.0.0.1:${p.port}${p.path}`
      : p.type === 'tcpSocket'
        ? `tcpSocket 127.0.0.1:${p.port}`
        : `exec ${(p.command ?? []).join(' ')}`;
  return `#   ${name}: ${target}, initial delay ${p.initialDelay}s, every ${p.period}s, timeout ${p.timeout}s, failureThreshold ${p.failureThreshold}`;
}

export function dryRunText(plan: Plan, cli: Cli): string {
  const lines = [`# ${plan.id} from ${cli.dir}, as \`docker\` would be run (nothing is run):`];
  // One option (with its value) per line; the image and its arguments on the last.
  const words = plan.args.map(quote);
  const image = plan.imageIndex;
  const options = [];
  for (let i = 1; i < image; i += flags.has(words[i] as string) ? 1 : 2)
    options.push(
      flags.has(words[i] as string) ? (words[i] as string) : `${words[i]} ${words[i + 1]}`,
    );
  lines.push(['docker run', ...options, words.slice(image).join(' ')].join(' \\\n    '));
  lines.push('# environment given to docker (docker reads the values; its argv has names only):');
  for (const [key, value] of plan.env) {
    const shown = plan.secret.has(key) ? '<redacted>' : value;
    const warning = value.includes('REPLACE-ME') ? `   <- placeholder: pass --env ${key}=…` : '';
    lines.push(`#   ${key}=${shown}${warning}`);
  }
  for (const file of plan.secretFiles) {
    const warning = file.content.includes('REPLACE-ME')
      ? '   <- placeholder: pass --secret KEY=…'
      : '';
    lines.push(
      `# secret file ${file.containerPath}: mode 0${file.mode.toString(8)}, root:${file.gid}, <redacted>${warning}`,
    );
  }
  lines.push('# probes (the container port is --port under host networking):');
  for (const [name, p] of Object.entries(plan.probes)) lines.push(describeProbe(name, p));
  lines.push(`#   preStop: ${JSON.stringify(plan.preStop ?? null)}`);
  lines.push(
    `#   terminationGracePeriodSeconds ${plan.grace}: docker stop --time = ${plan.grace} - preStop duration (at least 2)`,
  );
  lines.push(
    `# checks: uid ${plan.user} (non-root: ${plan.runAsNonRoot}), root fs read-only: ${plan.readOnlyRoot}, writable: ${plan.writable.join(' ')}`,
  );
  return lines.join('\n');
}

// ---- running -------------------------------------------------------------------------------

const now = () => performance.now();
/** [200, 200, 503] -> "200 x2, 503 x1": the order matters, the repetitions do not. */
const runs = (values: unknown[]) =>
  values
    .reduce<[unknown, number][]>((out, value) => {
      const last = out.at(-1);
      if (last !== undefined && last[0] === value) last[1] += 1;
      else out.push([value, 1]);
      return out;
    }, [])
    .map(([value, count]) => `${value} x${count}`)
    .join(', ');

const seconds = (ms: number) => Math.round(ms) / 1000;

interface Docker {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the docker CLI without a shell; never rejects. */
function docker(
  args: string[],
  { env = process.env, timeoutMs = 60_000 }: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Docker> {
  return new Promise((resolve) => {
    execFile(
      'docker',
      args,
      { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr: stderr || (error && code === -1 ? error.message : '') });
      },
    );
  });
}

/** Like the kubelet: a fresh connection, its User-Agent, 200-399 within the timeout. */
/** One probe's outcome; `ms` its duration. */
interface ProbeResult {
  ok: boolean;
  status?: number;
  error?: string;
  exitCode?: number;
  stderr?: string;
  ms?: number;
}

function httpProbe(p: Probe, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const started = now();
    let settled = false;
    const done = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, ms: Math.round(now() - started) });
    };
    const request = http.get(
      {
        host: '127.0.0.1',
        port: p.port,
        path: p.path,
        agent: false,
        signal: AbortSignal.timeout(timeoutMs),
        headers: { 'User-Agent': 'kube-probe/1.30', Accept: '*/*', ...p.headers },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        response.on('error', (error: NodeJS.ErrnoException) =>
          done({ ok: false, status, error: error.code ?? 'error' }),
        );
        response.on('end', () => done({ ok: status >= 200 && status < 400, status }));
        response.resume();
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      done({ ok: false, error: error.name === 'AbortError' ? 'timeout' : (error.code ?? 'error') }),
    );
  });
}

function tcpProbe(p: Pick<Probe, 'port'>, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const started = now();
    const socket = net.connect({ host: '127.0.0.1', port: p.port, timeout: timeoutMs });
    const done = (result: ProbeResult) => {
      socket.destroy();
      resolve({ ...result, ms: Math.round(now() - started) });
    };
    socket.once('connect', () => done({ ok: true }));
    socket.once('timeout', () => done({ ok: false, error: 'timeout' }));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done({ ok: false, error: error.code ?? 'error' }),
    );
  });
}

/** What a run of the pod carries from step to step. */
interface Context {
  plan: Plan;
  cli: Cli;
  log: Log;
  name: string;
  /** performance.now() when `docker run` returned. */
  t0: number;
  /** Whether the container is ours to remove. */
  owned: boolean;
}

type Log = (event: string, fields?: Record<string, unknown>) => void;

async function runProbe(
  p: Probe,
  ctx: Context,
  timeoutMs = p.timeout * 1000,
): Promise<ProbeResult> {
  if (p.type === 'httpGet') return httpProbe(p, timeoutMs);
  if (p.type === 'tcpSocket') return tcpProbe(p, timeoutMs);
  const started = now();
  const result = await docker(['exec', ctx.name, ...(p.command ?? [])], { timeoutMs });
  return { ok: result.code === 0, exitCode: result.code, ms: Math.round(now() - started) };
}

const sleepUntil = (at: number) => sleep(Math.max(0, at - now()));

/** What termination is watched with: the readiness probe, else a bare connection. */
const readinessOf = (ctx: Context): Probe =>
  ctx.plan.probes.readiness ?? {
    type: 'tcpSocket',
    port: ctx.cli.port,
    timeout: 1,
    path: '/',
    headers: {},
    initialDelay: 0,
    period: 10,
    failureThreshold: 3,
  };

async function isRunning(ctx: Context): Promise<boolean> {
  const result = await docker(['inspect', '--format', '{{.State.Running}}', ctx.name]);
  return result.stdout.trim() === 'true';
}

/** Probes until the first success; failureThreshold misses in a row and the kubelet restarts. */
async function startup(ctx: Context): Promise<number> {
  const p = ctx.plan.probes.startup;
  if (!p) {
    ctx.log('startup', { skipped: 'no startupProbe' });
    return 0;
  }
  let next = ctx.t0 + p.initialDelay * 1000;
  for (let attempt = 1; ; attempt += 1) {
    await sleepUntil(next);
    next = Math.max(next + p.period * 1000, now());
    const result = await runProbe(p, ctx);
    ctx.log('probe', { probe: 'startup', attempt, ...result });
    if (result.ok) {
      const took = seconds(now() - ctx.t0);
      ctx.log('startup', { ok: true, attempt, seconds: took });
      return took;
    }
    if (attempt >= p.failureThreshold)
      throw new Failure(`startupProbe failed ${attempt} times: the kubelet would restart it`);
    if (!(await isRunning(ctx))) throw new Failure('the container exited during start-up');
  }
}

/** What the pod's security context promised, checked from inside the running container. */
async function securityChecks(ctx: Context): Promise<void> {
  const { plan } = ctx;
  const exec = (...command: string[]) => docker(['exec', ctx.name, ...command]);
  const problems: string[] = [];
  const uid = (await exec('id', '-u')).stdout.trim();
  const gid = (await exec('id', '-g')).stdout.trim();
  const groups = (await exec('id', '-G')).stdout.trim().split(/\s+/);
  if (uid === '0' || uid === '') problems.push(`runs as uid "${uid}"`);
  if (plan.user !== undefined && uid !== String(plan.user)) problems.push(`uid ${uid}`);
  if (plan.group !== undefined && gid !== String(plan.group)) problems.push(`gid ${gid}`);
  if (plan.fsGroup !== undefined && !groups.includes(String(plan.fsGroup)))
    problems.push(`fsGroup ${plan.fsGroup} not among groups ${groups.join(',')}`);
  if (plan.readOnlyRoot) {
    // EROFS, not EACCES: a non-root user cannot write to / anyway, which would prove nothing.
    const touched = await exec('touch', '/probe-rofs');
    if (touched.code === 0) problems.push('the root file system is writable');
    else if (!/read-only file system/i.test(touched.stderr))
      problems.push(`touch /probe-rofs failed, but not as read-only: ${touched.stderr.trim()}`);
  }
  for (const dir of plan.writable) {
    const file = `${dir}/.k8s-pod-write-check`;
    const touched = await exec('touch', file);
    if (touched.code !== 0) problems.push(`${dir} is not writable: ${touched.stderr.trim()}`);
    else await exec('rm', '-f', file);
  }
  for (const file of plan.secretFiles) {
    const mode = (await exec('stat', '-c', '%a %g', file.containerPath)).stdout.trim();
    if (mode !== `${file.mode.toString(8)} ${file.gid}`)
      problems.push(`${file.containerPath}: mode and group "${mode}"`);
    if ((await exec('test', '-r', file.containerPath)).code !== 0)
      problems.push(`${file.containerPath} is not readable by the pod's user`);
  }
  // What came as files must not also be in the process's environment.
  const environ = (await exec('cat', '/proc/1/environ')).stdout.split('\0');
  for (const file of plan.secretFiles)
    if (environ.some((entry) => entry.slice(entry.indexOf('=') + 1) === file.content))
      problems.push(`${file.containerPath}'s content is also in the environment`);
  const status = (await exec('cat', '/proc/1/status')).stdout;
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1];
  if (plan.dropsAll && !/^0+$/.test(field('CapBnd') ?? '')) problems.push('capabilities remain');
  if (plan.noNewPrivileges && field('NoNewPrivs') !== '1') problems.push('NoNewPrivs is not set');
  ctx.log('security', { ok: problems.length === 0, uid, gid, groups, problems });
  if (problems.length > 0) throw new Failure(`security context not in effect: ${problems[0]}`);
}

/** Liveness and readiness on their own periods for the observation window (at least once). */
async function observe(ctx: Context): Promise<void> {
  const until = now() + ctx.cli.observeSeconds * 1000;
  const watch = async (name: 'liveness' | 'readiness') => {
    const p = ctx.plan.probes[name];
    if (!p) {
      ctx.log('observe', { probe: name, skipped: 'none defined' });
      return;
    }
    let next = Math.max(now(), ctx.t0 + p.initialDelay * 1000);
    let passed = 0;
    do {
      await sleepUntil(next);
      next = Math.max(next + p.period * 1000, now());
      const result = await runProbe(p, ctx);
      ctx.log('probe', { probe: name, ...result });
      // Stricter than a kubelet, which tolerates failureThreshold - 1 misses: on a healthy
      // service with a healthy database, any miss is a finding.
      if (!result.ok) throw new Failure(`${name} probe failed: ${JSON.stringify(result)}`);
      passed += 1;
    } while (next < until);
    ctx.log('observe', { probe: name, ok: true, consecutiveSuccesses: passed });
  };
  // allSettled: the other probe's loop ends on its own within the window; report the first miss.
  const outcomes = await Promise.allSettled([watch('liveness'), watch('readiness')]);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

async function runHook(hook: ILifecycleHandler, ctx: Context): Promise<ProbeResult> {
  const timeoutMs = ctx.plan.grace * 1000;
  if (hook.exec) {
    const result = await docker(['exec', ctx.name, ...(hook.exec.command ?? [])], {
      timeoutMs,
    });
    return { ok: result.code === 0, exitCode: result.code, stderr: result.stderr.trim() };
  }
  if (hook.httpGet) {
    const target = normaliseProbe({ httpGet: hook.httpGet }, ctx.plan.container, ctx.cli.port);
    return httpProbe(target as Probe, timeoutMs);
  }
  if (hook.sleep) return sleep(hook.sleep.seconds * 1000).then(() => ({ ok: true }));
  throw new Failure(`unsupported preStop handler ${JSON.stringify(hook)}`);
}

/** preStop runs before SIGTERM: the service does not know yet and must stay ready. */
async function preStop(ctx: Context): Promise<number> {
  const started = now();
  if (!ctx.plan.preStop) {
    ctx.log('preStop', { skipped: 'none defined' });
    return 0;
  }
  let finished = false;
  const hook = runHook(ctx.plan.preStop, ctx).finally(() => (finished = true));
  const samples: ProbeResult[] = [];
  while (!finished) {
    const result = await runProbe(readinessOf(ctx), ctx);
    ctx.log('probe', { probe: 'readiness', during: 'preStop', ...result });
    samples.push(result);
    await Promise.race([hook, sleep(1000)]);
  }
  const result = await hook;
  const took = seconds(now() - started);
  ctx.log('preStop', { ...result, seconds: took, readinessSamples: samples.length });
  if (!result.ok) throw new Failure(`the preStop hook failed: ${JSON.stringify(result)}`);
  if (samples.some((sample) => !sample.ok || (sample.status ?? 200) !== 200))
    throw new Failure('readiness was not 200 while preStop ran (before any SIGTERM)');
  return took;
}

/**
 * SIGTERM with what is left of the grace period (the kubelet's countdown includes preStop and
 * grants at least 2 s), watching readiness turn 503 or refuse, then the exit code.
 */
async function terminate(
  ctx: Context,
  preStopSeconds: number,
): Promise<{ stopSeconds: number; graceLeftSeconds: number }> {
  const grace = Math.max(2, Math.floor(ctx.plan.grace - preStopSeconds));
  const started = now();
  let stopped = false;
  const stopping = docker(['stop', '--time', String(grace), ctx.name], {
    timeoutMs: (grace + 30) * 1000,
  }).finally(() => (stopped = true));
  const samples: (ProbeResult & { atMs: number })[] = [];
  while (!stopped) {
    const result = await runProbe(readinessOf(ctx), ctx);
    samples.push({ ...result, atMs: Math.round(now() - started) });
    await Promise.race([stopping, sleep(100)]);
  }
  const stop = await stopping;
  const tookSeconds = seconds(now() - started);
  const after = await runProbe(readinessOf(ctx), ctx);
  const inspected = await docker(['inspect', '--format', '{{json .State}}', ctx.name]);
  const state = (inspected.code === 0 ? JSON.parse(inspected.stdout) : {}) as {
    ExitCode?: number;
    OOMKilled?: boolean;
  };
  const firstDown = samples.findIndex((sample) => !sample.ok);
  const notReady = firstDown < 0 ? [] : samples.slice(firstDown);
  ctx.log('stop', {
    graceSeconds: grace,
    tookSeconds,
    exitCode: state.ExitCode,
    oomKilled: state.OOMKilled,
    readinessWhileStopping: runs(samples.map((sample) => sample.status ?? sample.error)),
    readinessAfterExit: after.status ?? after.error,
    notReadyAfterSeconds:
      firstDown < 0 ? null : (samples[firstDown] as { atMs: number }).atMs / 1000,
  });
  if (stop.code !== 0) throw new Failure(`docker stop failed: ${stop.stderr.trim()}`);
  if (state.OOMKilled) throw new Failure('the container was OOM-killed');
  if (state.ExitCode !== 0)
    throw new Failure(
      `exit code ${String(state.ExitCode)} after ${tookSeconds.toFixed(1)} s` +
        (state.ExitCode === 137 ? ` (killed: no exit within the ${grace} s left)` : ''),
    );
  if (notReady.some((sample) => sample.ok))
    throw new Failure('readiness answered 200 again after it had gone down');
  if (after.ok) throw new Failure('something still answers readiness after the container exited');
  return { stopSeconds: tookSeconds, graceLeftSeconds: grace };
}

async function checkRunAsNonRoot(ctx: Context): Promise<void> {
  if (!ctx.plan.runAsNonRoot) return;
  let uid: number | string | undefined = ctx.plan.user;
  if (uid === undefined) {
    // As the kubelet: without runAsUser the image's USER must be a numeric non-zero uid.
    const image = await docker(['image', 'inspect', '--format', '{{.Config.User}}', ctx.cli.image]);
    if (image.code !== 0) throw new Failure(`image ${ctx.cli.image}: ${image.stderr.trim()}`);
    uid = image.stdout.trim().split(':')[0];
  }
  if (!/^\d+$/.test(String(uid)) || Number(uid) === 0)
    throw new Failure(`runAsNonRoot: the kubelet would refuse to start uid "${String(uid)}"`);
}

/** The `secret` volumes' files, as the kubelet leaves them: root-owned, read-only. */
function writeSecretFiles(plan: Plan, root: string): void {
  if (plan.secretDirs.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Failure('secret volumes are written root-owned, as the kubelet does: run as root');
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { mode: 0o700 });
  for (const { hostDir, gid } of plan.secretDirs) {
    fs.mkdirSync(hostDir, { mode: 0o755 });
    // The kubelet makes an fsGroup volume's folder group-owned (setgid) and group-searchable.
    fs.chownSync(hostDir, 0, gid);
    fs.chmodSync(hostDir, gid === 0 ? 0o755 : 0o2750);
  }
  for (const file of plan.secretFiles) {
    fs.mkdirSync(path.dirname(file.hostPath), { recursive: true });
    fs.writeFileSync(file.hostPath, file.content, { mode: 0o600 });
    fs.chownSync(file.hostPath, 0, file.gid);
    fs.chmodSync(file.hostPath, file.mode);
  }
}

async function run(
  plan: Plan,
  cli: Cli,
  log: Log,
): Promise<{
  startupSeconds: number;
  preStopSeconds: number;
  stopSeconds: number;
  graceLeftSeconds: number;
}> {
  const ctx: Context = { plan, cli, log, name: cli.name, t0: 0, owned: false };
  for (const [key, value] of plan.env)
    if (value.includes('REPLACE-ME'))
      throw new Failure(`${key} still holds the example Secret's placeholder: pass --env ${key}=…`);
  for (const file of plan.secretFiles)
    if (file.content.includes('REPLACE-ME'))
      throw new Failure(
        `${file.containerPath} still holds the example Secret's placeholder: pass --secret KEY=…`,
      );
  const server = await docker(['version', '--format', '{{.Server.Version}}']);
  if (server.code !== 0) throw new Failure(`docker is not reachable: ${server.stderr.trim()}`);
  log('docker', { server: server.stdout.trim(), image: cli.image, name: cli.name });
  if ((await docker(['container', 'inspect', cli.name])).code === 0)
    throw new Failure(`a container named ${cli.name} exists already; not touching it`);
  await checkRunAsNonRoot(ctx);

  const cleanup = async (failed: boolean) => {
    if (!ctx.owned) return;
    ctx.owned = false;
    if (failed) {
      const logs = await docker(['logs', '--tail', '40', cli.name]);
      process.stderr.write(`--- last container output ---\n${logs.stdout}${logs.stderr}`);
    }
    await docker(['rm', '--force', '--volumes', cli.name]);
    fs.rmSync(secretsRootOf(cli), { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    log('interrupted', { signal });
    void cleanup(false).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let failed = true;
  try {
    ctx.owned = true;
    writeSecretFiles(plan, secretsRootOf(cli));
    const started = await docker(plan.args, {
      env: { ...process.env, ...Object.fromEntries(plan.env) },
    });
    ctx.t0 = now();
    if (started.code !== 0) throw new Failure(`docker run failed: ${started.stderr.trim()}`);
    log('started', { container: started.stdout.trim().slice(0, 12) });
    const startupSeconds = await startup(ctx);
    await securityChecks(ctx);
    await observe(ctx);
    const preStopSeconds = await preStop(ctx);
    const stopped = await terminate(ctx, preStopSeconds);
    failed = false;
    return { startupSeconds, preStopSeconds, ...stopped };
  } finally {
    await cleanup(failed);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

async function main(argv: string[]): Promise<number> {
  const startedAt = now();
  const log: Log = (event, fields = {}) => {
    const t = Math.round(now() - startedAt) / 1000;
    console.log(JSON.stringify({ t, event, ...fields }));
  };
  try {
    const cli = parseCli(argv);
    const base = loadBase(cli.dir);
    const { problems } = await validateBase(base);
    if (problems.length > 0)
      throw new Failure(`the base does not validate:\n  ${problems.join('\n  ')}`);
    const plan = buildPlan(base, cli);
    if (cli.dryRun) {
      console.log(dryRunText(plan, cli));
      return 0;
    }
    const result = await run(plan, cli, log);
    log('ok', result);
    return 0;
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    log('fail', { error: error.message });
    process.stderr.write(`k8s-pod: ${error.message}\n`);
    return error.exitCode;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
