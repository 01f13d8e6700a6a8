// Bundles the server into one ES module (dist/gatehouse.mjs). Measured here: loading ~400
// small ES modules (Kysely, zod, Fastify, Auth.js) dominated start-up; one file roughly halves
// the time to the first 200. Native and optional modules stay external, loaded from node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/gatehouse.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Fastify's schema compilers are never loaded (src/app.ts supplies its own factories), so
  // they stay out of the file V8 must parse at every start.
  external: [
    'better-sqlite3',
    '@node-rs/argon2',
    'pg',
    'pg-native',
    '@fastify/ajv-compiler',
    '@fastify/fast-json-stringify-compiler',
  ],
  minifyWhitespace: true,
  minifySyntax: true,
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: {
    js: "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
