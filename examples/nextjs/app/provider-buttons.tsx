'use client';

import { getProviders, signIn } from 'next-auth/react';
import { useEffect, useState } from 'react';

interface Provider {
  id: string;
  name: string;
  type: string;
}

export function ProviderButtons() {
  // Gatehouse lists the providers it is configured with (AUTH_GITHUB_ID, AUTH_OIDC_ISSUER…):
  // none configured, no button.
  const [providers, setProviders] = useState<Provider[]>([]);
  useEffect(() => {
    void getProviders().then((all) =>
      setProviders(
        Object.values(all ?? {}).filter((one) => one.type === 'oauth' || one.type === 'oidc'),
      ),
    );
  }, []);
  return providers.map((provider) => (
    <p key={provider.id}>
      {/* To the provider and back to this page, signed in; a refusal lands on Gatehouse's
          sign-in page, which says why (an account with that address must be proven first). */}
      <button type="button" onClick={() => void signIn(provider.id)}>
        Continue with {provider.name}
      </button>
    </p>
  ));
}
