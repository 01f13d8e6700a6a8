// The build's and the benchmark's own modules in scripts/ are still untyped `.mjs` (typed
// separately): each is imported here once, with the type of what the fleet uses from it.
// Importing them by a computed URL keeps TypeScript from asking for declaration files.
const scriptsDir = new URL('../../../scripts/', import.meta.url);

const load = (file: string): Promise<unknown> => import(new URL(file, scriptsDir).href);

/** scripts/start-command.mjs: node's arguments for the server as `npm start` runs it. */
export const { startArgs } = (await load('start-command.mjs')) as {
  startArgs(root: string): string[];
};

export interface WrkFigures {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
}

/**
 * scripts/bench/wrk.mjs's parser of wrk's report (latencies in ms); loaded on first use, as
 * only the throughput measurement needs the benchmark's modules.
 */
export async function loadParseWrk(): Promise<(text: string) => WrkFigures> {
  const { parseWrk } = (await load('bench/wrk.mjs')) as {
    parseWrk(text: string): WrkFigures;
  };
  return parseWrk;
}
