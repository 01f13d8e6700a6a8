import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface Certificate {
  certPath: string;
  keyPath: string;
  /** The certificate itself, for clients that should trust exactly it (`ca`). */
  certPem: string;
}

/** A throw-away self-signed certificate for 127.0.0.1 (and localhost), valid for a day. */
export function selfSignedCertificate(dir: string): Certificate {
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'pipe' },
  );
  return { certPath, keyPath, certPem: fs.readFileSync(certPath, 'utf8') };
}
