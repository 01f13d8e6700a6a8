/**
 * The pages' fixed colours, one set per colour scheme; the accent comes from configuration
 * (src/pages/colour.ts). Every pair a person must read is listed in `readablePairs` with the
 * contrast WCAG 2.2 asks of it, and a test holds each set to it (test/pages/colours.test.ts).
 */
export interface SchemeColours {
  /** Behind the card. */
  page: string;
  /** The card (`<main>`), and behind text. */
  card: string;
  cardBorder: string;
  text: string;
  muted: string;
  /** Text fields' and secondary buttons' borders: controls need 3:1 against what surrounds them. */
  control: string;
  field: string;
  errorBackground: string;
  errorBorder: string;
  errorText: string;
  infoBackground: string;
  infoBorder: string;
  infoText: string;
}

/** GitHub's Primer light: text 15.8:1 on white. */
export const lightColours: SchemeColours = {
  page: '#f6f8fa',
  card: '#ffffff',
  cardBorder: '#d0d7de',
  text: '#1f2328',
  muted: '#59636e',
  control: '#6e7781',
  field: '#ffffff',
  errorBackground: '#fff1f0',
  errorBorder: '#cf222e',
  errorText: '#82071e',
  infoBackground: '#ddf4ff',
  infoBorder: '#0969da',
  infoText: '#0a3069',
};

/** Primer dark: text 14.6:1 on the card, the tints dark enough for light text. */
export const darkColours: SchemeColours = {
  page: '#0d1117',
  card: '#161b22',
  cardBorder: '#3d444d',
  text: '#e6edf3',
  muted: '#9198a1',
  control: '#8b949e',
  field: '#0d1117',
  errorBackground: '#3c1618',
  errorBorder: '#f85149',
  errorText: '#ffa198',
  infoBackground: '#0c2d6b',
  infoBorder: '#4493f8',
  infoText: '#a5d6ff',
};

/** WCAG 2.2: 4.5:1 for text (1.4.3), 3:1 for controls and focus indicators (1.4.11). */
export const textMinContrast = 4.5;
export const nonTextMinContrast = 3;

/** Every pair of a scheme that must stay readable: foreground, background, minimum ratio. */
export function readablePairs(c: SchemeColours): [string, string, string, number][] {
  return [
    ['text on the card', c.text, c.card, textMinContrast],
    ['text on the page', c.text, c.page, textMinContrast],
    ['muted text on the card', c.muted, c.card, textMinContrast],
    ['text in a field', c.text, c.field, textMinContrast],
    ['a field border on the card', c.control, c.card, nonTextMinContrast],
    ['a field border on the field', c.control, c.field, nonTextMinContrast],
    ['an invalid field border on the field', c.errorBorder, c.field, nonTextMinContrast],
    ['error text on its tint', c.errorText, c.errorBackground, textMinContrast],
    ['info text on its tint', c.infoText, c.infoBackground, textMinContrast],
  ];
}
