import { getSession } from '@auth/express';
import express from 'express';
import { csrfToken, forwardToGatehouse, sessionFromGatehouse } from './gatehouse.js';

const port = Number(process.env.PORT ?? 3001);

// @auth/express only reads the cookie Gatehouse sets: no providers, and no ExpressAuth handler
// (Gatehouse answers /api/auth/*). The cookie is sealed with Gatehouse's secret, so AUTH_SECRET
// must be the same value on both (getSession reads it from the environment).
const authConfig = {
  providers: [],
  trustHost: true,
  callbacks: {
    // Auth.js's default session keeps only name, email and image: keep the user's id too.
    session({ session, token }) {
      return { ...session, user: { ...session.user, id: token.sub ?? '' } };
    },
  },
};

const app = express();

// Every Gatehouse path goes to Gatehouse, before anything reads a body: Auth.js's routes and
// the account pages (ACCOUNT_PAGES_PATH=/api/auth/account) under /api/auth, the account API
// under /api/account.
app.use(['/api/auth', '/api/account'], forwardToGatehouse);

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function describe(user) {
  return user ? `Signed in as ${user.name ?? user.email} (id ${user.id})` : 'Not signed in';
}

function page(title, body) {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escape(title)}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto">
${body}
</body>
</html>`;
}

// Plain HTML forms that post to Gatehouse through this app: they work without JavaScript.
// Gatehouse answers a sign-in with a redirect to callbackUrl (a refusal: to its own sign-in
// page, which says why), and a sign-out with a redirect to callbackUrl.
function signInForm(token) {
  return `<form method="post" action="/api/auth/callback/credentials">
  <input type="hidden" name="csrfToken" value="${escape(token)}">
  <input type="hidden" name="callbackUrl" value="/">
  <p><label>Email <input name="email" type="email" autocomplete="username" required></label></p>
  <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
  <button type="submit">Sign in</button>
</form>`;
}

function signOutForm(token) {
  return `<form method="post" action="/api/auth/signout">
  <input type="hidden" name="csrfToken" value="${escape(token)}">
  <input type="hidden" name="callbackUrl" value="/">
  <button type="submit">Sign out</button>
</form>`;
}

app.get('/', async (req, res, next) => {
  try {
    const [decoded, asked, token] = await Promise.all([
      getSession(req, authConfig),
      sessionFromGatehouse(req, res),
      csrfToken(req, res),
    ]);
    res.send(
      page(
        'My app',
        `<h1>My app</h1>
<p>Cookie decoded here (@auth/express): <span id="server-decoded">${escape(describe(decoded?.user))}</span></p>
<p>Asking Gatehouse (fetch): <span id="server-gatehouse">${escape(describe(asked?.user))}</span></p>
${asked ? `<p><a href="/dashboard">Dashboard</a></p>\n${signOutForm(token)}` : signInForm(token)}`,
      ),
    );
  } catch (error) {
    next(error);
  }
});

// A protected page: it asks Gatehouse, so a signed-out or revoked session never gets in.
app.get('/dashboard', async (req, res, next) => {
  try {
    const session = await sessionFromGatehouse(req, res);
    if (!session) return res.redirect(303, '/');
    res.send(
      page(
        'Dashboard',
        `<h1>Dashboard</h1>
<p id="dashboard">Only for signed-in people: ${escape(session.user.name ?? session.user.email)}, this page is yours.</p>
<p><a href="/">Home</a></p>`,
      ),
    );
  } catch (error) {
    next(error);
  }
});

app.listen(port, () => console.log(`My app on http://localhost:${port}`));
