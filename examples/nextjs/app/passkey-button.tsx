'use client';

import { signIn } from 'next-auth/webauthn';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';

export function PasskeyButton() {
  const router = useRouter();
  const [problem, setProblem] = useState('');
  // Known only in the browser: the server renders no button, the browser adds it where it can.
  const [supported, setSupported] = useState(false);
  useEffect(() => setSupported(typeof window.PublicKeyCredential === 'function'), []);

  async function signInWithPasskey() {
    try {
      // next-auth/webauthn, not next-auth/react: it asks Gatehouse for the options, lets the
      // browser pick one of the person's passkeys for this site, and posts the answer back.
      const result = await signIn('passkey', { redirect: false });
      if (!result || result.error) {
        setProblem(
          result?.code === 'second_factor_required'
            ? 'This passkey did not verify you: sign in with your password and code.'
            : 'That passkey was not accepted.',
        );
        return;
      }
      setProblem('');
      router.refresh();
    } catch {
      // The person closed the browser's passkey dialog, or no passkey was there.
      setProblem('No passkey was used.');
    }
  }

  if (!supported) return null;
  return (
    <p>
      <button type="button" onClick={() => void signInWithPasskey()}>
        Sign in with a passkey
      </button>
      {problem && <span role="alert"> {problem}</span>}
    </p>
  );
}
