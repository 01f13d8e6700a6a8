// Usage: node compose-host-network.mjs IN_COMPOSE OUT_COMPOSE [SERVICE=KEY=VALUE …]
//        (KEY `@command` sets the service's command to the JSON array VALUE)
//
// Test-only: writes compose.yaml as shipped, but with every service on the host's network
// (this machine's private Docker engine runs with --bridge=none, so the host's networking is
// never changed) and its published ports dropped (Docker refuses them in that mode), plus the
// environment the test gives each service (loopback addresses, the ports it chose).
import fs from 'node:fs';
import { parse, stringify } from 'yaml';

const [input, output, ...assignments] = process.argv.slice(2);
if (input === undefined || output === undefined) {
  process.stderr.write('usage: compose-host-network.mjs IN OUT [SERVICE=KEY=VALUE …]\n');
  process.exit(2);
}
const compose = parse(fs.readFileSync(input, 'utf8'));
for (const service of Object.values(compose.services)) {
  delete service.ports;
  service.network_mode = 'host';
}
for (const assignment of assignments) {
  const match = /^([^=]+)=([^=]+)=(.*)$/s.exec(assignment);
  if (match === null) throw new Error(`not SERVICE=KEY=VALUE: ${assignment}`);
  const [, name, key, value] = match;
  const service = compose.services[name];
  if (service === undefined) throw new Error(`compose.yaml has no service ${name}`);
  if (key === '@command') service.command = JSON.parse(value);
  else service.environment = { ...service.environment, [key]: value };
}
fs.writeFileSync(output, stringify(compose));
