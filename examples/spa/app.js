// The whole client: Gatehouse's JSON answers, read with fetch on this page's own origin
// (the dev server's proxy or nginx forwards /api/auth/* to Gatehouse). The session cookie is
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
}

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
