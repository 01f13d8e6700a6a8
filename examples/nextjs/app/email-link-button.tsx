'use client';

import { getProviders, signIn } from 'next-auth/react';
import { useEffect, useState, type FormEvent } from 'react';

export function EmailLinkButton() {
  // Gatehouse lists `email` when it is started with EMAIL_SIGNIN=on: otherwise, no form.
  const [offered, setOffered] = useState(false);
  useEffect(() => {
    void getProviders().then((all) => setOffered(all?.email !== undefined));
  }, []);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // On to Gatehouse's "check your inbox" page, where the code from the mail signs this
    // browser in; the link in the mail signs in whichever browser opens it. Either lands back
    // here (callbackUrl), signed in.
    void signIn('email', { email: new FormData(event.currentTarget).get('email') });
  }

  if (!offered) return null;
  return (
    <form onSubmit={submit}>
      <label>
        Or send a sign-in link to <input name="email" type="email" required />
      </label>{' '}
      <button type="submit">Email me a sign-in link</button>
    </form>
  );
}
