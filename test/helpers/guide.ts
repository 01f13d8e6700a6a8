// The marked code blocks of a Markdown guide (docs/integrate.md), for the test that follows it
// and for scripts/build/sync-guide.ts. A block is marked by an HTML comment on the line before
// its fence (a blank line between them is allowed); the comment is invisible on the rendered page:
//
//   <!-- file: examples/nextjs/app/page.tsx -->   the block is that file, byte for byte
//   <!-- run: gatehouse -->                       a shell command, run in that folder to its end
//   <!-- run: my-app, server -->                  a server: started, and left running
//   <!-- run: my-app, install -->                 installs the app's packages
//   <!-- run: my-app, build -->                   builds the app
//
// Erasable TypeScript only: Node runs the sync script directly.

export interface FileBlock {
  kind: 'file';
  /** Relative to the repository's root. */
  path: string;
  body: string;
  /** Offsets of `body` in the guide's text. */
  start: number;
  end: number;
}

export type RunRole = 'command' | 'server' | 'install' | 'build';

export interface RunBlock {
  kind: 'run';
  /** The folder it runs in, as the guide names it: `gatehouse` or `my-app`. */
  folder: string;
  role: RunRole;
  body: string;
  start: number;
  end: number;
}

export type GuideBlock = FileBlock | RunBlock;

const marked = /<!-- (file|run): ([^>]*?) -->\n\n?(`{3,})[^\n]*\n/g;
const roles: readonly string[] = ['command', 'server', 'install', 'build'];

/** Every marked block, in the guide's order; throws on a malformed marker or an open fence. */
export function guideBlocks(text: string): GuideBlock[] {
  const blocks: GuideBlock[] = [];
  for (const match of text.matchAll(marked)) {
    const [header, kind, argument, fence] = match as unknown as [string, string, string, string];
    const start = match.index + header.length;
    const close = text.indexOf(`\n${fence}\n`, start - 1);
    if (close < 0) throw new Error(`guide: the block after "${header.trim()}" is not closed`);
    const end = close + 1;
    const body = text.slice(start, end);
    if (kind === 'file') {
      blocks.push({ kind: 'file', path: argument.trim(), body, start, end });
      continue;
    }
    const [folder = '', role = 'command', ...extra] = argument.split(',').map((s) => s.trim());
    if (!folder || !roles.includes(role) || extra.length > 0)
      throw new Error(`guide: bad marker "${header.trim()}" (run: <folder>[, ${roles.join('|')}])`);
    blocks.push({ kind: 'run', folder, role: role as RunRole, body, start, end });
  }
  return blocks;
}

/** The guide with every file block's body replaced by `read(path)`. */
export function syncedGuide(text: string, read: (path: string) => string): string {
  let out = '';
  let at = 0;
  for (const block of guideBlocks(text)) {
    if (block.kind !== 'file') continue;
    out += text.slice(at, block.start) + read(block.path);
    at = block.end;
  }
  return out + text.slice(at);
}
