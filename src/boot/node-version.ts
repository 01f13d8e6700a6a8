/** The oldest Node.js line Gatehouse runs on: older lines get no security fixes (20 since 2026-04-30). */
export const minimumNodeMajor = 24;

/**
 * Stops a start on an older Node.js with a message that says what to install, instead of
 * whatever the first missing API would throw later. `engines` in package.json only makes npm
 * refuse to install; a copied `dist/` or a global `node` of the wrong line still needs this.
 */
export function refuseUnsupportedNode(version: string = process.versions.node): void {
  const major = Number(version.split('.')[0]);
  if (major >= minimumNodeMajor) return;
  process.stderr.write(
    `gatehouse: Node.js ${minimumNodeMajor} LTS or later is required, this is ${version}` +
      ` (in a checkout on Linux x64, \`. scripts/build/use-node-24.sh\` installs it)\n`,
  );
  process.exit(1);
}
