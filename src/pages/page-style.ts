import { createHash } from 'node:crypto';
import type { Palette } from './colour.js';

/** The pages' one stylesheet, inline, and the CSP source that allows exactly it. */
export interface PageStyle {
  css: string;
  /** `'sha256-…'`: the CSP allows this `<style>` and no other style. */
  cspSource: string;
}

/**
 * Fixed colours are chosen for contrast on white: text #1f2328 (15.8:1), muted text #59636e
 * (6.1:1), field borders #6e7781 (4.5:1, above the 3:1 that WCAG asks of controls), notice
 * text 9.5:1 and 11:1 on its tints. The accent comes from configuration through `paletteFor`.
 * No dark theme: one light scheme that is known to read well beats two half-checked ones.
 */
export function pageStyle(palette: Palette): PageStyle {
  const css = `
:root{--accent:${palette.accent};--on-accent:${palette.onAccent};--focus:${palette.focus};color-scheme:light}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:1.5rem 1rem;background:#f6f8fa;color:#1f2328;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{width:100%;max-width:24rem;background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:2rem 1.75rem;box-shadow:0 1px 3px rgb(31 35 40/.08),0 8px 24px rgb(31 35 40/.06)}
.logo{display:block;max-width:100%;max-height:3rem;margin:0 auto 1rem}
h1{margin:0 0 1.25rem;font-size:1.5rem;line-height:1.25;text-align:center;overflow-wrap:anywhere}
.lead{margin:-.5rem 0 1.5rem;color:#59636e;text-align:center}
.notice{margin:0 0 1.25rem;padding:.75rem 1rem;border:1px solid;border-left-width:4px;border-radius:6px}
.notice p{margin:0}
.notice-error{background:#fff1f0;border-color:#cf222e;color:#82071e}
.notice-info{background:#ddf4ff;border-color:#0969da;color:#0a3069}
label{display:block;margin:1rem 0 .375rem;font-weight:600}
form>label:first-of-type{margin-top:0}
input{display:block;width:100%;min-height:2.75rem;margin:0;padding:.5rem .75rem;border:1px solid #6e7781;border-radius:6px;background:#fff;color:#1f2328;font:inherit}
input[aria-invalid="true"]{border-color:#cf222e}
button{display:block;width:100%;min-height:2.75rem;margin:1.5rem 0 0;padding:.625rem 1rem;border:1px solid transparent;border-radius:6px;background:var(--accent);color:var(--on-accent);font:inherit;font-weight:600;cursor:pointer}
button:hover{text-decoration:underline;text-underline-offset:.2em}
input:focus-visible,button:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
@media (max-width:30rem){body{justify-content:flex-start;padding:1rem .75rem}main{padding:1.5rem 1.25rem}}
@media (forced-colors:active){button{border-color:ButtonText}.notice{border-color:CanvasText}}
`.trim();
  const digest = createHash('sha256').update(css).digest('base64');
  return { css, cspSource: `'sha256-${digest}'` };
}
