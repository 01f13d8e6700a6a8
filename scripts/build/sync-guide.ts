// Rewrites docs/integrate.md's file blocks (`<!-- file: PATH -->` before a fence) from the files
// they show, so the guide and examples/nextjs stay the same text:
//   node scripts/build/sync-guide.ts          rewrite the guide
//   node scripts/build/sync-guide.ts --check  exit 1, naming the blocks, when they differ
// test/clients/integrate-guide.test.ts fails on any difference as well.
import fs from 'node:fs';
import path from 'node:path';
import { guideBlocks, syncedGuide } from '../../test/helpers/guide.ts';

const root = path.resolve(import.meta.dirname, '../..');
const guide = path.join(root, 'docs/integrate.md');
const text = fs.readFileSync(guide, 'utf8');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

const stale = guideBlocks(text).filter((b) => b.kind === 'file' && b.body !== read(b.path));
if (process.argv.includes('--check')) {
  for (const block of stale) if (block.kind === 'file') console.error(`differs: ${block.path}`);
  process.exitCode = stale.length > 0 ? 1 : 0;
} else if (stale.length > 0) {
  fs.writeFileSync(guide, syncedGuide(text, read));
  console.log(`docs/integrate.md: ${stale.length} file block(s) rewritten`);
} else {
  console.log('docs/integrate.md: every file block matches its file');
}
