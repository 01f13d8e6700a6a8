import type { NextConfig } from 'next';

// Where Gatehouse listens, as this server reaches it. Read by `next build`, which writes the
// rewrite into the build: build again after changing it.
const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

const nextConfig: NextConfig = {
  // The browser talks to this app only: /api/auth/* is forwarded to Gatehouse, so Gatehouse's
  // cookies are this app's own (first-party, SameSite=Lax) and no CORS is involved.
  async rewrites() {
    return [{ source: '/api/auth/:path*', destination: `${gatehouseUrl}/api/auth/:path*` }];
  },
};

export default nextConfig;
