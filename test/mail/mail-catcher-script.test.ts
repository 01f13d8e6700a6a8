import { spawn } from 'node:child_process';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { expect, it } from 'vitest';
import { freePort, untilOutput } from '../helpers/processes.js';

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
    // Deadlines, not counts of tries: a loaded machine may take seconds to start it.
    await untilOutput(() => out, 'listening');
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
    await untilOutput(() => out, link);
    expect(out).toContain('To:      ada@example.com');
    expect(out).toContain('Subject: Reset your password');
    expect(out).toContain(link);
  } finally {
    child.kill('SIGTERM');
  }
});
