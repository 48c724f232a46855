import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores: e2e files start real processes; keep parallelism modest.
    maxWorkers: 2,
    reporters: ["default", "./test/helpers/slowest-files.ts"],
    projects: [
      {
        // In seconds, nothing spawned and no Redis: `npm run test:fast` (docs/contributing/testing.md). Files share
        // their worker's loaded modules (isolate: false), which saves most of the time; so a test
        // restores what it changes (fake timers, the environment) before it ends.
        extends: true,
        test: { name: "fast", include: ["test/unit/**/*.test.ts", "test/fast/**/*.test.ts"], isolate: false },
      },
      {
        // The real parts: redis-server, upstream processes, gateway processes. Files share their
        // worker's loaded modules here too: each starts and stops its own processes under its own
        // Redis key prefix, and none changes module state, so re-importing the SDK and vitest for
        // every file bought nothing (import time 36 s -> 17 s of a full run).
        extends: true,
        test: {
          name: "real",
          include: ["test/contract/**/*.test.ts", "test/e2e/**/*.test.ts"],
          globalSetup: ["test/helpers/global-setup.ts"],
          isolate: false,
        },
      },
    ],
  },
});
