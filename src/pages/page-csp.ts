import { passkeyScriptCspSource } from './passkey-script.js';
import type { PageStyle } from './page-style.js';

/**
 * The pages' Content-Security-Policy: nothing by default; the one inline stylesheet by its
 * hash; the one script (passkeys need WebAuthn: src/pages/passkey-script.ts) by its hash, so no
 * other script of any kind runs, and requests to this origin only (the script's options and
 * callback), so nothing leaves for another; images only from where the configured logo lives;
 * forms only to this origin (Chrome also holds the sign-in's redirect to it, and Auth.js only
 * redirects to this origin). Framing is refused as on every other answer.
 */
export function pagePolicy(style: PageStyle, logoUrl: string | undefined): string {
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
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  );
  return directives.join('; ');
}
