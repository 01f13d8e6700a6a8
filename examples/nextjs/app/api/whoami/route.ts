import { tokenFromGatehouse } from '../../../lib/gatehouse';

// Where the app's other backend listens: one that takes Gatehouse's tokens, as the /api/me of
// the Express and Python guides does.
const apiUrl = process.env.API_URL ?? 'http://127.0.0.1:4000';

/**
 * GET /api/whoami: asks the other backend who the signed-in person is, with a token for the
 * session (the cookie never leaves this server), and answers what it said. 401 without a session.
 */
export async function GET() {
  const token = await tokenFromGatehouse();
  if (!token) return Response.json({ error: 'Not signed in' }, { status: 401 });
  const answer = await fetch(`${apiUrl}/api/me`, {
    headers: { authorization: `Bearer ${token}` },
    cache: 'no-store',
  });
  return new Response(answer.body, {
    status: answer.status,
    headers: { 'content-type': answer.headers.get('content-type') ?? 'application/json' },
  });
}
