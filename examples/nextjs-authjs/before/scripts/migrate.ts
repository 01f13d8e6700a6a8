import { migrate } from 'drizzle-orm/libsql/migrator';
import { db } from '../db/index.ts';

// `npm run db:migrate`: makes data/app.db's tables, from db/migrations (the SQL `drizzle-kit
// generate` writes for db/schema.ts). Node.js 24 runs this TypeScript file as it is.
await migrate(db, { migrationsFolder: 'db/migrations' });
console.log('data/app.db: tables up to date');
