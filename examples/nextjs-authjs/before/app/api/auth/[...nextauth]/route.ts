import { handlers } from '../../../../auth';

// next-auth's own routes: sign-in, sign-out, the session, CSRF.
export const { GET, POST } = handlers;
