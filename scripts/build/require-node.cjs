// The first step of every npm script that runs TypeScript with node (`npm start`, `npm run
// users`, `npm run build`, `npm test`, …): plain CommonJS, so an older Node (a second terminal
// without `. scripts/build/use-node-24.sh`) is told what to install instead of failing with
// ERR_UNKNOWN_FILE_EXTENSION ".ts". The service and the CLI say the same (src/boot/node-version.ts).
'use strict';
const minimum = 24;
const version = process.versions.node;
if (Number(version.split('.')[0]) < minimum) {
  process.stderr.write(
    `gatehouse: Node.js ${minimum} LTS or later is required, this is ${version}` +
      ' (in a checkout on Linux x64, `. scripts/build/use-node-24.sh` installs it and puts it' +
      ' first on PATH for this shell: run it in every terminal you use)\n',
  );
  process.exit(1);
}
