const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values alike. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => entities[char] as string);
}

/** Markup that is already safe: built by `markup`, or trusted by `trustedHtml`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolation = string | number | SafeHtml | readonly SafeHtml[] | false | undefined;

/**
 * A template whose every interpolated string is escaped, so a page cannot print a raw value by
 * forgetting to escape it; fragments made by `markup` nest unescaped. `false` and `undefined`
 * print nothing (for optional parts). Not named `html`: Prettier would reformat the templates
 * as HTML, blanks inside `<style>` included, and the stylesheet would no longer match its hash.
 */
export function markup(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    if (value instanceof SafeHtml) out += value.value;
    else if (Array.isArray(value)) out += value.map((part: SafeHtml) => part.value).join('');
    else if (value !== false && value !== undefined) out += escapeHtml(String(value));
    out += strings[i + 1] ?? '';
  });
  return new SafeHtml(out);
}

/** Marks markup Gatehouse wrote itself (the stylesheet) as safe to print as it is. */
export function trustedHtml(value: string): SafeHtml {
  return new SafeHtml(value);
}
