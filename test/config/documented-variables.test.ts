import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { capabilities, variablesOf } from '../../src/config/index.js';
import { exampleOf, plainDefault, variableNotes } from '../../src/config/read/notes.js';
import { fileVariables } from '../../src/config/read/secret-files.js';

const root = path.join(import.meta.dirname, '../..');
const docsFile = 'docs/configuration.md';

interface DocumentedVariable {
  name: string;
  default: string;
  /** The file its section says declares it. */
  file: string | undefined;
}

/** The rows of every `| variable | default | meaning |` table, with their section's file. */
function documentedVariables(markdown: string): DocumentedVariable[] {
  const rows: DocumentedVariable[] = [];
  let file: string | undefined;
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) file = undefined;
    const declared = /^Declared in `(src\/config\/[\w-]+\.ts)`\./.exec(line);
    if (declared !== null) file = declared[1];
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
    if (cells[0] === 'variable') {
      inTable = true;
      continue;
    }
    if (!inTable || /^-+$/.test(cells[0] ?? '')) continue;
    const name = /^`([A-Z0-9_]+)`$/.exec(cells[0] ?? '')?.[1];
    if (name === undefined) throw new Error(`${docsFile}: a row names no variable: ${line}`);
    rows.push({ name, default: cells[1] ?? '', file });
  }
  return rows;
}

/** Every variable the schemas read, each once; a variable read by several is one schema. */
function schemaVariables(): Map<string, z.core.$ZodType> {
  const variables = new Map<string, z.core.$ZodType>();
  for (const capability of capabilities(true)) {
    for (const [name, schema] of Object.entries(variablesOf(capability))) {
      const seen = variables.get(name);
      if (seen !== undefined && seen !== schema)
        throw new Error(`${name} is declared twice, by two different schemas`);
      variables.set(name, schema);
    }
  }
  return variables;
}

/** What the documented default must be, or start with, given the schema. */
function expectedDefault(schema: z.core.$ZodType | undefined): {
  exactly?: string;
  startsWith?: string;
} {
  // A `_FILE` variant: never set unless the operator sets it.
  if (schema === undefined) return { exactly: 'none' };
  const noted = variableNotes.get(schema)?.default;
  if (noted !== undefined) return { exactly: noted };
  const plain = plainDefault(schema);
  // A plain default may be followed by a gloss: `2592000` (30 days).
  return plain === undefined ? { startsWith: 'none' } : { startsWith: `\`${plain}\`` };
}

describe(`${docsFile} and the schemas`, () => {
  const documented = documentedVariables(fs.readFileSync(path.join(root, docsFile), 'utf8'));
  const variables = schemaVariables();
  const fileVariants = fileVariables.map((name) => `${name}_FILE`);

  it('document every variable the schemas read, and no other', () => {
    const names = documented.map((row) => row.name);
    const declared = [...variables.keys(), ...fileVariants];
    expect({
      'documented, not in a schema': names.filter((name) => !declared.includes(name)),
      'in a schema, not documented': declared.filter((name) => !names.includes(name)),
      'documented twice': names.filter((name, i) => names.indexOf(name) !== i),
    }).toEqual({
      'documented, not in a schema': [],
      'in a schema, not documented': [],
      'documented twice': [],
    });
  });

  it('secret-file variants exist only for variables the schemas read', () => {
    expect(fileVariables.filter((name) => !variables.has(name))).toEqual([]);
  });

  it('show each default as the schema has it', () => {
    const wrong = documented.flatMap((row) => {
      const expected = expectedDefault(variables.get(row.name));
      const ok =
        expected.exactly !== undefined
          ? row.default === expected.exactly
          : row.default.startsWith(expected.startsWith ?? '');
      return ok ? [] : [{ variable: row.name, documented: row.default, schema: expected }];
    });
    expect(wrong).toEqual([]);
  });

  it('list each variable in the section of the file that declares it', () => {
    const misplaced = documented.flatMap((row) => {
      if (row.file === undefined) return [{ variable: row.name, file: 'no "Declared in" line' }];
      const source = fs.readFileSync(path.join(root, row.file), 'utf8');
      const name = fileVariants.includes(row.name) ? row.name.slice(0, -'_FILE'.length) : row.name;
      return new RegExp(`^\\s+${name}: `, 'm').test(source)
        ? []
        : [{ variable: row.name, file: row.file }];
    });
    expect(misplaced).toEqual([]);
  });

  it('every variable zod can refuse in its own words has a valid example', () => {
    // AUTH_SECRET, FACTOR_KEY and AUDIT_KEY are refused only by Gatehouse's own messages,
    // which say how to make one.
    const exempt = ['AUTH_SECRET', 'FACTOR_KEY', 'AUDIT_KEY'];
    const problems = [...variables].flatMap(([name, schema]) => {
      if (exempt.includes(name)) return [];
      const example = exampleOf(schema);
      if (example === undefined) return [`${name}: no example`];
      return z.safeParse(schema, example).success ? [] : [`${name}: ${example} is refused`];
    });
    expect(problems).toEqual([]);
  });
});
