import { Webhook } from 'standardwebhooks';
import { applyEvent, type GatehouseEvent } from '../../../lib/mirror';

/**
 * Gatehouse's webhooks: each one tells this app that a user changed, with the user as they are
 * now; lib/mirror.ts writes it into the app's own table. Gatehouse signs every delivery the
 * Standard Webhooks way; the `standardwebhooks` package checks the signature over the raw body
 * and refuses a timestamp more than five minutes away from this server's clock (a replay).
 *
 * GATEHOUSE_WEBHOOK_SECRET is Gatehouse's WEBHOOK_SECRET (`whsec_…`). While it is rotated it
 * holds both, space-separated, the new one first: a delivery signed with either is taken.
 */
function verify(body: string, headers: Record<string, string>): GatehouseEvent | undefined {
  const secrets = (process.env.GATEHOUSE_WEBHOOK_SECRET ?? '').split(/\s+/).filter(Boolean);
  for (const secret of secrets) {
    try {
      return new Webhook(secret).verify(body, headers) as GatehouseEvent;
    } catch {
      // Not signed with this secret (or too old, or no signature at all): try the next one.
    }
  }
  return undefined;
}

export async function POST(request: Request) {
  // The signature covers these exact bytes: read them as they came, parse only once verified.
  const body = await request.text();
  const headers = Object.fromEntries(request.headers);
  const event = verify(body, headers);
  // Anything else is retried by Gatehouse for a day, and listed by `gatehouse webhooks list`.
  if (!event) return Response.json({ error: 'bad or missing signature' }, { status: 401 });
  // Once per webhook-id: a delivery sent again after a lost answer changes nothing.
  applyEvent(headers['webhook-id']!, event);
  return new Response(null, { status: 204 });
}
