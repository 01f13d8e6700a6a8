// Test-only: compose.yaml as shipped, but with every service on the host's network (this
// machine's private Docker engine runs with --bridge=none, so the host's networking is never
// changed) and its published ports dropped (Docker refuses them in that mode), plus the
// environment the test gives each service (loopback addresses, the ports it chose).
import fs from 'node:fs';
import { parse, stringify } from 'yaml';

interface ComposeService {
  ports?: unknown;
  network_mode?: string;
  command?: unknown;
  environment?: Record<string, string>;
}

/**
 * Writes `input` to `output` on the host's network. Each service's `environment` gets
 * `settings[service]`'s variables; the key `@command` sets its command instead.
 */
export function writeHostNetworkCompose(
  input: string,
  output: string,
  settings: Record<string, Record<string, string | string[]>>,
): void {
  const compose = parse(fs.readFileSync(input, 'utf8')) as {
    services: Record<string, ComposeService>;
  };
  for (const service of Object.values(compose.services)) {
    delete service.ports;
    service.network_mode = 'host';
  }
  for (const [name, values] of Object.entries(settings)) {
    const service = compose.services[name];
    if (service === undefined) throw new Error(`compose.yaml has no service ${name}`);
    for (const [key, value] of Object.entries(values)) {
      if (key === '@command') service.command = value;
      else service.environment = { ...service.environment, [key]: String(value) };
    }
  }
  fs.writeFileSync(output, stringify(compose));
}
