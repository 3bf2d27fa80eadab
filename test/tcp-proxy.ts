import net from 'node:net';

/**
 * A TCP proxy in front of a server, for tests of a network that fails: `stall` holds every byte in
 * both directions (a query sent then gets no answer), `cut` destroys every connection and refuses
 * new ones (the client sees its connection end under it), `resume` passes traffic again.
 */
export class TcpProxy {
  private readonly sockets = new Set<net.Socket>();
  private mode: 'pass' | 'stall' | 'cut' = 'pass';

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy!: TcpProxy;
    const server = net.createServer((client) => {
      if (proxy.mode === 'cut') {
        client.destroy();
        return;
      }
      const upstream = net.connect(target);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        proxy.sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          proxy.sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
      if (proxy.mode === 'stall') {
        client.pause();
        upstream.pause();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  stall() {
    this.mode = 'stall';
    for (const s of this.sockets) s.pause();
  }

  cut() {
    this.mode = 'cut';
    for (const s of this.sockets) s.destroy();
  }

  resume() {
    this.mode = 'pass';
    for (const s of this.sockets) s.resume();
  }

  async close() {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
