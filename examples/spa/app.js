// The page: who is signed in, the sign-in steps (sign-in.js), the self-service forms for a
// signed-out visitor and, on /account (a route of this app), the account forms. Every request
// is gatehouse.js's; whatever it answers, or if nothing answers, ends in words on the page.
import { postAccount, secondFactorFields, session, signOut } from './gatehouse.js';
import { codeStep, enrolStep, explain, offerWaysIn, passwordStep } from './sign-in.js';

const $ = (selector) => document.querySelector(selector);

/** A request that got no answer at all, in words. */
const unanswered = (error) => `Gatehouse did not answer: ${error.message}`;

/** The refusal line under the sign-in forms. */
const say = (text) => {
  $('#problem').textContent = text;
};

async function render() {
  const current = await session();
  const user = current?.user;
  $('#who').textContent = user
    ? `Signed in as ${user.name ?? user.email} (id ${user.id})`
    : 'Not signed in';
  $('#signed-out').hidden = Boolean(user);
  $('#signed-in').hidden = !user;
  $('#dashboard').textContent = user
    ? `Only for signed-in people: ${user.name ?? user.email}, this part is yours.`
    : '';
  // /account is a route of this app (Gatehouse's account page is at /api/auth/account).
  $('#account').hidden = !user || location.pathname !== '/account';
  $('#account-email').textContent = user ? `${user.name ?? ''} · ${user.email}` : '';
}

/** Shows the recovery codes an enrolment's answer carries: they are never shown again. */
function showRecoveryCodes(codes) {
  $('#recovery-codes').textContent = codes.join('\n');
  $('#recovery').hidden = codes.length === 0;
}

/**
 * Runs `action` with a submitted form's fields: the message it gives back goes to the status
 * line (`status`, else the form's own), the form is cleared after a success, and the page is
 * rendered again after a sign-in. A request that got no answer is said there too.
 */
function onSubmit(selector, action, status = `${selector} [role=status]`) {
  const form = $(selector);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const answer = await action(Object.fromEntries(new FormData(form)));
      $(status).textContent = answer.message;
      if (answer.ok) form.reset();
      if (answer.signedIn) {
        showRecoveryCodes(answer.recoveryCodes);
        await render();
      }
    } catch (error) {
      $(status).textContent = unanswered(error);
    }
  });
}

onSubmit('#sign-in', passwordStep, '#problem');
onSubmit('#second-step', codeStep, '#problem');
onSubmit('#enrol', enrolStep, '#problem');

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

// A change of address needs a recent sign-in: the password proves it again first, with the
// app's code (or a recovery code) when the account has two-step sign-in. The address changes
// when the link mailed to the new one is opened.
onSubmit('#change-email', async ({ email, password, code }) => {
  const proved = await postAccount('/reauthenticate', { password, ...secondFactorFields(code) });
  if (!proved.ok) return proved;
  const answer = await postAccount('/email/change', { email });
  return answer.ok
    ? { ok: true, message: `We have mailed a link to ${email}: open it to change your address.` }
    : answer;
});

$('#sign-out').addEventListener('click', async () => {
  const status = $('#signed-in [role=status]');
  try {
    const { code } = await signOut();
    status.textContent = code === null ? '' : explain(code);
    showRecoveryCodes([]);
    await render();
  } catch (error) {
    status.textContent = unanswered(error);
  }
});

// Until the session is read, only the line that says whose it is shows.
render().catch((error) => {
  $('#who').textContent = unanswered(error);
});
offerWaysIn(say).catch((error) => say(unanswered(error)));
