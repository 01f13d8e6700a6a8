// Types for processes.mjs (the part the test uses).
/** SIGKILL to everything the fleet started that still runs, and its temp folders removed. */
export function killAllNow(): void;
/** Stops everything the fleet started that still runs, newest first. */
export function stopAll(): Promise<void>;
