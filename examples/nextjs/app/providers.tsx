'use client';

import { SessionProvider } from 'next-auth/react';
import type { ReactNode } from 'react';

// SessionProvider holds state, so it lives in a client component; the layout (a server
// component) wraps the pages in it.
export function Providers({ children }: { children: ReactNode }) {
  return <SessionProvider>{children}</SessionProvider>;
}
