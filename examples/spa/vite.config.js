import { defineConfig } from 'vite';

// Where Gatehouse listens, as the dev server reaches it.
const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';
// The page's origin is http://localhost:5173, Gatehouse's AUTH_URL.
const port = 5173;

/**
 * Sends a visit on another name of this server (http://127.0.0.1:5173, another origin, whose
 * sign-in Gatehouse refuses as cross-site) to http://localhost:5173, before anything is served.
 */
function onLocalhost() {
  return {
    name: 'on-localhost',
    configureServer(server) {
      server.middlewares.use((request, response, next) => {
        if (request.headers.host === `localhost:${port}`) return next();
        response.writeHead(307, { Location: `http://localhost:${port}${request.url}` });
        response.end();
      });
    },
  };
}

export default defineConfig({
  plugins: [onLocalhost()],
  server: {
    // Prints http://localhost:5173 and listens on the loopback address `localhost` names.
    host: 'localhost',
    port,
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
