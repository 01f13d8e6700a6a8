import type { SecondFactorMode } from '../../config/factors.js';
import type { SecondStep } from './second-step.js';
import type { SecretBox } from './secret-box.js';

/** What the TOTP routes use beyond every action's deps; absent when SECOND_FACTOR=off. */
export interface TotpPorts {
  mode: Exclude<SecondFactorMode, 'off'>;
  box: SecretBox;
  secondStep: SecondStep;
  /** The issuer an authenticator app shows beside the account (PAGE_PRODUCT_NAME). */
  issuer: string;
}
