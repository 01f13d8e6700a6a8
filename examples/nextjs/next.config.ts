import type { NextConfig } from 'next';

// Where Gatehouse listens, as this server reaches it. Read by `next build`, which writes the
// rewrite into the build: build again after changing it.
const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

const nextConfig: NextConfig = {
  // The browser talks to this app only. One rule forwards every path Gatehouse serves: Auth.js
  // and Gatehouse's pages under /api/auth/* (its account pages too, with
  // ACCOUNT_PAGES_PATH=/api/auth/account) and its account API under /api/account/*. Gatehouse's
  // cookies are then this app's own (first-party, SameSite=Lax) and no CORS is involved; every
  // other path, /account too, is this app's.
  async rewrites() {
    return [
      {
        source: '/api/:part(auth|account)/:path*',
        destination: `${gatehouseUrl}/api/:part/:path*`,
      },
    ];
  },
};

export default nextConfig;
