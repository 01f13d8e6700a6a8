/**
 * The templates' whole language: `{{value}}` inserts a value (HTML-escaped in HTML bodies) and
 * `{{#value}}…{{/value}}` keeps its content only when the value is given and not empty, and
 * `{{^value}}…{{/value}}` only when it is missing or empty. No
 * logic, no partials, no raw insertion: an operator's template can misspell a name (refused at
 * start-up) but cannot run anything or insert unescaped markup.
 */
type Part =
  | { kind: 'text'; text: string }
  | { kind: 'value'; name: string }
  | { kind: 'section'; name: string; parts: Part[]; inverted: boolean };

export interface CompiledTemplate {
  render(values: Readonly<Record<string, string>>, escape: (text: string) => string): string;
  /** Every value it reads, sections included. */
  readonly names: ReadonlySet<string>;
}

const tag = /\{\{\s*([#^/]?)\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g;

/** The template compiled, or a problem worded for an operator (names the tag, not a stack). */
export function compileTemplate(source: string): CompiledTemplate | { problem: string } {
  const root: Part[] = [];
  const open: { name: string; parts: Part[] }[] = [];
  const names = new Set<string>();
  let current = root;
  let last = 0;
  for (const match of source.matchAll(tag)) {
    const [whole, sigil, name = ''] = match;
    const text = source.slice(last, match.index);
    if (text.includes('{{') || text.includes('}}'))
      return { problem: `a "{{" or "}}" that is not a tag like {{name}} near "${near(text)}"` };
    if (text !== '') current.push({ kind: 'text', text });
    last = match.index + whole.length;
    names.add(name);
    if (sigil === '#' || sigil === '^') {
      const section: Part = { kind: 'section', name, parts: [], inverted: sigil === '^' };
      current.push(section);
      open.push({ name, parts: current });
      current = section.parts;
    } else if (sigil === '/') {
      const top = open.pop();
      if (top === undefined || top.name !== name)
        return {
          problem: `{{/${name}}} closes ${top === undefined ? 'nothing' : `{{#${top.name}}}`}`,
        };
      current = top.parts;
    } else {
      current.push({ kind: 'value', name });
    }
  }
  const rest = source.slice(last);
  if (rest.includes('{{') || rest.includes('}}'))
    return { problem: `a "{{" or "}}" that is not a tag like {{name}} near "${near(rest)}"` };
  if (rest !== '') current.push({ kind: 'text', text: rest });
  const unclosed = open.at(-1);
  if (unclosed !== undefined) return { problem: `{{#${unclosed.name}}} is never closed` };
  return {
    names,
    render: (values, escape) => renderParts(root, values, escape),
  };
}

function near(text: string): string {
  const at = Math.max(text.indexOf('{{'), text.indexOf('}}'));
  return text.slice(Math.max(0, at - 10), at + 12).replace(/\s+/g, ' ');
}

function renderParts(
  parts: readonly Part[],
  values: Readonly<Record<string, string>>,
  escape: (text: string) => string,
): string {
  let out = '';
  for (const part of parts) {
    if (part.kind === 'text') out += part.text;
    else if (part.kind === 'value') out += escape(values[part.name] ?? '');
    else if (((values[part.name] ?? '') !== '') !== part.inverted)
      out += renderParts(part.parts, values, escape);
  }
  return out;
}

const htmlEntities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => htmlEntities[char] as string);
}
