import { defineConfig } from 'vite';

// Where Gatehouse listens, as the dev server reaches it.
const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    // The page and Gatehouse on one origin in development: the dev server forwards
    // /api/auth/* (Auth.js, and the account pages with ACCOUNT_PAGES_PATH=/api/auth/account)
    // and /api/account/* to Gatehouse, keeping the browser's Host (no changeOrigin), so
    // Gatehouse's redirects and mailed links name this origin. Production does the same with
    // nginx (nginx.conf).
    proxy: {
      '^/api/(auth|account)(/|$)': { target: gatehouseUrl },
    },
  },
});
