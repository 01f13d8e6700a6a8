import { parse } from 'bowser';

/** A label never longer than this, whatever the User-Agent says. */
const labelMaxLength = 60;

const major = (version: string | undefined) => version?.split('.')[0] ?? '';

/**
 * A short label for a session's User-Agent, such as "Firefox 130 on Linux" or "Safari on iOS",
 * through bowser (MIT): enough for a person to tell their sessions apart, never the whole
 * string. A client bowser does not know (curl, a script) is named by its first product token.
 */
export function deviceLabel(userAgent: string): string {
  const agent = userAgent.trim();
  if (agent === '') return 'Unknown device';
  const { browser, os } = parse(agent);
  const name = browser.name === undefined ? '' : `${browser.name} ${major(browser.version)}`;
  const system = os.name ?? '';
  let label: string;
  if (name.trim() !== '' && system !== '') label = `${name.trim()} on ${system}`;
  else if (name.trim() !== '' || system !== '') label = (name.trim() || system).trim();
  else label = agent.split(/\s/, 1)[0] ?? agent;
  return label.slice(0, labelMaxLength);
}
