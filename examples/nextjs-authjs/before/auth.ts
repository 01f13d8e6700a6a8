import { DrizzleAdapter } from '@auth/drizzle-adapter';
import bcrypt from 'bcryptjs';
import { eq } from 'drizzle-orm';
import NextAuth from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { db } from './db';
import { accounts, authenticators, sessions, users, verificationTokens } from './db/schema';

// next-auth v5 signing people in itself: the route handler (app/api/auth/[...nextauth]) answers
// /api/auth/*, the Credentials provider checks the bcrypt hash in `user.password`, and the
// session is a cookie sealed with AUTH_SECRET (.env.local).
export const { handlers, auth } = NextAuth({
  adapter: DrizzleAdapter(db, {
    usersTable: users,
    accountsTable: accounts,
    sessionsTable: sessions,
    verificationTokensTable: verificationTokens,
    authenticatorsTable: authenticators,
  }),
  // The Credentials provider signs in with JWT sessions only (an adapter defaults to database
  // sessions).
  session: { strategy: 'jwt' },
  providers: [
    Credentials({
      credentials: { email: {}, password: {} },
      async authorize(credentials) {
        const [user] = await db
          .select()
          .from(users)
          .where(eq(users.email, String(credentials.email ?? '')));
        const password = String(credentials.password ?? '');
        if (!user?.password || !(await bcrypt.compare(password, user.password))) return null;
        return { id: user.id, name: user.name, email: user.email };
      },
    }),
  ],
  // `next start` behind no proxy: trust the Host header (else every request is UntrustedHost).
  trustHost: true,
  callbacks: {
    // next-auth's default session keeps only name, email and image: keep the user's id too.
    session({ session, token }) {
      return { ...session, user: { ...session.user, id: token.sub ?? '' } };
    },
  },
});
