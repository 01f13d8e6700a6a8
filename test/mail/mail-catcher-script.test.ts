import { spawn } from 'node:child_process';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';

// `npm run mail-catcher`, the catcher the guides name: it installs with the checkout (no Mailpit
// to download), and a mail Gatehouse would send shows in its terminal with its link whole.
it('prints each mail it takes, link whole', async () => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [path.resolve(import.meta.dirname, '../../scripts/mail-catcher.ts')],
    { env: { PATH: process.env.PATH ?? '', MAIL_CATCHER_PORT: String(port) } },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  try {
    for (let i = 0; i < 200 && !out.includes('listening'); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(out).toContain(`listening on 127.0.0.1:${port}`);
    const link = 'http://localhost:3000/account/password/reset?token=abc_DEF-123&x=1';
    await nodemailer
      .createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })
      .sendMail({
        from: 'My app <no-reply@example.com>',
        to: 'ada@example.com',
        subject: 'Reset your password',
        text: `Open this link:\n${link}\n`,
      });
    for (let i = 0; i < 200 && !out.includes(link); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(out).toContain('To:      ada@example.com');
    expect(out).toContain('Subject: Reset your password');
    expect(out).toContain(link);
  } finally {
    child.kill('SIGTERM');
  }
});
