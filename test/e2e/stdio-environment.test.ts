import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { EVERYTHING, startGateway, type GatewayProcess } from "../helpers/processes.js";

/** What taskgate itself is started with: its own secrets, another upstream's, and what a server may need. */
const TASKGATE_ENV = {
  TASKGATE_ADMIN_TOKEN: "admin-canary-0123456789",
  TASKGATE_EXTRA: "extra-canary",
  OTHER_UPSTREAM_SECRET: "other-canary",
  WEATHER_API_KEY: "api-key-canary",
  HTTPS_PROXY: "http://proxy.internal:3128",
  LANG: "C.UTF-8",
};

/** server-everything's get-env tool answers with its whole process.env. */
async function childEnv(url: string): Promise<Record<string, string>> {
  const { client } = await connectClient(url);
  try {
    return JSON.parse(textOf(await client.callTool({ name: "get-env", arguments: {} }))) as Record<string, string>;
  } finally {
    await client.close();
  }
}

const everything = (name: string, extra: Record<string, unknown>) => ({
  name,
  path: `/${name}`,
  isolation: "shared",
  stdio: { command: process.execPath, args: [EVERYTHING, "stdio"], ...extra },
});

describe("what a stdio upstream's process is given", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway(
      {
        store: { keyPrefix: "env-test:" },
        upstreams: [
          everything("default", {}),
          everything("named", { inheritEnv: ["WEATHER_API_KEY", "HTTPS_PROXY", "TASKGATE_EXTRA"], env: { MODE: "configured", WEATHER_API_KEY: "from-env" } }),
          everything("all", { inheritEnv: "all" }),
        ],
      },
      // The Redis URL by environment, as a deployment gives it: it must not reach a child either.
      { ...TASKGATE_ENV, TASKGATE_REDIS_URL: inject("redisUrl") },
    );
  });
  afterAll(async () => gw?.stop());

  it("by default: only the allowlist (PATH, HOME, the locale, ...), none of taskgate's secrets", async () => {
    const env = await childEnv(`${gw.url}/default`);
    expect(env["PATH"]).toBe(process.env["PATH"]);
    expect(env["LANG"]).toBe("C.UTF-8");
    for (const name of ["TASKGATE_ADMIN_TOKEN", "TASKGATE_REDIS_URL", "TASKGATE_EXTRA", "OTHER_UPSTREAM_SECRET", "WEATHER_API_KEY", "HTTPS_PROXY"])
      expect(env, name).not.toHaveProperty(name);
    expect(JSON.stringify(env)).not.toContain(inject("redisUrl"));
  });

  it("inheritEnv names what a server needs (an API key, a proxy, even a TASKGATE_ variable); env is set over it", async () => {
    const env = await childEnv(`${gw.url}/named`);
    expect(env).toMatchObject({ HTTPS_PROXY: "http://proxy.internal:3128", TASKGATE_EXTRA: "extra-canary", MODE: "configured", WEATHER_API_KEY: "from-env" });
    expect(env).not.toHaveProperty("TASKGATE_ADMIN_TOKEN");
    expect(env).not.toHaveProperty("OTHER_UPSTREAM_SECRET");
  });

  it("inheritEnv: all gives the whole environment but taskgate's own TASKGATE_* variables, and is warned about", async () => {
    const env = await childEnv(`${gw.url}/all`);
    expect(env).toMatchObject({ OTHER_UPSTREAM_SECRET: "other-canary", WEATHER_API_KEY: "api-key-canary" });
    expect(Object.keys(env).filter((name) => name.startsWith("TASKGATE_"))).toEqual([]);
    expect(gw.output()).toMatch(/"upstream":"all".*stdio.inheritEnv: all/);
  });
});
