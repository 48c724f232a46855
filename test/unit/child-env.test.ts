import { describe, expect, it } from "vitest";
import { childEnvironment } from "../../src/upstream/stdio/child-env.js";

const parent = {
  PATH: "/usr/bin",
  HOME: "/home/app",
  TMPDIR: "/scratch",
  SHELL: "() { echo exported function; }",
  TASKGATE_ADMIN_TOKEN: "secret",
  API_KEY: "key",
  SystemRoot: "C:\\Windows",
  SYSTEMROOT: "C:\\Windows",
  PATHEXT: ".COM;.EXE;.CMD",
};

describe("a stdio child's environment", () => {
  it("holds the allowlist only, without exported shell functions", () => {
    expect(childEnvironment(parent, { env: {}, inheritEnv: [] }, "linux")).toEqual({ PATH: "/usr/bin", HOME: "/home/app", TMPDIR: "/scratch" });
  });

  it("uses the Windows list on Windows", () => {
    expect(childEnvironment(parent, { env: {}, inheritEnv: [] }, "win32")).toEqual({ PATH: "/usr/bin", SYSTEMROOT: "C:\\Windows", PATHEXT: ".COM;.EXE;.CMD" });
  });

  it("adds the names inheritEnv lists, then env over everything", () => {
    const env = childEnvironment(parent, { env: { PATH: "/opt/bin", MODE: "x" }, inheritEnv: ["API_KEY", "TASKGATE_ADMIN_TOKEN", "UNSET"] }, "linux");
    expect(env).toEqual({ PATH: "/opt/bin", HOME: "/home/app", TMPDIR: "/scratch", API_KEY: "key", TASKGATE_ADMIN_TOKEN: "secret", MODE: "x" });
  });

  it("with inheritEnv all, keeps out only TASKGATE_*", () => {
    const env = childEnvironment(parent, { env: {}, inheritEnv: "all" }, "linux");
    expect(Object.keys(env).sort()).toEqual(
      Object.keys(parent)
        .filter((k) => !k.startsWith("TASKGATE_"))
        .sort(),
    );
  });
});
