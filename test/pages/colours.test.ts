import { describe, expect, it } from 'vitest';
import { contrastRatio, paletteFor } from '../../src/pages/colour.js';
import { pageStyle } from '../../src/pages/page-style.js';
import { darkColours, lightColours, readablePairs } from '../../src/pages/theme.js';

// WCAG 2.2 AA, computed: every pair a person reads on the pages, in both colour schemes, and
// the colours derived from any accent an operator may configure.

describe.each([
  ['light', lightColours],
  ['dark', darkColours],
])('the %s scheme', (_scheme, colours) => {
  it.each(readablePairs(colours))('%s: %s on %s reaches %d:1', (_what, fg, bg, min) => {
    expect(contrastRatio(fg, bg)).toBeGreaterThanOrEqual(min);
  });
});

const accents = [
  '#000000',
  '#ffffff',
  '#777777',
  '#808080',
  '#2563eb',
  '#ffcc00',
  '#0b5',
  '#e11d48',
  '#1e3a8a',
  '#161b22',
];

describe.each(accents)('the accent %s', (accent) => {
  const palette = paletteFor(accent);

  it('has readable button text (4.5:1), in either scheme (the button is the accent in both)', () => {
    expect(contrastRatio(palette.accent, palette.onAccent)).toBeGreaterThanOrEqual(4.5);
  });

  it('has a focus ring that shows on the card (3:1) in each scheme', () => {
    expect(contrastRatio(palette.focus, lightColours.card)).toBeGreaterThanOrEqual(3);
    expect(contrastRatio(palette.darkFocus, darkColours.card)).toBeGreaterThanOrEqual(3);
  });
});

describe('the stylesheet', () => {
  const css = pageStyle(paletteFor('#2563eb')).css;

  it('follows prefers-color-scheme with the dark colours, and says it supports both', () => {
    expect(css).toContain('color-scheme:light dark');
    const dark = /@media \(prefers-color-scheme:dark\)\{:root\{([^}]*)\}/.exec(css)?.[1] ?? '';
    expect(dark).toContain(`--card:${darkColours.card}`);
    expect(dark).toContain(`--text:${darkColours.text}`);
    expect(dark).toContain(`--error-text:${darkColours.errorText}`);
  });

  it('uses no colour literal outside the two schemes and the shadow', () => {
    const rules = css
      .replace(/^:root\{[^}]*\}/, '')
      .replace(/@media \(prefers-color-scheme:dark\)\{:root\{[^}]*\}/, '');
    expect(rules.match(/#[0-9a-f]{3,6}\b/gi) ?? []).toEqual([]);
  });
});
