import fs from 'node:fs';

/** The variables whose value may instead come from a file (Docker and Kubernetes secrets). */
export const fileVariables = [
  'AUTH_SECRET',
  'DATABASE_URL',
  'SMTP_URL',
  'WEBHOOK_SECRET',
  'FACTOR_KEY',
  'AUDIT_KEY',
  'AUTH_OIDC_SECRET',
  'AUTH_GITHUB_SECRET',
  'AUTH_GOOGLE_SECRET',
  'AUTH_MICROSOFT_ENTRA_ID_SECRET',
  'AUTH_GITLAB_SECRET',
  'LEGACY_AUTH_SECRET',
  'TOKEN_SIGNING_KEY',
] as const;

export interface FileVariablesResult {
  env: NodeJS.ProcessEnv;
  problems: string[];
  /** Variables whose file could not be used: their own checks would only repeat the problem. */
  failed: Set<string>;
}

function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') {
    const uid = process.getuid?.();
    return `permission denied; make it readable by ${uid === undefined ? 'this user' : `uid ${uid}`}, the user Gatehouse runs as`;
  }
  if (code === 'EISDIR') return 'is a directory';
  return code ?? 'unreadable';
}

/**
 * Replaces each `NAME_FILE` by `NAME` holding the file's content, trimmed (secret files usually
 * end with a newline). Setting both is refused rather than guessing which the operator meant;
 * a problem names the variable and the path, never the content.
 */
export function readFileVariables(
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = (path) => fs.readFileSync(path, 'utf8'),
): FileVariablesResult {
  const resolved: NodeJS.ProcessEnv = { ...env };
  const problems: string[] = [];
  const failed = new Set<string>();
  const fail = (name: string, problem: string) => {
    problems.push(problem);
    failed.add(name);
  };
  for (const name of fileVariables) {
    const fileName = `${name}_FILE`;
    const path = env[fileName];
    if (path === undefined || path === '') continue;
    delete resolved[fileName];
    if (env[name] !== undefined && env[name] !== '') {
      fail(name, `${name}: both ${name} and ${fileName} are set; set only one`);
      continue;
    }
    let content: string;
    try {
      content = readFile(path).trim();
    } catch (error) {
      fail(name, `${fileName}: cannot read ${path} (${describeReadError(error)})`);
      continue;
    }
    if (content === '') {
      fail(name, `${fileName}: ${path} is empty`);
      continue;
    }
    resolved[name] = content;
  }
  return { env: resolved, problems, failed };
}
