import { getToken } from 'next-auth/jwt';
import { NextResponse, type NextRequest } from 'next/server';

// Next.js 16's name for middleware: runs before /dashboard and /account render, and sends a
// visitor without a valid session cookie to the sign-in form. It decodes the cookie here (no
// round trip), so a session revoked on Gatehouse still passes: the pages ask Gatehouse as well.
export async function proxy(request: NextRequest) {
  const protocol = request.headers.get('x-forwarded-proto') ?? request.nextUrl.protocol;
  const token = await getToken({
    req: request,
    secret: process.env.AUTH_SECRET ?? '',
    secureCookie: protocol.startsWith('https'),
  });
  if (token) return NextResponse.next();
  return NextResponse.redirect(new URL('/', request.url));
}

export const config = { matcher: ['/dashboard/:path*', '/account/:path*'] };
