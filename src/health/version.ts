import { readFileSync } from 'node:fs';

/** The service's own package.json version, read once; "unknown" when it cannot be read. */
export function readPackageVersion(packageJsonUrl: URL): string {
  try {
    const parsed: unknown = JSON.parse(readFileSync(packageJsonUrl, 'utf8'));
    const version = (parsed as { version?: unknown } | null)?.version;
    return typeof version === 'string' && version.length > 0 ? version : 'unknown';
  } catch {
    // A missing or broken package.json is exactly the case the contract's "unknown" covers.
    return 'unknown';
  }
}
