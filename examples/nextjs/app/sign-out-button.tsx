'use client';

import { signOut } from 'next-auth/react';
import { useRouter } from 'next/navigation';

export function SignOutButton() {
  const router = useRouter();
  // signOut posts to Gatehouse, which clears the cookie and revokes the session on its side.
  const signOutHere = async () => {
    await signOut({ redirect: false });
    router.refresh();
  };
  return (
    <button type="button" onClick={() => void signOutHere()}>
      Sign out
    </button>
  );
}
