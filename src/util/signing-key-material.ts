import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';

/** The algorithms session tokens are signed with: ES256 (P-256), or EdDSA (Ed25519) from a file. */
export type SigningAlg = 'ES256' | 'EdDSA';

/** A private key ready to sign, with what the key set publishes of it. */
export interface SigningKeyMaterial {
  kid: string;
  alg: SigningAlg;
  privateKey: KeyObject;
  /** The public key as the key set publishes it (`kid`, `alg`, `use` included). */
  publicJwk: PublicJwk;
}

export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: SigningAlg;
  use: 'sig';
}

export const signingKeyAdvice =
  'give PEM private keys (PKCS #8), P-256 or Ed25519, the signing one first: make one with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out token-key.pem` and name its file, e.g. TOKEN_SIGNING_KEY_FILE=/run/secrets/token-key.pem';

/** The JWK thumbprint (RFC 7638): the required members in order, SHA-256, base64url. */
function thumbprint(jwk: JsonWebKey): string {
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/** The algorithm a private key signs with here, or why it is not taken. */
function algOf(key: KeyObject): SigningAlg | string {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === 'prime256v1' ? 'ES256' : `an EC key on ${curve ?? 'an unknown curve'}`;
  }
  return `a key of type ${key.asymmetricKeyType ?? 'unknown'}`;
}

/** A private key as material, or why it cannot sign here. */
export function materialOf(privateKey: KeyObject): SigningKeyMaterial | string {
  const alg = algOf(privateKey);
  if (alg !== 'ES256' && alg !== 'EdDSA') return `${alg} cannot sign tokens here`;
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = thumbprint(jwk);
  const publicJwk: PublicJwk = {
    kty: String(jwk.kty),
    crv: String(jwk.crv),
    x: String(jwk.x),
    ...(jwk.y !== undefined && { y: jwk.y }),
    kid,
    alg,
    use: 'sig',
  };
  return { kid, alg, privateKey, publicJwk };
}

/** A new P-256 key (the database's keys). */
export function newSigningKey(): SigningKeyMaterial {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return materialOf(privateKey) as SigningKeyMaterial;
}

const pemBlock = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * TOKEN_SIGNING_KEY's PEM blocks as keys, the signing one first (the others are published, for a
 * rotation), or why it cannot be used. Never quotes the key.
 */
export function readSigningKeys(pem: string): SigningKeyMaterial[] | string {
  const blocks = [...pem.matchAll(pemBlock)];
  if (blocks.length === 0) return 'holds no PEM block';
  const keys: SigningKeyMaterial[] = [];
  for (const [index, [block, label]] of blocks.entries()) {
    const which = `its key ${index + 1}`;
    if (label !== 'PRIVATE KEY' && label !== 'EC PRIVATE KEY')
      return `${which} is a ${label ?? 'PEM block'}, not a private key`;
    let key: KeyObject;
    try {
      key = createPrivateKey(block);
    } catch {
      // The parser's message may quote the key.
      return `${which} cannot be read as a private key`;
    }
    const material = materialOf(key);
    if (typeof material === 'string') return `${which}: ${material}`;
    if (keys.some((kept) => kept.kid === material.kid)) return `${which} is given twice`;
    keys.push(material);
  }
  return keys;
}
