import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from './providers';

export const metadata: Metadata = { title: 'My app' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    // The browser's own colours, light or dark as the person prefers.
    <html lang="en" style={{ colorScheme: 'light dark' }}>
      <body
        style={{
          fontFamily: 'system-ui, sans-serif',
          maxWidth: '40rem',
          margin: '2rem auto',
          padding: '0 1rem',
        }}
      >
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
