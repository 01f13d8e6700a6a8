'use client';

import { useSession } from 'next-auth/react';

// A client component: useSession asks /api/auth/session, which the rewrite sends to Gatehouse.
export function ClientSession() {
  const { data: session, status } = useSession();
  const text =
    status === 'loading'
      ? 'Checking…'
      : session?.user
        ? `Signed in as ${session.user.name ?? session.user.email} (id ${session.user.id})`
        : 'Not signed in';
  return (
    <p>
      Browser, useSession: <span id="client-session">{text}</span>
    </p>
  );
}
