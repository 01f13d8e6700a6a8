import type { NextConfig } from 'next';

// Where Gatehouse listens, as this server reaches it. Read by `next build`, which writes the
// rewrite into the build: build again after changing it.
const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

const nextConfig: NextConfig = {
  // /api/auth/* is Gatehouse's now. The browser still talks to this app only, so the session
  // cookie stays this app's own, and signIn(), signOut() and useSession() work as they did.
  async rewrites() {
    return [{ source: '/api/auth/:path*', destination: `${gatehouseUrl}/api/auth/:path*` }];
  },
};

export default nextConfig;
