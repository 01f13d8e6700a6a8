// Rewrites the guides' file blocks (`<!-- file: PATH -->` before a fence) from the files they
// show, so each guide and its example stay the same text. The guides are docs/integrate.md
// (examples/nextjs), docs/integrate-*.md (the other examples) and docs/migrate-from-authjs.md
// (examples/nextjs-authjs):
//   node scripts/build/sync-guide.ts          rewrite every guide
//   node scripts/build/sync-guide.ts --check  exit 1, naming the blocks, when they differ
// test/clients/integrate-guide.test.ts and test/examples/ (migrate-guide.test.ts among them)
// fail on any difference as well.
import fs from 'node:fs';
import path from 'node:path';
import { guideBlocks, syncedGuide } from '../../test/helpers/guide.ts';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const guides = fs
  .readdirSync(path.join(root, 'docs'))
  .filter((name) => /^(integrate(-[a-z]+)?|migrate-from-authjs)\.md$/.test(name))
  .sort()
  .map((name) => `docs/${name}`);

let differing = 0;
for (const guide of guides) {
  const text = read(guide);
  const stale = guideBlocks(text).filter((b) => b.kind === 'file' && b.body !== read(b.path));
  differing += stale.length;
  if (process.argv.includes('--check')) {
    for (const block of stale)
      if (block.kind === 'file') console.error(`${guide} differs: ${block.path}`);
  } else if (stale.length > 0) {
    fs.writeFileSync(path.join(root, guide), syncedGuide(text, read));
    console.log(`${guide}: ${stale.length} file block(s) rewritten`);
  } else {
    console.log(`${guide}: every file block matches its file`);
  }
}
if (process.argv.includes('--check')) process.exitCode = differing > 0 ? 1 : 0;
