import readline from 'node:readline';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function askHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({
      input: process.stdin,
      output: process.stderr,
      terminal: true,
    });
    // Echo nothing of what is typed: the password must not appear on screen or in scrollback.
    const output = rl as unknown as { _writeToOutput: (text: string) => void };
    output._writeToOutput = (text: string) => {
      if (text.includes(question)) process.stderr.write(question);
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    rl.on('SIGINT', () => {
      rl.close();
      reject(new CliError('cancelled', 130));
    });
  });
}

/**
 * A new password from stdin (`--password-stdin`, one trailing newline dropped) or from a
 * hidden prompt asked twice. Never from argv, where `ps` and shell history would keep it.
 * `check` sees the first entry before the second is asked, so a refused password is not
 * typed twice.
 */
export async function readNewPassword(
  fromStdin: boolean,
  check: (first: string) => void = () => {},
): Promise<string> {
  if (fromStdin) {
    const text = (await readAll(process.stdin)).replace(/\r?\n$/, '');
    if (text.length === 0) throw new CliError('no password on standard input', 2);
    return text;
  }
  if (!process.stdin.isTTY) {
    throw new CliError('no terminal to ask for a password: use --password-stdin', 2);
  }
  const first = await askHidden('Password: ');
  check(first);
  const second = await askHidden('Repeat password: ');
  if (first !== second) throw new CliError('the two passwords differ; nothing was changed');
  return first;
}
