import * as z from 'zod/mini';

/**
 * What a variable's schema cannot say by itself. A schema with a plain default (`PORT: 3000`)
 * needs no note: that default is what the documentation shows and what a problem offers as
 * a valid example.
 */
export interface VariableNote {
  /**
   * The default as docs/configuration.md shows it, for one that is not a plain value: worked
   * out from another variable, the machine or the start-up (test/config/documented-variables.test.ts holds
   * the two together).
   */
  default?: string;
  /** A valid value, shown with a problem zod words itself, where there is no plain default. */
  example?: string;
}

export const variableNotes = z.registry<VariableNote>();

/** The schema, with its note registered. */
export function noted<T extends z.core.$ZodType>(schema: T, note: VariableNote): T {
  variableNotes.add(schema, note);
  return schema;
}

/** The variable's default when it is a plain value (a string, number or boolean). */
export function plainDefault(schema: z.core.$ZodType): string | undefined {
  const def = schema._zod.def;
  if (def.type === 'pipe') return plainDefault((def as z.core.$ZodPipeDef).in);
  if (def.type !== 'default') return undefined;
  const value: unknown = (def as z.core.$ZodDefaultDef).defaultValue;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : undefined;
}

/** A valid value to show with a problem: the note's example, else the plain default. */
export function exampleOf(schema: z.core.$ZodType): string | undefined {
  return variableNotes.get(schema)?.example ?? plainDefault(schema);
}
