/**
 * A module loaded on first use instead of at start-up: `load` (a dynamic `import()`) runs once,
 * and every caller shares its promise. The bundle keeps such a module inside it, evaluated only
 * then (scripts/build/bundle-options.ts), so what start-up skips is its evaluation and its share
 * of the code cache. A load that fails is not kept: the error says which module (`name`) could
 * not load, with the cause, for the log line of the 500 it becomes; the next call tries again.
 */
export function lazyModule<T>(name: string, load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw new Error(`could not load ${name}`, { cause: error });
    }));
}
