import { markup, trustedHtml, type SafeHtml } from './html.js';

/*
 * The pieces of two-step sign-in both `/account` and the sign-in page's enrolment step show:
 * the authenticator app's key (QR code and text), and recovery codes just made.
 */

/** The key to scan (its QR code, SVG made by the account wing) or to type into another device. */
export function appKeyPart(key: { secret: string; qrSvg: string }): SafeHtml {
  return markup`<div class="qr" role="img" aria-label="QR code of the key for your authenticator app">${trustedHtml(key.qrSvg)}</div>
<p class="fact"><span class="label">Key</span> <code>${key.secret}</code></p>`;
}

/** Recovery codes just made: listed once, with a download (a `data:` link: no script). */
export function recoveryCodesPart(codes: readonly string[]): SafeHtml {
  const text = `Recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  const href = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  return markup`<p><strong>Your recovery codes.</strong> Save them now: they are shown only this once. Each one signs you in once in place of the app's code.</p>
<ul class="codes">${codes.map((code) => markup`<li><code>${code}</code></li>`)}</ul>
<a class="button secondary" href="${href}" download="recovery-codes.txt">Download as a text file</a>`;
}
