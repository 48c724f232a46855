import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface TcpForwarder {
  /** `host:port` of the forwarder, on loopback. */
  port: number;
  /** Drop every open connection and refuse new ones (accepted, then closed at once). */
  cut(): void;
  /** Forward again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP forwarder to `targetPort`, which a test can cut: one process loses its way to a
 * server (e.g. Redis) while every other process keeps it.
 */
export async function startTcpForwarder(targetPort: number): Promise<TcpForwarder> {
  const open = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => undefined);
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const drop = () => open.forEach((s) => s.destroy());
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      cut = true;
      drop();
    },
    restore: () => {
      cut = false;
    },
    close: () => {
      drop();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
