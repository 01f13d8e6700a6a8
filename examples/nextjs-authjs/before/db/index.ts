import { createClient } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';

// The app's database: a SQLite file, through libSQL's client (Drizzle's driver for SQLite).
export const db = drizzle(createClient({ url: 'file:data/app.db' }));
