import { passkeyScriptCspSource } from './passkey-script.js';
import type { PageStyle } from './page-style.js';

/**
 * The pages' Content-Security-Policy: nothing by default; the one inline stylesheet by its
 * hash; the one script (passkeys need WebAuthn: src/pages/passkey-script.ts) by its hash, so no
 * other script of any kind runs, and requests to this origin only (the script's options and
 * callback), so nothing leaves for another; images only from where the configured logo lives;
 * forms only to this origin and to the configured identity providers' (`formTargets`): Chromium
 * holds a form's redirects to `form-action` too, and a provider's button is answered with a
 * redirect to its sign-in. Framing is refused as on every other answer.
 */
export function pagePolicy(
  style: PageStyle,
  logoUrl: string | undefined,
  formTargets: readonly string[] = [],
): string {
  const directives = [
    "default-src 'none'",
    `style-src ${style.cspSource}`,
    `script-src ${passkeyScriptCspSource}`,
    "connect-src 'self'",
  ];
  if (logoUrl !== undefined) {
    directives.push(`img-src ${logoUrl.startsWith('/') ? "'self'" : new URL(logoUrl).origin}`);
  }
  directives.push(
    ["form-action 'self'", ...formTargets].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  );
  return directives.join('; ');
}
