import { createHash } from 'node:crypto';

/*
 * The one script of Gatehouse's pages: WebAuthn cannot run without one. It is inline, allowed by
 * its hash in the Content-Security-Policy (with `connect-src 'self'` for its requests), and does
 * nothing in a browser without passkeys (no `PublicKeyCredential`, or without the JSON helpers
 * of WebAuthn Level 3): the pages then stay as they are without script, the passkey controls
 * hidden and a hint saying what needs it.
 *
 * On the sign-in page (`[data-passkey-signin]`): the options (`?action=authenticate`), the
 * browser's prompt, and the assertion posted to the callback as `next-auth/webauthn` posts it
 * (`action`, `data`, `csrfToken`, `callbackUrl`, `X-Auth-Return-Redirect`); a refusal comes back
 * to the sign-in page with Auth.js's `error` and `code`, as the password form's does.
 * On the account page (`[data-passkey-add]`): the current password first when the form asks
 * for it (re-authentication), then the registration options, the prompt, the callback's
 * `register` action, and the page again with the outcome.
 */
const source = `(() => {
  const PKC = window.PublicKeyCredential;
  if (!PKC || !PKC.parseRequestOptionsFromJSON || !PKC.parseCreationOptionsFromJSON) return;
  const base = '/api/auth';
  const say = (element, text) => { if (element) element.textContent = text; };
  const post = (url, fields, csrfToken) =>
    fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Auth-Return-Redirect': '1',
        'X-CSRF-Token': csrfToken,
      },
      body: new URLSearchParams({ ...fields, csrfToken }),
    });
  const options = async (action) => {
    const answer = await fetch(base + '/webauthn-options/passkey?action=' + action, {
      credentials: 'same-origin',
    });
    return answer.ok ? answer.json() : { refused: answer.status };
  };
  for (const element of document.querySelectorAll('[data-passkey-only]')) element.hidden = false;
  for (const element of document.querySelectorAll('[data-passkey-none]')) element.hidden = true;

  const signIn = document.querySelector('[data-passkey-signin]');
  if (signIn) {
    const form = document.querySelector('form[data-signin]');
    const status = document.getElementById('passkey-status');
    signIn.addEventListener('click', async () => {
      signIn.disabled = true;
      say(status, '');
      try {
        const got = await options('authenticate');
        if (got.refused) throw new Error('options');
        const credential = await navigator.credentials.get({
          publicKey: PKC.parseRequestOptionsFromJSON(got.options),
        });
        const callbackUrl = form.elements.callbackUrl.value;
        const answer = await post(
          base + '/callback/passkey',
          { action: 'authenticate', data: JSON.stringify(credential.toJSON()), callbackUrl },
          form.elements.csrfToken.value,
        );
        const { url } = await answer.json();
        const to = new URL(url, location.href);
        const error = to.searchParams.get('error');
        if (error === null) { location.assign(to.href); return; }
        const back = new URLSearchParams({ error, callbackUrl });
        const code = to.searchParams.get('code');
        if (code !== null) back.set('code', code);
        const retryAfter = answer.headers.get('Retry-After');
        if (retryAfter !== null) back.set('retryAfter', retryAfter);
        location.assign(base + '/signin?' + back);
      } catch (error) {
        say(status, error && error.name === 'NotAllowedError'
          ? 'No passkey was used. Try again, or sign in with your password.'
          : 'Signing in with a passkey did not work here. Sign in with your password instead.');
        signIn.disabled = false;
      }
    });
  }

  const add = document.querySelector('form[data-passkey-add]');
  if (add) {
    const status = document.getElementById('passkey-add-status');
    add.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = add.querySelector('button');
      button.disabled = true;
      say(status, '');
      const csrfToken = add.elements.csrfToken.value;
      const done = (outcome) => location.assign(location.pathname + '?done=' + outcome);
      try {
        const password = add.elements.currentPassword;
        if (password) {
          const proved = await fetch('/api/account/reauthenticate', {
            method: 'POST',
            credentials: 'same-origin',
            headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken },
            body: JSON.stringify({ password: password.value }),
          });
          if (!proved.ok) {
            say(status, proved.status === 429
              ? 'Too many wrong passwords; try again later.'
              : 'Your current password is not correct, so no passkey was added.');
            button.disabled = false;
            return;
          }
        }
        const got = await options('register');
        if (got.refused) {
          say(status, got.refused === 401
            ? 'Enter your current password to add a passkey (reload the page first).'
            : 'A passkey cannot be added right now.');
          button.disabled = false;
          return;
        }
        const credential = await navigator.credentials.create({
          publicKey: PKC.parseCreationOptionsFromJSON(got.options),
        });
        const fields = { action: 'register', data: JSON.stringify(credential.toJSON()) };
        const name = add.elements.passkeyName.value.trim();
        if (name !== '') fields.name = name;
        const answer = await post(base + '/callback/passkey', fields, csrfToken);
        const body = answer.ok ? await answer.json() : {};
        done(body.url && !body.url.includes('error=') ? 'passkey-added' : 'passkey-refused');
      } catch (error) {
        say(status, error && (error.name === 'NotAllowedError' || error.name === 'AbortError')
          ? 'No passkey was added.'
          : error && error.name === 'InvalidStateError'
            ? 'This device already holds a passkey for your account.'
            : 'A passkey could not be added in this browser.');
        button.disabled = false;
      }
    });
  }
})();`;

/** The script's element for a page. */
export const passkeyScript = source;

/** The CSP source that allows exactly this script. */
export const passkeyScriptCspSource = `'sha256-${createHash('sha256').update(source).digest('base64')}'`;
