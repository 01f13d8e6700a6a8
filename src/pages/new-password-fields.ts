import { markup, type SafeHtml } from './html.js';

/** The page's own check: the repeated new password differs (no JSON route has a repeat). */
export const passwordMismatchText =
  'The new password and its repetition differ. Type the same new password in both fields.';

export interface NewPasswordFieldsView {
  /** PASSWORD_MIN_LENGTH. */
  minLength: number;
  /**
   * The account's address as a hidden username field, so a password manager files the new
   * password under it; omitted where the form has a visible address field.
   */
  username?: string | undefined;
  /** The posted name of the new password; its repeat is posted as `<name>Repeat`. */
  name: string;
  /** The field's id (default: its name); the repeat's is `<id>Repeat`. */
  id?: string;
  label: string;
  /** Which of the two are at fault ('password', 'repeat'), marked `aria-invalid`. */
  invalid?: readonly ('password' | 'repeat')[];
  /** The id of the message about a field at fault, added to its description. */
  messageId?: string | undefined;
  /** Focus the new password (or the first field at fault, which is focused anyway). */
  autofocus?: boolean;
  /** False: another field of the form takes the focus. */
  mayFocus?: boolean;
}

/**
 * A new password as every form asks for it (sign-up, an invitation, a reset, /account): the
 * rules (described by `<id>-rules`), the password, the same once more (no script shows what was typed, and a mistyped new
 * password locks its owner out), and the hidden username for password managers.
 */
export function renderNewPasswordFields(view: NewPasswordFieldsView): SafeHtml {
  const id = view.id ?? view.name;
  const invalid = view.invalid ?? [];
  const first = invalid[0];
  const state = (which: 'password' | 'repeat', describedBy?: string) => {
    const bad = invalid.includes(which);
    const ids = [describedBy, bad ? view.messageId : undefined].filter(
      (one): one is string => one !== undefined && one !== '',
    );
    const focus =
      view.mayFocus !== false &&
      (first === which || (first === undefined && which === 'password' && view.autofocus === true));
    return markup`${ids.length > 0 && markup` aria-describedby="${ids.join(' ')}"`}${bad && markup` aria-invalid="true"`}${focus === true && markup` autofocus`}`;
  };
  const min = String(view.minLength);
  const rulesId = `${id}-rules`;
  return markup`${
    view.username !== undefined &&
    markup`<input type="email" name="username" autocomplete="username" value="${view.username}" hidden>
`
  }<label for="${id}">${view.label}</label>
<p id="${rulesId}" class="hint field-hint">At least ${min} characters, and not a commonly used password.</p>
<input id="${id}" name="${view.name}" type="password" autocomplete="new-password" minlength="${min}" required${state('password', rulesId)}>
<label for="${id}Repeat">Repeat the ${view.label.toLowerCase()}</label>
<input id="${id}Repeat" name="${view.name}Repeat" type="password" autocomplete="new-password" required${state('repeat')}>`;
}

/** Whether a form's new password and its repeat differ. */
export const repeatDiffers = (body: Record<string, unknown>, name: string): boolean =>
  body[`${name}Repeat`] !== body[name];
