/** Whether a URL's `hostname` names this host's loopback: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i.test(hostname);
}
