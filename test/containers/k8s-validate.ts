// Validates the kustomize base in deploy/k8s strictly and offline, against the Kubernetes
// OpenAPI schema that kubernetes-models 4.x ships (compiled into ajv validators).
//
//   node test/containers/k8s-validate.ts [DIR]          validate (exit 1 on any problem)
//   node test/containers/k8s-validate.ts --self-test    also prove that mistakes are caught
//
// Why not just `model.validate()`: the compiled validators ignore properties the schema does
// not name, so `readinesProbe` or `httpGet.paht` would pass (the API server drops such fields,
// with at most a warning, and the probe silently never runs). Here every object the document
// contains is wrapped in a Proxy while the official validator runs, recording which keys it
// reads: it reads every key its schema declares, and every key of a map (labels, data,
// resources), but never an undeclared one. Whatever it did not read is an unknown field.
import fs from 'node:fs';
import path from 'node:path';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import YAML from 'yaml';

const repoRoot = path.resolve(import.meta.dirname, '../..');
export const defaultDir = path.join(repoRoot, 'deploy/k8s');

/** Labels or data: string keys to (in a valid document) string values. */
type StringMap = Record<string, string>;

/**
 * A manifest as read from YAML: anything may be missing or of the wrong type until the schema
 * says otherwise; these are the fields this file and k8s-pod.ts look at.
 */
export interface Manifest {
  apiVersion?: unknown;
  kind?: string;
  metadata?: { name?: string; labels?: StringMap };
  spec?: {
    /** A Service's selector is a map of labels; a Deployment's and a PDB's hold matchLabels. */
    selector?: StringMap & { matchLabels?: StringMap };
    template?: { metadata?: { labels?: StringMap }; spec?: IPodSpec };
    scaleTargetRef?: { kind?: string; name?: string };
    /** A NetworkPolicy's pods. */
    podSelector?: { matchLabels?: StringMap };
  };
  data?: StringMap;
  stringData?: StringMap;
}

export interface Kustomization {
  apiVersion?: unknown;
  kind?: unknown;
  resources?: unknown;
  labels?: {
    pairs?: Record<string, unknown>;
    includeTemplates?: boolean;
    includeSelectors?: boolean;
  }[];
  [key: string]: unknown;
}

export interface Entry {
  file: string;
  /** Listed in the kustomization's resources (else a file beside them, checked all the same). */
  inResources: boolean;
  doc: Manifest;
}

export interface Base {
  dir: string;
  kustomization: Kustomization;
  docs: Entry[];
  problems: string[];
}

// Keys this validator models. The others kustomize knows would change what kubectl sends
// (generators, patches, images, …) without being checked here, so the base must not use them.
const modelledKeys = new Set(['apiVersion', 'kind', 'labels', 'resources']);
const otherKustomizeKeys = new Set(
  (
    'bases buildMetadata commonAnnotations commonLabels components configMapGenerator ' +
    'configurations crds generatorOptions generators helmCharts helmGlobals images metadata ' +
    'namePrefix nameSuffix namespace openapi patches patchesJson6902 patchesStrategicMerge ' +
    'replacements replicas secretGenerator sortOptions transformers validators vars'
  ).split(' '),
);
const labelKeys = new Set(['pairs', 'includeTemplates', 'includeSelectors']);

/** Kubernetes YAML is read by go-yaml as YAML 1.1: `on`/`yes` are booleans, `0700` is octal. */
function parseYaml(text: string): { errors: string[]; values: unknown[] } {
  const docs = YAML.parseAllDocuments(text, { version: '1.1', uniqueKeys: true });
  const errors = docs.flatMap((doc) => doc.errors.map((error) => error.message));
  return {
    errors,
    values: docs.map((doc) => doc.toJS() as unknown).filter((value) => value != null),
  };
}

/**
 * Reads the kustomization, its resources and every other *.yaml beside it (the example
 * Secret is deliberately not a resource, but a stale unchecked manifest would be worse).
 * Returns { kustomization, docs: [{ file, inResources, doc }], problems }.
 */
export function loadBase(dir = defaultDir): Base {
  const problems: string[] = [];
  const docs: Entry[] = [];
  const kustomizationFile = path.join(dir, 'kustomization.yaml');
  const parsed = parseYaml(fs.readFileSync(kustomizationFile, 'utf8'));
  for (const error of parsed.errors) problems.push(`kustomization.yaml: ${error}`);
  const kustomization = (parsed.values[0] ?? {}) as Kustomization;
  const resources: unknown[] = Array.isArray(kustomization.resources)
    ? kustomization.resources
    : [];
  const others = fs
    .readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml')
    .filter((file) => !resources.includes(file))
    .sort();
  for (const file of [...resources, ...others]) {
    const full = typeof file === 'string' ? path.join(dir, file) : '';
    if (!full || !fs.existsSync(full) || !fs.statSync(full).isFile()) continue;
    const { errors, values } = parseYaml(fs.readFileSync(full, 'utf8'));
    for (const error of errors) problems.push(`${file}: ${error}`);
    if (errors.length > 0) continue;
    for (const doc of values) {
      docs.push({
        file: String(file),
        inResources: resources.includes(file),
        doc: doc as Manifest,
      });
    }
  }
  return { dir, kustomization, docs, problems };
}

/** Only modelled keys, plain file resources that exist, once each. */
export function checkKustomization(kustomization: Kustomization, dir: string): string[] {
  const problems: string[] = [];
  const say = (where: string, message: string) =>
    problems.push(`kustomization.yaml ${where}: ${message}`);
  if (kustomization === null || typeof kustomization !== 'object' || Array.isArray(kustomization))
    return ['kustomization.yaml: not a mapping'];
  for (const key of Object.keys(kustomization)) {
    if (otherKustomizeKeys.has(key)) say(key, 'not modelled by this offline validator');
    else if (!modelledKeys.has(key)) say(key, 'unknown field');
  }
  if (kustomization.apiVersion !== 'kustomize.config.k8s.io/v1beta1')
    say('apiVersion', 'must be kustomize.config.k8s.io/v1beta1');
  if (kustomization.kind !== 'Kustomization') say('kind', 'must be Kustomization');
  const resources: unknown = kustomization.resources;
  if (!Array.isArray(resources) || resources.length === 0) say('resources', 'must be a list');
  const listed: unknown[] = Array.isArray(resources) ? resources : [];
  for (const [i, file] of listed.entries()) {
    const where = `resources[${i}]`;
    if (typeof file !== 'string' || !/^[\w.-]+\.ya?ml$/.test(file))
      say(where, `${JSON.stringify(file)} must be a YAML file in this folder (no URL, no dir)`);
    else if (!fs.existsSync(path.join(dir, file))) say(where, `${file} does not exist`);
    else if (listed.indexOf(file) !== i) say(where, `${file} is listed twice`);
  }
  const labels: unknown = kustomization.labels ?? [];
  if (!Array.isArray(labels)) say('labels', 'must be a list');
  const labelList: Kustomization['labels'] & unknown[] = Array.isArray(labels) ? labels : [];
  for (const [i, label] of labelList.entries()) {
    for (const key of Object.keys(label ?? {}))
      if (!labelKeys.has(key)) say(`labels[${i}].${key}`, 'unknown or not modelled');
    // Selectors are immutable after the first apply; adding to them breaks re-applies.
    if (label?.includeSelectors) say(`labels[${i}].includeSelectors`, 'must stay false');
    for (const [key, value] of Object.entries(label?.pairs ?? {}))
      if (typeof value !== 'string') say(`labels[${i}].pairs.${key}`, 'must be a string');
  }
  return problems;
}

/** What kustomize does with `labels` (includeTemplates only adds to existing template labels). */
function applyLabels(doc: Manifest, labels: Kustomization['labels'] = []): Manifest {
  const out = structuredClone(doc);
  for (const { pairs = {}, includeTemplates } of labels) {
    const strings = pairs as StringMap;
    out.metadata = { ...out.metadata, labels: { ...out.metadata?.labels, ...strings } };
    const template = out.spec?.template?.metadata;
    if (includeTemplates && template?.labels) Object.assign(template.labels, strings);
  }
  return out;
}

/** The base's documents as `kubectl apply -k` sends them (plus the files outside resources). */
export function rendered(base: Base): Entry[] {
  const labels = base.kustomization.labels;
  return base.docs.map((entry) =>
    entry.inResources ? { ...entry, doc: applyLabels(entry.doc, labels) } : entry,
  );
}

/** A kubernetes-models class: what validateDocument needs of it. */
interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: unknown): { validate(): void };
}

const modelCache = new Map<string, Promise<Record<string, ModelClass | undefined>>>();

/** The kubernetes-models class for apiVersion + kind, or undefined. */
async function modelFor(apiVersion: unknown, kind: unknown): Promise<ModelClass | undefined> {
  if (
    typeof apiVersion !== 'string' ||
    !/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(apiVersion)
  )
    return undefined;
  if (!modelCache.has(apiVersion))
    modelCache.set(
      apiVersion,
      (import(`kubernetes-models/${apiVersion}`) as Promise<Record<string, ModelClass>>).catch(
        () => ({}),
      ),
    );
  const Model = (await modelCache.get(apiVersion))?.[String(kind)];
  return Model?.apiVersion === apiVersion && Model.kind === kind ? Model : undefined;
}

/** Wraps value so that every key read on it or below is recorded per object. */
type Reads = Map<object, Set<string>>;

function track<T>(value: T, reads: Reads): T {
  if (value === null || typeof value !== 'object') return value;
  const read = new Set<string>();
  reads.set(value, read);
  const children = new Map<string, unknown>();
  return new Proxy(value, {
    get(target, key, receiver) {
      const child: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || !Object.hasOwn(target, key)) return child;
      read.add(key);
      if (child === null || typeof child !== 'object') return child;
      if (!children.has(key)) children.set(key, track(child, reads));
      return children.get(key);
    },
    has(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.has(target, key);
    },
  });
}

function unknownFields(value: unknown, reads: Reads, at = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  const read = reads.get(value);
  // Not reached by the validator at all: its parent is already reported (or failed its type).
  if (!read) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const where = `${at}/${key}`;
    if (!Array.isArray(value) && !read.has(key)) return [`${where}: unknown field`];
    return unknownFields(child, reads, where);
  });
}

interface SchemaError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: { allowedValues?: unknown[] };
}

function describe(error: SchemaError): string {
  const extra = error.params?.allowedValues ? ` (${error.params.allowedValues.join(', ')})` : '';
  return `${error.instancePath || '/'}: ${error.message ?? error.keyword}${extra}`;
}

/** Schema problems of one document, each as "/json/pointer: message". */
export async function validateDocument(doc: unknown): Promise<string[]> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return ['/: not an object'];
  const { apiVersion, kind } = doc as Manifest;
  const Model = await modelFor(apiVersion, kind);
  if (!Model) return [`/: no schema for apiVersion ${String(apiVersion)} kind ${kind}`];
  const model = new Model(doc);
  const reads: Reads = new Map();
  const problems: string[] = [];
  try {
    model.validate.call(track(model, reads));
  } catch (error) {
    const errors = (error as { errors?: unknown }).errors;
    if (!Array.isArray(errors)) throw error;
    problems.push(...new Set((errors as SchemaError[]).map(describe)));
  }
  return [...problems, ...unknownFields(model, reads)];
}

const id = (doc: Manifest | undefined) => `${doc?.kind}/${doc?.metadata?.name}`;
const matches = (selector: Record<string, unknown> = {}, labels: StringMap = {}) =>
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** Mistakes the schema cannot see: references between the documents of the base. */
export function crossCheck(entries: Entry[]): string[] {
  const problems: string[] = [];
  const byId = new Map(entries.map(({ doc }) => [id(doc), doc]));
  const seen = new Set<string>();
  for (const { file, doc } of entries) {
    if (seen.has(id(doc))) problems.push(`${file} ${id(doc)}: defined twice`);
    seen.add(id(doc));
  }
  const templates = entries
    .filter(({ doc }) => doc.kind === 'Deployment')
    .map(({ doc }) => doc.spec?.template?.metadata?.labels ?? {});
  for (const { file, inResources, doc } of entries) {
    const say = (message: string) => problems.push(`${file} ${id(doc)}: ${message}`);
    const selector =
      doc.kind === 'Service'
        ? doc.spec?.selector
        : doc.kind === 'NetworkPolicy'
          ? doc.spec?.podSelector?.matchLabels
          : doc.spec?.selector?.matchLabels;
    if (doc.kind === 'Deployment' && !matches(selector, doc.spec?.template?.metadata?.labels))
      say('spec.selector does not match the pod template labels');
    if (['Service', 'PodDisruptionBudget', 'NetworkPolicy'].includes(doc.kind ?? ''))
      if (!templates.some((labels) => matches(selector, labels)))
        say('selector matches no pod template of the base');
    const target = doc.spec?.scaleTargetRef;
    if (doc.kind === 'HorizontalPodAutoscaler' && !byId.has(`${target?.kind}/${target?.name}`))
      say(`scaleTargetRef ${String(target?.kind)}/${String(target?.name)} is not in the base`);
    // A placeholder Secret applied with the base would replace the operator's real one.
    if (doc.kind === 'Secret' && inResources && JSON.stringify(doc).includes('REPLACE-ME'))
      say('holds placeholders but is listed in resources');
    for (const container of doc.spec?.template?.spec?.containers ?? [])
      problems.push(...checkContainer(container, byId, `${file} ${id(doc)}`));
    // A secret volume naming a missing Secret or key keeps the pod in ContainerCreating.
    for (const volume of doc.spec?.template?.spec?.volumes ?? []) {
      const source = volume.secret;
      if (!source || source.optional) continue;
      const target = byId.get(`Secret/${source.secretName}`);
      const keys = { ...target?.data, ...target?.stringData };
      if (!target) say(`volume ${volume.name}: Secret ${source.secretName} is not in the base`);
      for (const item of target ? (source.items ?? []) : [])
        if (!(item.key in keys)) say(`volume ${volume.name}: Secret has no key ${item.key}`);
    }
  }
  return problems;
}

interface Reference {
  kind: 'ConfigMap' | 'Secret';
  name?: string;
  key?: string;
  optional?: boolean;
}

function checkContainer(
  container: IContainer,
  byId: Map<string, Manifest>,
  where: string,
): string[] {
  const problems: string[] = [];
  const say = (message: string) =>
    problems.push(`${where} container ${container.name}: ${message}`);
  const portNames = new Set((container.ports ?? []).map((port) => port.name));
  for (const kind of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
    const port = container[kind]?.httpGet?.port ?? container[kind]?.tcpSocket?.port;
    if (typeof port === 'string' && !portNames.has(port)) say(`${kind} port ${port} not declared`);
  }
  const refs: Reference[] = [
    ...(container.envFrom ?? []).flatMap((from) => [
      from.configMapRef && { kind: 'ConfigMap', ...from.configMapRef },
      from.secretRef && { kind: 'Secret', ...from.secretRef },
    ]),
    ...(container.env ?? []).flatMap((env) => [
      env.valueFrom?.configMapKeyRef && { kind: 'ConfigMap', ...env.valueFrom.configMapKeyRef },
      env.valueFrom?.secretKeyRef && { kind: 'Secret', ...env.valueFrom.secretKeyRef },
    ]),
  ].filter((ref): ref is Reference => Boolean(ref));
  for (const ref of refs) {
    const target = byId.get(`${ref.kind}/${ref.name}`);
    const keys = { ...target?.data, ...target?.stringData };
    if (!target && !ref.optional) say(`${ref.kind} ${ref.name} is not in the base`);
    else if (target && ref.key && !(ref.key in keys) && !ref.optional)
      say(`${ref.kind} ${ref.name} has no key ${ref.key}`);
  }
  return problems;
}

/** Everything about a loaded base: { lines: ["ok  Kind/name (file)"], problems: [...] }. */
export async function validateBase(base: Base): Promise<{ lines: string[]; problems: string[] }> {
  const problems = [...base.problems, ...checkKustomization(base.kustomization, base.dir)];
  const lines: string[] = [];
  const entries = rendered(base);
  for (const { file, inResources, doc } of entries) {
    const found = await validateDocument(doc);
    problems.push(...found.map((problem) => `${file} ${id(doc)} ${problem}`));
    const note = inResources ? '' : ', not in resources';
    if (found.length === 0) lines.push(`ok  ${id(doc)} (${file}${note})`);
  }
  problems.push(...crossCheck(entries));
  return { lines, problems };
}

// Mistakes someone could make in the container, each with the problem it must produce.
/** A container as a mistake may leave it: any field, known or not. */
type LooseContainer = Record<string, unknown> & {
  livenessProbe: { httpGet: Record<string, unknown> } & Record<string, unknown>;
  startupProbe: { httpGet: Record<string, unknown> };
};

const mutations: Record<string, [string, (c: LooseContainer) => void]> = {
  'readinessProbe misspelled': [
    'containers/0/readinesProbe: unknown field',
    (c) => {
      c.readinesProbe = c.readinessProbe;
      delete c.readinessProbe;
    },
  ],
  'livenessProbe.httpGet.path misspelled': [
    'livenessProbe/httpGet/paht: unknown field',
    (c) => {
      c.livenessProbe.httpGet.paht = c.livenessProbe.httpGet.path;
      delete c.livenessProbe.httpGet.path;
    },
  ],
  'periodSeconds as a string': [
    'livenessProbe/periodSeconds: must be integer',
    (c) => (c.livenessProbe.periodSeconds = '10'),
  ],
  'probe on an undeclared port name': [
    'startupProbe port web not declared',
    (c) => (c.startupProbe.httpGet.port = 'web'),
  ],
};

/** Validates the real base (must pass), then broken in-memory copies (each must fail). */
export async function selfTest(dir = defaultDir): Promise<string[]> {
  const base = loadBase(dir);
  const failures: string[] = [];
  const real = await validateBase(base);
  if (real.problems.length > 0)
    failures.push(`the real base has problems:\n  ${real.problems.join('\n  ')}`);
  for (const [name, [expected, mutate]] of Object.entries(mutations)) {
    const copy = structuredClone(base);
    const deployment = copy.docs.find(({ doc }) => doc.kind === 'Deployment')?.doc;
    mutate(deployment?.spec?.template?.spec?.containers[0] as unknown as LooseContainer);
    const { problems } = await validateBase(copy);
    const hit = problems.find((problem) => problem.includes(expected));
    if (hit) console.log(`self-test: rejected (${name}): ${hit}`);
    else failures.push(`${name}: expected "${expected}", got ${JSON.stringify(problems)}`);
  }
  const bad = structuredClone(base);
  bad.kustomization.configMapGenerator = [];
  const hit = (await validateBase(bad)).problems.find((p) => p.includes('configMapGenerator'));
  if (hit) console.log(`self-test: rejected (generator in kustomization): ${hit}`);
  else failures.push('accepted a kustomization with a configMapGenerator');
  return failures;
}

async function main(argv: string[]): Promise<number> {
  const flags = argv.filter((arg) => arg.startsWith('-'));
  const dirs = argv.filter((arg) => !arg.startsWith('-'));
  if (flags.some((flag) => flag !== '--self-test') || dirs.length > 1) {
    console.error('usage: node test/containers/k8s-validate.ts [--self-test] [DIR]');
    return 2;
  }
  const selfTesting = flags.length > 0;
  const dir = path.resolve(dirs[0] ?? defaultDir);
  const { lines, problems } = await validateBase(loadBase(dir));
  for (const line of lines) console.log(line);
  for (const problem of problems) console.error(`error  ${problem}`);
  if (problems.length > 0) return 1;
  if (!selfTesting) return 0;
  const failures = await selfTest(dir);
  for (const failure of failures) console.error(`self-test FAILED: ${failure}`);
  if (failures.length === 0)
    console.log('self-test: ok (real base valid, every broken copy rejected)');
  return failures.length === 0 ? 0 : 1;
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
