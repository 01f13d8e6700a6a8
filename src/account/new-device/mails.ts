import { lockHtml, lockText } from '../../mail/builtin-templates.js';
import type { MailCatalogue } from '../../mail/catalogue.js';

/**
 * The notice of a sign-in from a device and a network the account had not signed in from: when
 * (UTC), the device as the sessions list names it, the network (never the whole address), and
 * the way out. It goes first in the queue, as every security notice does.
 */
export const newDeviceMails: MailCatalogue = {
  'new-device-notice': {
    subject: 'New sign-in to your {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

There was a new sign-in to your {{productName}} account ({{to}}), from a device and a network
it had not been signed in from before:

  When:    {{signedInAt}}
  Device:  {{deviceName}}
  Network: {{network}}

(The network is the internet address the sign-in came from, without its last part.)

If this was you (a new browser, a phone, a trip), there is nothing to do.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>There was a new sign-in to your {{productName}} account ({{to}}), from a device and a network it had not been signed in from before:</p>
<table role="presentation" style="border-collapse:collapse;margin:0 0 16px">
<tr><td style="padding:2px 16px 2px 0;color:#71717a;vertical-align:top">When</td><td style="padding:2px 0;vertical-align:top">{{signedInAt}}</td></tr>
<tr><td style="padding:2px 16px 2px 0;color:#71717a;vertical-align:top">Device</td><td style="padding:2px 0;vertical-align:top">{{deviceName}}</td></tr>
<tr><td style="padding:2px 16px 2px 0;color:#71717a;vertical-align:top">Network</td><td style="padding:2px 0;vertical-align:top">{{network}}</td></tr>
</table>
<p style="font-size:13px;color:#555">The network is the internet address the sign-in came from, without its last part.</p>
<p>If this was you (a new browser, a phone, a trip), there is nothing to do.</p>
${lockHtml}`,
    required: ['lockLink', 'signedInAt', 'deviceName', 'network'],
    priority: 0,
  },
};
