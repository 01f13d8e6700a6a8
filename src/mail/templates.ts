import fs from 'node:fs';
import path from 'node:path';
import { callerValues, commonValues, htmlLayout } from './builtin-templates.js';
import type { MailCatalogue } from './catalogue.js';
import type { MailKind } from './mail-queue.js';
import { compileTemplate, escapeHtml, type CompiledTemplate } from './template-syntax.js';

const parts = ['subject', 'text', 'html'] as const;
type Part = (typeof parts)[number];
const extensions: Record<Part, string> = { subject: '.subject', text: '.txt', html: '.html' };

/** An operator's replacements, by kind and part: the files' text as read. */
export type TemplateOverrides = Partial<Record<MailKind, Partial<Record<Part, string>>>>;

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export interface MailRenderer {
  /** Throws when a value the kind requires is missing: a caller's bug, not a mail to send. */
  render(kind: MailKind, values: Readonly<Record<string, string>>): RenderedMail;
  /** Where the kind goes in the queue (`MailWords.priority`). */
  priorityOf(kind: MailKind): 0 | 1;
}

const known = new Set<string>([...commonValues, ...callerValues]);

/**
 * Reads `<kind>.subject`, `<kind>.txt` and `<kind>.html` from `dir`; any of them may be left
 * out (the built-in one is used). Every problem names the file: a name that is no kind of
 * `mails`, an unreadable file, a template that does not compile or reads an unknown value.
 */
export function readTemplateDir(
  dir: string,
  mails: MailCatalogue,
): {
  overrides: TemplateOverrides;
  problems: string[];
  /** False when the folder itself could not be read (its problem is then the only one). */
  folderRead: boolean;
} {
  const overrides: TemplateOverrides = {};
  const problems: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { overrides, problems: [`cannot read the folder ${dir} (${code})`], folderRead: false };
  }
  for (const file of names.sort()) {
    const part = parts.find((candidate) => file.endsWith(extensions[candidate]));
    if (part === undefined) continue;
    const kind = file.slice(0, -extensions[part].length);
    if (!Object.hasOwn(mails, kind)) {
      problems.push(
        `${file}: "${kind}" is not a mail kind (one of ${Object.keys(mails).join(', ')})`,
      );
      continue;
    }
    let text: string;
    try {
      text = fs.readFileSync(path.join(dir, file), 'utf8');
    } catch (error) {
      problems.push(
        `${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
      continue;
    }
    if (part === 'subject') text = text.trim();
    if (text.trim() === '') {
      problems.push(`${file}: is empty`);
      continue;
    }
    if (part === 'subject' && /[\r\n]/.test(text)) {
      problems.push(`${file}: a subject is one line`);
      continue;
    }
    const problem = checkTemplate(text);
    if (problem !== undefined) problems.push(`${file}: ${problem}`);
    else (overrides[kind] ??= {})[part] = text;
  }
  return { overrides, problems, folderRead: true };
}

function checkTemplate(source: string): string | undefined {
  const compiled = compileTemplate(source);
  if ('problem' in compiled) return compiled.problem;
  const unknown = [...compiled.names].filter((name) => !known.has(name));
  if (unknown.length > 0)
    return `reads ${unknown.map((name) => `{{${name}}}`).join(', ')}, not a value mails have (${[...known].join(', ')})`;
  return undefined;
}

function compiled(source: string): CompiledTemplate {
  const template = compileTemplate(source);
  // Built-ins are tested and overrides were checked by readTemplateDir: a broken invariant.
  if ('problem' in template) throw new Error(`mail template: ${template.problem}`);
  return template;
}

/** One line, as a header needs: line breaks in a value (a name) become spaces. */
const oneLine = (text: string) => text.replace(/[\r\n\t]+/g, ' ');
const asIs = (text: string) => text;

/**
 * Compiles every kind's templates of `mails` once: their own words, each part replaced by the
 * operator's where given. `productName`, `origin` and `supportContact` are filled into every mail.
 */
export function createMailRenderer(
  settings: {
    productName: string;
    origin: string | undefined;
    supportContact?: string | undefined;
  },
  overrides: TemplateOverrides,
  mails: MailCatalogue,
): MailRenderer {
  const templates = new Map(
    Object.entries(mails).map(([kind, builtin]) => {
      const own = overrides[kind] ?? {};
      return [
        kind,
        {
          required: builtin.required,
          priority: builtin.priority,
          subject: compiled(own.subject ?? builtin.subject),
          text: compiled(own.text ?? builtin.text),
          html: compiled(own.html ?? htmlLayout(builtin.html)),
        },
      ] as const;
    }),
  );
  const templateOf = (kind: MailKind) => {
    const template = templates.get(kind);
    if (template === undefined) throw new Error(`no mail template for kind ${String(kind)}`);
    return template;
  };
  return {
    priorityOf: (kind) => templateOf(kind).priority,
    render(kind, values) {
      const template = templateOf(kind);
      const missing = template.required.filter((name) => (values[name] ?? '') === '');
      if (missing.length > 0)
        throw new Error(`a ${kind} mail needs the value ${missing.join(', ')}`);
      const all = {
        ...values,
        productName: settings.productName,
        origin: settings.origin ?? values.origin ?? '',
        supportContact: settings.supportContact ?? '',
      };
      return {
        subject: oneLine(template.subject.render(all, oneLine)).trim(),
        text: template.text.render(all, asIs),
        html: template.html.render(all, escapeHtml),
      };
    },
  };
}
