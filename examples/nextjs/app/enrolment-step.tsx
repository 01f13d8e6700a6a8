/**
 * Gatehouse's answer to `GET /api/auth/enrolment/totp`: the key an enrolment turns on, and the
 * address a code was mailed to (null when Gatehouse has no mail: an administrator's code then).
 */
export interface AppKey {
  secret: string;
  uri: string;
  qrSvg: string;
  codeSentTo: string | null;
}

/**
 * The key of the authenticator app this browser's sign-in enrols (Gatehouse with
 * `SECOND_FACTOR=required`), or null when no enrolment waits here (401: its five minutes passed,
 * or it was used). Through this app's origin: the rewrite forwards it, and the browser sends
 * the challenge cookie the refused password left.
 */
export async function fetchAppKey(): Promise<AppKey | null> {
  const response = await fetch('/api/auth/enrolment/totp', { cache: 'no-store' });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(`the key for your app was not given (HTTP ${response.status})`);
  return (await response.json()) as AppKey;
}

/**
 * The enrolment step's fields: the code Gatehouse mailed to the account's address (so the
 * password alone cannot set up an app), the key as a QR code and as text, and the code it shows.
 */
export function EnrolmentStep({ appKey }: { appKey: AppKey }) {
  // An <img> of the SVG, never the markup itself in the page: an image runs no script.
  const qr = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(appKey.qrSvg)}`;
  return (
    <>
      <p>
        Your account needs two-step sign-in.{' '}
        {appKey.codeSentTo === null
          ? 'Ask your administrator for an enrolment code: it shows the app is yours to set up.'
          : `To make sure it is you, we have mailed a code to ${appKey.codeSentTo}.`}
      </p>
      <p>
        <label>
          {appKey.codeSentTo === null
            ? 'Enrolment code from your administrator'
            : `Code we mailed to ${appKey.codeSentTo}`}{' '}
          <input
            name="emailCode"
            autoComplete="off"
            autoCapitalize="characters"
            autoFocus
            required
          />
        </label>
      </p>
      <p>Scan this with your authenticator app, or type the key into it:</p>
      <img src={qr} width={198} height={198} alt="QR code of the key for your authenticator app" />
      <p>
        Key: <code id="app-key">{appKey.secret.replace(/(.{4})(?=.)/g, '$1 ')}</code> ·{' '}
        <a href={appKey.uri}>open it in an app on this device</a>
      </p>
      <p>
        <label>
          Code your app shows now{' '}
          <input name="code" autoComplete="one-time-code" inputMode="numeric" required />
        </label>
      </p>
      <p>
        Once you are signed in, make recovery codes on your account page: each signs you in once if
        you lose your phone.
      </p>
    </>
  );
}
