// prom-client's default collectors, one module each (no types of their own): each registers
// its metrics on the registry it is given.
declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry, config?: object) => void;
  export default register;
}
