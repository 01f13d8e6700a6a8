import { createHash } from 'node:crypto';
import type { Palette } from './colour.js';
import { darkColours, lightColours, type SchemeColours } from './theme.js';

/** The pages' one stylesheet, inline, and the CSP source that allows exactly it. */
export interface PageStyle {
  css: string;
  /** `'sha256-…'`: the CSP allows this `<style>` and no other style. */
  cspSource: string;
}

/** A scheme's colours as the stylesheet's custom properties. */
function properties(c: SchemeColours, focus: string): string {
  return [
    `--focus:${focus}`,
    `--page:${c.page}`,
    `--card:${c.card}`,
    `--card-border:${c.cardBorder}`,
    `--text:${c.text}`,
    `--muted:${c.muted}`,
    `--control:${c.control}`,
    `--field:${c.field}`,
    `--error-bg:${c.errorBackground}`,
    `--error-border:${c.errorBorder}`,
    `--error-text:${c.errorText}`,
    `--info-bg:${c.infoBackground}`,
    `--info-border:${c.infoBorder}`,
    `--info-text:${c.infoText}`,
  ].join(';');
}

/**
 * Fixed colours come from src/pages/theme.ts, one set per scheme, each checked for contrast;
 * the accent comes from configuration through `paletteFor`. The dark scheme follows the
 * browser's `prefers-color-scheme`: no script, no toggle, nothing stored.
 */
export function pageStyle(palette: Palette): PageStyle {
  const css = `
:root{--accent:${palette.accent};--on-accent:${palette.onAccent};${properties(lightColours, palette.focus)};color-scheme:light dark}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:1.5rem 1rem;background:var(--page);color:var(--text);font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{width:100%;max-width:24rem;background:var(--card);border:1px solid var(--card-border);border-radius:12px;padding:2rem 1.75rem;box-shadow:0 1px 3px rgb(31 35 40/.08),0 8px 24px rgb(31 35 40/.06)}
@media (prefers-color-scheme:dark){:root{${properties(darkColours, palette.darkFocus)}}main{box-shadow:none}}
.logo{display:block;max-width:100%;max-height:3rem;margin:0 auto 1rem}
h1{margin:0 0 1.25rem;font-size:1.5rem;line-height:1.25;text-align:center;overflow-wrap:anywhere}
p{margin:0 0 1rem;overflow-wrap:anywhere}
a{color:inherit;text-underline-offset:.2em}
.lead{margin:-.5rem 0 1.5rem;color:var(--muted);text-align:center}
.who{margin:0 0 1.5rem;text-align:center}
.who strong{color:var(--text)}
.notice{margin:0 0 1.25rem;padding:.75rem 1rem;border:1px solid;border-left-width:4px;border-radius:6px}
.notice p{margin:0}
.notice-error{background:var(--error-bg);border-color:var(--error-border);color:var(--error-text)}
.notice-info{background:var(--info-bg);border-color:var(--info-border);color:var(--info-text)}
.hint{color:var(--muted);font-size:.9375rem}
.brand{margin:0 0 .25rem;text-align:center;color:var(--muted);font-size:.875rem;font-weight:600;letter-spacing:.02em}
.foot{margin:1.5rem 0 0;padding-top:1rem;border-top:1px solid var(--card-border);text-align:center;color:var(--muted);font-size:.875rem}
form+.hint,[data-passkey-only]+.hint{margin:1rem 0 0;text-align:center}
code{font:.875em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
label{display:block;margin:1rem 0 .375rem;font-weight:600;overflow-wrap:anywhere}
form>label:first-of-type{margin-top:0}
input,select,textarea{display:block;width:100%;min-height:2.75rem;margin:0;padding:.5rem .75rem;border:1px solid var(--control);border-radius:6px;background:var(--field);color:var(--text);font:inherit}
input[aria-invalid="true"],select[aria-invalid="true"]{border-color:var(--error-border)}
button,.button{display:block;width:100%;min-height:2.75rem;margin:1.5rem 0 0;padding:.625rem 1rem;border:1px solid transparent;border-radius:6px;background:var(--accent);color:var(--on-accent);font:inherit;font-weight:600;text-align:center;text-decoration:none;cursor:pointer}
.secondary{margin-top:.75rem;background:transparent;border-color:var(--control);color:var(--text)}
.who .button{margin-top:0}
button:hover,.button:hover{text-decoration:underline;text-underline-offset:.2em}
[hidden]{display:none}
section{margin:2rem 0 0;padding-top:1.5rem;border-top:1px solid var(--card-border)}
section:first-of-type{margin-top:0;padding-top:0;border-top:0}
h2{margin:0 0 1rem;font-size:1.125rem;line-height:1.3}
.fact{margin:0 0 1rem}
.fact .label{display:block;font-weight:600}
.field-hint{margin:-.25rem 0 .375rem}
.after{margin:1rem 0 0}
.items{list-style:none;margin:0 0 1rem;padding:0}
.items li{padding:.75rem 0;border-top:1px solid var(--card-border)}
.items li:first-child{padding-top:0;border-top:0}
.items p{margin:0}
.items .what{font-weight:600}
time{white-space:nowrap}
.items button{margin-top:.5rem;min-height:2.25rem;padding:.375rem .75rem}
.tag{display:inline-block;margin-left:.375rem;padding:0 .5rem;border:1px solid var(--info-border);border-radius:999px;background:var(--info-bg);color:var(--info-text);font-size:.8125rem;font-weight:600;vertical-align:.1em}
details{margin:1.5rem 0 0;padding-top:1.25rem;border-top:1px solid var(--card-border)}
summary{min-height:2.75rem;padding:.625rem 0;font-weight:600;cursor:pointer}
details[open] summary{margin-bottom:.75rem}
.qr{display:block;width:12.375rem;height:12.375rem;margin:0 auto 1rem;border-radius:.25rem}
.codes{margin:0 0 1rem;padding:0;list-style:none;columns:10rem;column-gap:1rem}
.codes li{margin:0 0 .375rem;white-space:nowrap}
.codes+.button{margin:0 0 1.5rem}
.once{margin:0 0 1.5rem;padding:1rem;border:2px solid var(--info-border);border-radius:8px;background:var(--info-bg)}
.once .secret{font:.875rem/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all;resize:none}
.passkeys{margin:0;padding:0;list-style:none}
.passkeys>li{padding:.75rem 0;border-top:1px solid var(--card-border)}
.passkeys>li:first-child{padding-top:0;border-top:0}
.passkeys>li:last-child{padding-bottom:0}
.passkeys .fact{margin:0}
.passkeys details{margin:.25rem 0 0;padding-top:0;border-top:0}
.passkeys form+form{margin-top:1.25rem}
.passkeys+form{margin-top:1.5rem;padding-top:1.25rem;border-top:1px solid var(--card-border)}
label .hint{font-weight:400}
.or{margin:1.25rem 0 0;color:var(--muted);text-align:center}
.status:empty{display:none}
.status{margin:.75rem 0 0}
input:focus-visible,select:focus-visible,textarea:focus-visible,button:focus-visible,a:focus-visible,summary:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
@media (max-width:30rem){body{justify-content:flex-start;padding:1rem .75rem}main{padding:1.5rem 1.25rem}}
@media (forced-colors:active){button,.button{border-color:ButtonText}.notice{border-color:CanvasText}}
`.trim();
  const digest = createHash('sha256').update(css).digest('base64');
  return { css, cspSource: `'sha256-${digest}'` };
}
