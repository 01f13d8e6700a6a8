// The whole client: Gatehouse's JSON answers, read with fetch on this page's own origin
// (the dev server's proxy or nginx forwards /api/auth/* and /api/account/* to Gatehouse). The session cookie is
// HttpOnly: this script never sees it, the browser sends it.

/** GET /api/auth/csrf: a token for the next post; Gatehouse sets its CSRF cookie alongside. */
async function csrfToken() {
  const response = await fetch('/api/auth/csrf');
  const { csrfToken: token } = await response.json();
  return token;
}

/** GET /api/auth/session: null, or { user: { id, email, name }, expires }. */
async function session() {
  const response = await fetch('/api/auth/session');
  if (!response.ok) throw new Error(`session read answered ${response.status}`);
  return response.json();
}

/**
 * POST /api/auth/callback/credentials with `X-Auth-Return-Redirect: 1`: Gatehouse answers
 * 200 {"url": …} instead of a redirect. A refusal's url carries `error=` and `code=`.
 */
async function signIn(email, password) {
  const response = await fetch('/api/auth/callback/credentials', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Auth-Return-Redirect': '1',
    },
    body: new URLSearchParams({ csrfToken: await csrfToken(), email, password }),
  });
  if (!response.ok) throw new Error(`sign-in answered ${response.status}`);
  const { url } = await response.json();
  const answer = new URL(url, location.href).searchParams;
  return answer.get('error') ? (answer.get('code') ?? answer.get('error')) : null;
}

/** POST /api/auth/signout: clears the cookie and ends the session on Gatehouse. */
async function signOut() {
  await fetch('/api/auth/signout', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Auth-Return-Redirect': '1',
    },
    body: new URLSearchParams({ csrfToken: await csrfToken() }),
  });
}

/**
 * POST /api/account/<route> (Gatehouse's account API, JSON) with the CSRF token in
 * `X-CSRF-Token`. Answers { ok: true, body } or { ok: false, message }: Gatehouse writes the
 * message for the person (a weak password, a wrong current password, too many requests).
 */
async function postAccount(route, fields = {}) {
  const response = await fetch(`/api/account${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': await csrfToken() },
    body: JSON.stringify(fields),
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok) return { ok: true, body };
  return { ok: false, message: body.error?.message ?? `Gatehouse answered ${response.status}.` };
}

const problems = {
  credentials: 'Wrong email or password.',
  rate_limited: 'Too many attempts: wait a few minutes, then try again.',
  email_unverified: 'Confirm your address first: we have sent you a new link.',
};

async function render() {
  const current = await session();
  const user = current?.user;
  document.querySelector('#who').textContent = user
    ? `Signed in as ${user.name ?? user.email} (id ${user.id})`
    : 'Not signed in';
  document.querySelector('#sign-in').hidden = Boolean(user);
  document.querySelector('#signed-in').hidden = !user;
  document.querySelector('#dashboard').textContent = user
    ? `Only for signed-in people: ${user.name ?? user.email}, this part is yours.`
    : '';
  document.querySelector('#self-service').hidden = Boolean(user);
  // /account is a route of this app (Gatehouse's account page is at /api/auth/account).
  document.querySelector('#account').hidden = !user || location.pathname !== '/account';
  document.querySelector('#account-email').textContent = user
    ? `${user.name ?? ''} · ${user.email}`
    : '';
}

/**
 * Runs `action` with a submitted form's fields; a message it returns goes to the form's status
 * line, and the form is cleared after a success.
 */
function onSubmit(selector, action) {
  const form = document.querySelector(selector);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const fields = Object.fromEntries(new FormData(form));
    const { ok, message } = await action(fields);
    form.querySelector('[role=status]').textContent = message;
    if (ok) form.reset();
  });
}

// Gatehouse answers the same for every address (nobody learns who has an account) and mails a
// link to its own page for the new password, on this origin.
onSubmit('#forgot', async ({ email }) => {
  const answer = await postAccount('/password/forgot', { email });
  return answer.ok
    ? { ok: true, message: 'If an account exists for that address, we have mailed it a link.' }
    : answer;
});

// Sign-up (Gatehouse runs with SIGNUP=open): the account is made when the mailed link comes
// back, on Gatehouse's page, with the password chosen here.
onSubmit('#sign-up', async ({ name, email, password }) => {
  const answer = await postAccount('/signup', { name, email, password });
  return answer.ok
    ? { ok: true, message: 'Check your inbox: open the link we mailed you to create the account.' }
    : answer;
});

// Gatehouse ends every other session and sets a new cookie for this one.
onSubmit('#change-password', async ({ currentPassword, newPassword, repeat }) => {
  if (newPassword !== repeat) return { ok: false, message: 'The new passwords differ.' };
  const answer = await postAccount('/password/change', { currentPassword, newPassword });
  return answer.ok
    ? { ok: true, message: 'Password changed. Your other sessions are signed out.' }
    : answer;
});

// A change of address needs a recent sign-in: the password proves it again first. The address
// changes when the link mailed to the new one is opened.
onSubmit('#change-email', async ({ email, password }) => {
  const proved = await postAccount('/reauthenticate', { password });
  if (!proved.ok) return proved;
  const answer = await postAccount('/email/change', { email });
  return answer.ok
    ? { ok: true, message: `We have mailed a link to ${email}: open it to change your address.` }
    : answer;
});

document.querySelector('#sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.currentTarget);
  const code = await signIn(String(form.get('email')), String(form.get('password')));
  document.querySelector('#problem').textContent = code
    ? (problems[code] ?? 'Sign-in failed: try again.')
    : '';
  render().catch((error) => {
    document.querySelector('#problem').textContent = `Gatehouse did not answer: ${error}`;
  });
});

document.querySelector('#sign-out').addEventListener('click', async () => {
  await signOut();
  render().catch((error) => {
    document.querySelector('#problem').textContent = `Gatehouse did not answer: ${error}`;
  });
});

render().catch((error) => {
  document.querySelector('#problem').textContent = `Gatehouse did not answer: ${error}`;
});
