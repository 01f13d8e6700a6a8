import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { nextModules } from './next-app.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');

/**
 * The page an Auth.js / next-auth application ships (test/fixtures/next-auth-page/: next-auth/react's
 * useSession, signIn and signOut), bundled by esbuild into `www` as `index.html` and `app.js`.
 */
export async function buildNextAuthPage(www: string): Promise<void> {
  fs.copyFileSync(path.join(fixtures, 'next-auth-page/index.html'), path.join(www, 'index.html'));
  await build({
    entryPoints: [path.join(fixtures, 'next-auth-page/page.jsx')],
    outfile: path.join(www, 'app.js'),
    bundle: true,
    format: 'esm',
    jsx: 'automatic',
    minify: true,
    logLevel: 'silent',
    // next-auth/react and React from the example app's install, as the reader's build.
    nodePaths: [nextModules],
    // What Next.js would inline for a client bundle: no NEXTAUTH_URL, so next-auth/react
    // calls the relative /api/auth on the page's own origin.
    define: {
      'process.env.NODE_ENV': '"production"',
      'process.env.NEXTAUTH_URL': 'undefined',
      'process.env.NEXTAUTH_URL_INTERNAL': 'undefined',
      'process.env.VERCEL_URL': 'undefined',
    },
  });
}
