import { getSession } from '@auth/express';
import express from 'express';
import {
  csrfToken,
  forwardToGatehouse,
  GatehouseDown,
  postAccount,
  sessionFromGatehouse,
  waysIn,
} from './gatehouse.js';
import { requireToken } from './verify-token.js';

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

// Gatehouse's own pages on this origin (under the forwarded /api/auth): plain links, no code of
// this app behind them. They work without script and mail their links to pages beside them.
const gatehousePages = {
  account: '/api/auth/account',
  // Gatehouse's sign-in page, with every way in (passkeys too), and back here.
  signIn: '/api/auth/signin?callbackUrl=%2F',
  forgotPassword: '/api/auth/account/password/forgot',
  signUp: '/api/auth/account/signup',
};

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function describe(user) {
  return user ? `Signed in as ${user.name ?? user.email} (id ${user.id})` : 'Not signed in';
}

function page(title, body) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escape(title)}</title>
</head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem">
${body}
</body>
</html>`;
}

// Plain HTML forms that post to Gatehouse through this app: they work without JavaScript.
// Gatehouse answers a sign-in with a redirect to callbackUrl, and a sign-out with a redirect to
// callbackUrl. Anything else goes to its own sign-in page, which finishes it without script: a
// wrong password (it says why), the code of a person's authenticator app (two-step sign-in),
// or setting one up where Gatehouse requires it; then back to callbackUrl, signed in.
function signInForm(token, ways) {
  const hidden = `<input type="hidden" name="csrfToken" value="${escape(token)}">
  <input type="hidden" name="callbackUrl" value="/">`;
  // Gatehouse's other ways in, as configured there: a button per identity provider (to the
  // provider, and back to callbackUrl signed in), and the sign-in mail's form (on to Gatehouse's
  // "check your inbox" page, which takes the mailed code).
  const providers = ways.providers.map(
    ({ id, name }) => `<form method="post" action="/api/auth/signin/${encodeURIComponent(id)}">
  ${hidden}
  <p><button type="submit">Continue with ${escape(name)}</button></p>
</form>`,
  );
  const email = ways.email
    ? [
        `<form method="post" action="/api/auth/signin/email">
  ${hidden}
  <p><label>Or send a sign-in link to <input name="email" type="email" autocomplete="username" required></label></p>
  <button type="submit">Email me a sign-in link</button>
</form>`,
      ]
    : [];
  return [
    `<form method="post" action="/api/auth/callback/credentials">
  ${hidden}
  <p><label>Email <input name="email" type="email" autocomplete="username" required></label></p>
  <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
  <button type="submit">Sign in</button>
</form>`,
    ...providers,
    ...email,
  ].join('\n');
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
    const [decoded, asked, token, ways] = await Promise.all([
      getSession(req, authConfig),
      sessionFromGatehouse(req, res),
      csrfToken(req, res),
      waysIn(req),
    ]);
    res.send(
      page(
        'My app',
        `<h1>My app</h1>
<p>Cookie decoded here (@auth/express): <span id="server-decoded">${escape(describe(decoded?.user))}</span></p>
<p>Asking Gatehouse (fetch): <span id="server-gatehouse">${escape(describe(asked?.user))}</span></p>
${
  asked
    ? `<p><a href="/dashboard">Dashboard</a> · <a href="/account">Your account</a></p>\n${signOutForm(token)}`
    : `${signInForm(token, ways)}
<p><a href="${gatehousePages.signIn}">Other ways to sign in</a> · <a href="${gatehousePages.forgotPassword}">Forgot your password?</a> · <a href="${gatehousePages.signUp}">Create an account</a></p>`
}`,
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

// An API route for callers without the cookie (a mobile app, a script, another service, or a
// page's fetch): a token from Gatehouse's /api/auth/token in `Authorization: Bearer`, checked
// here against Gatehouse's public keys (verify-token.js), with no call to Gatehouse.
app.get('/api/me', requireToken, (req, res) => {
  const { sub, email, name, sid, amr, exp } = res.locals.token;
  res.set('Cache-Control', 'no-store');
  res.json({
    id: sub,
    email,
    name,
    session: sid,
    amr,
    expires: new Date(exp * 1000).toISOString(),
  });
});

// This app's own /account (Gatehouse's is at /api/auth/account, so this one stays the app's):
// forms that post here, and this server posts them on to Gatehouse's account API with the CSRF
// token the page carried. Each success redirects back (a reload posts nothing twice).
const done = {
  password: 'Password changed. Your other sessions are signed out.',
  email: 'We have mailed a link to your new address: your address changes when you open it.',
};

async function accountPage(req, res, { said = '', problem = '', status = 200 } = {}) {
  const [session, token] = await Promise.all([sessionFromGatehouse(req, res), csrfToken(req, res)]);
  if (!session) return res.redirect(303, '/');
  const { user } = session;
  res.status(status).send(
    page(
      'Your account',
      `<h1>Your account</h1>
<p id="account-email">${escape(user.name ?? '')} · ${escape(user.email)}</p>
${said ? `<p role="status"><strong>${escape(said)}</strong></p>` : ''}${problem ? `<p role="alert"><strong>${escape(problem)}</strong></p>` : ''}
<h2>Password</h2>
<form id="change-password" method="post" action="/account/password">
  <input type="hidden" name="csrfToken" value="${escape(token)}">
  <p><label>Current password <input name="currentPassword" type="password" autocomplete="current-password" required></label></p>
  <p><label>New password <input name="newPassword" type="password" autocomplete="new-password" required></label></p>
  <p><label>New password again <input name="repeat" type="password" autocomplete="new-password" required></label></p>
  <button type="submit">Change password</button>
</form>
<h2>Email address</h2>
<form id="change-email" method="post" action="/account/email">
  <input type="hidden" name="csrfToken" value="${escape(token)}">
  <p><label>New address <input name="email" type="email" autocomplete="email" required></label></p>
  <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
  <p><label>Code from your authenticator app, if you use two-step sign-in <input name="code" autocomplete="one-time-code" spellcheck="false" size="20"></label></p>
  <button type="submit">Change address</button>
</form>
<h2>Security</h2>
<p>Where you are signed in, two-step sign-in, passkeys, access tokens and your history are on
<a href="${gatehousePages.account}">Gatehouse's account page</a>.</p>
<p><a href="/">Home</a></p>`,
    ),
  );
}

app.get('/account', async (req, res, next) => {
  try {
    const said = Object.hasOwn(done, String(req.query.done)) ? done[req.query.done] : '';
    await accountPage(req, res, { said });
  } catch (error) {
    next(error);
  }
});

// Only these routes read a form body: the forwarder above got its bodies unread.
const form = express.urlencoded({ extended: false });

app.post('/account/password', form, async (req, res, next) => {
  try {
    const { csrfToken: token, currentPassword, newPassword, repeat } = req.body;
    if (newPassword !== repeat)
      return await accountPage(req, res, { problem: 'The new passwords differ.', status: 400 });
    // Gatehouse ends every other session and gives this one a new cookie (passed on).
    const answer = await postAccount(req, res, '/password/change', token, {
      currentPassword,
      newPassword,
    });
    if (!answer.ok) return await accountPage(req, res, { problem: answer.message, status: 400 });
    res.redirect(303, '/account?done=password');
  } catch (error) {
    next(error);
  }
});

// The code field as Gatehouse takes it: six digits are the app's code (otp), anything else a
// recovery code; nothing when it is empty (an account without two-step sign-in).
function secondFactor(code = '') {
  const typed = code.trim();
  if (typed === '') return {};
  return /^\d{3} ?\d{3}$/.test(typed) ? { otp: typed.replace(' ', '') } : { recoveryCode: typed };
}

app.post('/account/email', form, async (req, res, next) => {
  try {
    const { csrfToken: token, email, password, code } = req.body;
    // A change of address needs a recent sign-in: the password proves it again first, with the
    // code of an account that has two-step sign-in.
    const proved = await postAccount(req, res, '/reauthenticate', token, {
      password,
      ...secondFactor(code),
    });
    const answer = proved.ok
      ? await postAccount(req, res, '/email/change', token, { email })
      : proved;
    if (!answer.ok) return await accountPage(req, res, { problem: answer.message, status: 400 });
    res.redirect(303, '/account?done=email');
  } catch (error) {
    next(error);
  }
});

// Gatehouse down (stopped, restarting, out of reach): a page that says so, not a bare 500.
app.use((error, req, res, next) => {
  if (!(error instanceof GatehouseDown)) return next(error);
  console.error(`${req.method} ${req.originalUrl}: ${error.message}:`, error.cause);
  res
    .status(503)
    .set('Retry-After', '5')
    .send(
      page(
        'Try again in a moment',
        `<h1>Try again in a moment</h1>
<p role="alert">Gatehouse, the sign-in service, is not answering: try again in a moment.</p>
<p><a href="${escape(req.method === 'GET' ? req.originalUrl : '/')}">Try again</a></p>`,
      ),
    );
});

app.listen(port, () => console.log(`My app on http://localhost:${port}`));
