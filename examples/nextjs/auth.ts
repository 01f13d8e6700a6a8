import NextAuth from 'next-auth';

// Stock next-auth v5, used only to read the session cookie Gatehouse sets: no providers and no
// route handler (the rewrite in next.config.ts answers /api/auth/*). The cookie is sealed with
// Gatehouse's secret, so AUTH_SECRET must be the same value on both.
export const { auth } = NextAuth({
  secret: process.env.AUTH_SECRET,
  providers: [],
  // Without it `next start` answers every auth() with UntrustedHost and the page reads as
  // signed out. This app only reads sessions (it builds no redirect from the Host header); the
  // forwarded protocol picks the cookie's name (`__Secure-` over https).
  trustHost: true,
  callbacks: {
    // next-auth's default session keeps only name, email and image: keep the user's id too.
    session({ session, token }) {
      return { ...session, user: { ...session.user, id: token.sub ?? '' } };
    },
  },
});
