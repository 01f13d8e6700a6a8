#!/usr/bin/env node
import { refuseUnsupportedNode } from '../boot/node-version.js';

// The version check runs before the CLI's modules load: on an older Node the first of them to
// need something newer (node:sqlite) would fail with a stack trace instead of this message.
refuseUnsupportedNode();
void import('./dispatch.js');
