import { spawn } from 'node:child_process';
import path from 'node:path';

export const distDir = path.resolve(import.meta.dirname, '../../dist');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built entry point (`npm test` builds first) with its own environment and stdin. */
export function runNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(distDir, script), ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A command that reads no input may exit before its stdin is written (EPIPE, seen under a
    // loaded full run): its exit code and output say what happened, not the unread input.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(stdin ?? '');
  });
}
