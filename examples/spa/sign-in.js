// The ways in on this page: the password, then the second step Gatehouse asks for (the code of
// an authenticator app, or, with SECOND_FACTOR=required, setting one up), a button per identity
// provider, and a sign-in link by mail. Each step gives back { ok, message, signedIn,
// recoveryCodes }, which app.js puts on the page.
import {
  enrolmentKey,
  mailSignInLink,
  providers,
  secondFactorFields,
  signIn,
  signInWith,
} from './gatehouse.js';

/** Gatehouse's own origin, its AUTH_URL's, read from its providers' list: for the words below. */
let gatehouseOrigin = null;

const enterMailedCode = 'Enter the code we mailed you (or your administrator gave you) too.';

/** What each refusal says, by Gatehouse's `code`. */
const refusals = {
  // One answer for an unknown email and a wrong password.
  credentials: 'Wrong email or password.',
  rate_limited: 'Too many attempts: wait a few minutes, then try again.',
  email_unverified: 'Confirm your address first: we have sent you a new link.',
  second_factor_required:
    'Your account has two-step sign-in: enter the code your authenticator app shows (or a recovery code) too.',
  second_factor_invalid:
    'That code is not right, or was used already: try the next one your app shows.',
  email_code_required: enterMailedCode,
  enrolment_code_required: enterMailedCode,
  email_code_invalid:
    'That is not the code we mailed you (or your administrator gave you). After five wrong tries it stops working: then sign in again for a new one.',
  email_code_limited:
    'We have mailed you several codes in the last few minutes: wait a few minutes, then sign in again for a new one.',
  // The e-mail form's: an address that cannot be one.
  email_invalid: 'That is not an email address we can send to.',
  passkey_required:
    'Your account signs in with a passkey: use "Sign in with a passkey" on Gatehouse\'s sign-in page (/api/auth/signin).',
};

/** What a refusal says, in words. */
export function explain(code) {
  // The page is open on another origin than Gatehouse's AUTH_URL (127.0.0.1 for localhost).
  if (code === 'cross_site')
    return gatehouseOrigin && gatehouseOrigin !== location.origin
      ? `Gatehouse refused this as coming from another site: open this app at ${gatehouseOrigin}, the origin Gatehouse's AUTH_URL names, not ${location.origin}.`
      : `Gatehouse refused this as coming from another site: start it with AUTH_URL=${location.origin}, the origin this page is open on.`;
  return refusals[code] ?? `Sign-in failed (${code}): try again.`;
}

/** The sign-in form of each step: the password, the second step's code, the enrolment. */
const stepForms = { password: '#sign-in', code: '#second-step', enrol: '#enrol' };

/**
 * Shows the form of `step` alone, its first field focused; the other ways in and the
 * self-service forms go with the password step.
 */
function show(step) {
  for (const [name, form] of Object.entries(stepForms))
    document.querySelector(form).hidden = name !== step;
  document.querySelector('#self-service').hidden = step !== 'password';
  document.querySelector(`${stepForms[step]} input`).focus();
}

/** The enrolment form with the key Gatehouse derived for this sign-in. */
function showKey({ secret, uri, qrSvg, codeSentTo }) {
  document.querySelector('#enrol-why').textContent =
    codeSentTo === null
      ? 'Your account needs two-step sign-in. Ask your administrator for an enrolment code: it shows the app is yours to set up.'
      : `Your account needs two-step sign-in. To make sure it is you, we have mailed a code to ${codeSentTo}.`;
  document.querySelector('#email-code-label').textContent =
    codeSentTo === null
      ? 'Enrolment code from your administrator'
      : `Code we mailed to ${codeSentTo}`;
  // An <img> of the SVG, never the markup itself in the page: an image runs no script.
  document.querySelector('#app-qr').src =
    `data:image/svg+xml;charset=utf-8,${encodeURIComponent(qrSvg)}`;
  document.querySelector('#app-key').textContent = secret.replace(/(.{4})(?=.)/g, '$1 ');
  document.querySelector('#app-uri').href = uri;
  show('enrol');
}

const tookTooLong = () => {
  // The second step's cookie is gone (five minutes passed, or it was used).
  show('password');
  return { ok: false, message: 'That took too long: sign in with your password again.' };
};

/** After any step: signed in, on to the next step, or the refusal in words. */
async function next(step, { code, recoveryCodes }) {
  if (code === null) {
    show('password');
    return { ok: true, message: '', signedIn: true, recoveryCodes };
  }
  if (code === 'second_factor_required') {
    show('code');
    return { ok: true, message: '' };
  }
  if (
    step === 'password' &&
    (code === 'second_factor_enrolment_required' || code === 'enrolment_code_required')
  ) {
    // The same cookie reads the key to show: a right code of it, with the code Gatehouse mailed
    // (or, without mail, an administrator's), turns TOTP on and signs in.
    const key = await enrolmentKey();
    if (key === null) return tookTooLong();
    showKey(key);
    return { ok: true, message: '' };
  }
  if (step !== 'password' && code === 'credentials') return tookTooLong();
  return { ok: false, message: explain(code) };
}

/** The password, the first post: the only one that sends it. */
export const passwordStep = async ({ email, password }) =>
  next('password', await signIn({ email, password }));

/** The code of the app (or a recovery code), alone: the cookie stands for the password. */
export const codeStep = async ({ code }) => next('code', await signIn(secondFactorFields(code)));

/** Setting up the app: its code, and the code Gatehouse mailed (never a recovery code yet). */
export const enrolStep = async ({ code, emailCode }) =>
  next('enrol', await signIn({ otp: code.trim(), emailCode: emailCode.trim() }));

/**
 * The buttons and the form of the other ways in, for those Gatehouse lists: a "Continue with …"
 * button per identity provider (AUTH_GITHUB_ID, AUTH_OIDC_ISSUER…) and, with EMAIL_SIGNIN=on,
 * "Email me a sign-in link". Each sends the browser where Gatehouse's answer says: the
 * provider, or Gatehouse's "check your inbox" page, which takes the code from the mail; either
 * comes back to this page signed in. `say` shows a refusal.
 */
export async function offerWaysIn(say) {
  const all = await providers();
  gatehouseOrigin = new URL(all.credentials?.signinUrl ?? location.href).origin;
  const buttons = document.querySelector('#providers');
  for (const provider of Object.values(all)) {
    if (provider.type !== 'oauth' && provider.type !== 'oidc') continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = `Continue with ${provider.name}`;
    button.addEventListener('click', () => go(signInWith(provider.id), say));
    buttons.append(button);
  }
  const mailForm = document.querySelector('#email-link');
  mailForm.hidden = all.email === undefined;
  mailForm.addEventListener('submit', (event) => {
    event.preventDefault();
    go(mailSignInLink(String(new FormData(mailForm).get('email'))), say);
  });
}

/** Follows a sign-in post's url, or says why not (a refusal, or no answer at all). */
function go(posted, say) {
  posted.then(
    ({ url, code }) => (code === null ? location.assign(url) : say(explain(code))),
    (error) => say(`Gatehouse did not answer: ${error.message}`),
  );
}
