import NextAuth from 'next-auth';

// Gatehouse signs people in now (next.config.ts sends /api/auth/* to it). next-auth stays only
// to read the session cookie on the server, which Gatehouse seals with this app's AUTH_SECRET:
// no adapter, no providers, no route handler.
export const { auth } = NextAuth({
  providers: [],
  // `next start` behind no proxy: trust the Host header (else every request is UntrustedHost).
  trustHost: true,
  callbacks: {
    // next-auth's default session keeps only name, email and image: keep the user's id too.
    session({ session, token }) {
      return { ...session, user: { ...session.user, id: token.sub ?? '' } };
    },
  },
});
