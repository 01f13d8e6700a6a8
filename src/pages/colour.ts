import { darkColours, lightColours, nonTextMinContrast } from './theme.js';

/** The colours the pages derive from the configured accent, each with enough contrast to read. */
export interface Palette {
  /** The accent as `#rrggbb`: the primary button's background, in both schemes. */
  accent: string;
  /** The button's text: white or black, whichever reads better on the accent. */
  onAccent: string;
  /** The focus ring on the light scheme: the accent where it stands out from white, else ink. */
  focus: string;
  /** The focus ring on the dark scheme: the accent where it stands out from the card, else light. */
  darkFocus: string;
}

const white = '#ffffff';
const black = '#000000';

function expand(hex: string): string {
  const digits = hex.slice(1).toLowerCase();
  return digits.length === 3
    ? `#${[...digits].map((digit) => digit + digit).join('')}`
    : `#${digits}`;
}

/** WCAG relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const [r = 0, g = 0, b = 0] = [1, 3, 5].map((at) => {
    const channel = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/**
 * Any accent an operator picks stays readable: every colour has at least 4.58:1 against white
 * or against black (pure black: a softer ink drops the worst case below 4.5:1), so the button's
 * text takes whichever is higher. The button is the accent in both schemes (it is the brand);
 * the focus ring, drawn on the card, takes the accent only where it shows against that card.
 */
export function paletteFor(accentColor: string): Palette {
  const accent = expand(accentColor);
  const onAccent = contrastRatio(accent, white) >= contrastRatio(accent, black) ? white : black;
  const ringOn = (card: string, fallback: string) =>
    contrastRatio(accent, card) >= nonTextMinContrast ? accent : fallback;
  return {
    accent,
    onAccent,
    focus: ringOn(lightColours.card, lightColours.text),
    darkFocus: ringOn(darkColours.card, darkColours.text),
  };
}
