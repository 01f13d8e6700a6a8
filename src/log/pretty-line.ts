/*
 * Log lines a person reads in a development terminal (LOG_FORMAT=pretty, the default there):
 * the time, the level, the message, then the other fields as `key=value`; an error's stack on
 * the lines after. The JSON lines are what production, files and pipes get (LOG_FORMAT=json,
 * the default when standard output is not a terminal or in production): a log system parses
 * them.
 */

const levels: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields every line has, shown in the line's head or not at all. */
const headFields = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

const shown = (value: unknown): string =>
  typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);

/** One JSON log line (with its newline) as a person reads it; a line that is not JSON as it is. */
export function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object') return line;
  const time =
    typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = levels[entry.level as number] ?? String(entry.level);
  const err = entry.err as { stack?: unknown } | undefined;
  const rest = Object.entries(entry)
    .filter(([key]) => !headFields.has(key) && key !== 'err')
    .map(([key, value]) => `${key}=${shown(value)}`);
  const stack =
    err !== undefined && typeof err.stack === 'string'
      ? `\n    ${err.stack.split('\n').join('\n    ')}`
      : '';
  return `${time} ${level} ${String(entry.msg ?? '')}${rest.length > 0 ? `  ${rest.join(' ')}` : ''}${stack}\n`;
}
