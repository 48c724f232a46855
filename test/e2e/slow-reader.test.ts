import { readFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.js";
import { modern, modernRequest } from "../helpers/modern.js";
import { ROOT, runNode, startGateway } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ODD = join(ROOT, "test/fixtures/odd-server.mjs");
const MiB = 1024 * 1024;
/** What the upstream floods before RSS is judged: far past what the bound lets one stream hold. */
const FLOODED_KIB = 384 * 1024;

function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(line?.[1] ?? 0) * 1024;
}

/** The most the odd fixture said it flooded so far, in KiB. */
function floodedKiB(output: string): number {
  const counts = [...output.matchAll(/flooded (\d+) KiB/g)].map((m) => Number(m[1]));
  return counts.length === 0 ? 0 : Math.max(...counts);
}

/** A tools/call whose SSE answer this client never reads: the response is paused at its first byte. */
async function neverRead(url: string, name: string): Promise<IncomingMessage> {
  const prepared = modernRequest(url, "tools/call", { name, arguments: {} }, { meta: { progressToken: "slow" } });
  const req = request(url, { method: "POST", headers: Object.fromEntries(prepared.headers) });
  req.end(await prepared.text());
  const res = await new Promise<IncomingMessage>((resolve, reject) => req.once("response", resolve).once("error", reject));
  res.pause();
  return res;
}

/**
 * A client that stops reading while its upstream floods it: the gateway holds at most
 * http.sseMaxBufferedBytes for that stream, then closes it; its memory stays bounded and every
 * other caller is served meanwhile.
 */
describe("a client that never reads its SSE stream", () => {
  const { defer, track } = useCleanups();

  for (const transport of ["stdio", "http"] as const) {
    it(`has its stream closed, RSS stays bounded, others are served (${transport} upstream)`, async () => {
      const odd = transport === "http" ? track(runNode([ODD, "http"])) : undefined;
      const port = odd && (await waitFor(() => /listening (\d+)/.exec(odd.output())?.[1], { timeoutMs: 10_000, what: "the odd fixture listening" }));
      const upstream = odd ? { http: { url: `http://127.0.0.1:${port}/mcp` } } : { stdio: { command: process.execPath, args: [ODD, "stdio"] } };
      const gw = track(await startGateway({ http: { sseMaxBufferedBytes: MiB }, upstreams: [{ name: "odd", path: "/mcp", ...upstream }] }));
      const pid = gw.proc.pid!;
      const flooded = () => floodedKiB(odd ? odd.output() : gw.output());
      const before = rssBytes(pid);

      const slow = await neverRead(gw.mcpUrl, "flood");
      defer(() => slow.destroy());
      let peak = before;
      await waitFor(
        () => {
          peak = Math.max(peak, rssBytes(pid));
          return flooded() >= FLOODED_KIB;
        },
        { timeoutMs: 90_000, what: `the upstream to flood ${FLOODED_KIB / 1024} MiB` },
      );
      // 384 MiB went out to a client that took none of it; the gateway grew by tens of MiB (some
      // 30 MiB; garbage not yet collected on a busy machine makes up the margin). With no bound it
      // grows by more than the flood itself: 95 → 395 MiB for 256 MiB. (1.5 GiB flooded: +57 MiB.)
      const grown = `RSS ${Math.round(before / MiB)} → ${Math.round(peak / MiB)} MiB while ${Math.round(flooded() / 1024)} MiB were flooded`;
      expect(peak - before, grown).toBeLessThan(128 * MiB);
      expect(gw.output()).toContain("closed an SSE stream whose reader fell behind (http.sseMaxBufferedBytes)");
      // Another caller, while the flood still runs.
      const echo = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "served" } });
      expect(echo.body.result.content[0].text).toBe("Echo: served");
    }, 120_000);
  }
});
