import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract.js";

/** limits.maxActiveTasksPerPrincipal as the store keeps it: admitted, refused, released, lapsed. */
export function describeTaskQuota(current: () => Store): void {
  describe("task quota per principal", () => {
    it("admits up to the limit, refuses past it, and admits again once one is released", async () => {
      const principal = `p-${randomUUID()}`;
      const now = Date.now();
      const until = now + 60_000;
      expect(await current().admitTask(principal, "t1", 2, until, now)).toBe(true);
      expect(await current().admitTask(principal, "t2", 2, until, now)).toBe(true);
      expect(await current().admitTask(principal, "t3", 2, until, now)).toBe(false);
      expect(await current().admitTask(`other-${principal}`, "t3", 2, until, now)).toBe(true);
      await current().releaseTask(principal, "t1");
      expect(await current().admitTask(principal, "t3", 2, until, now)).toBe(true);
    });

    it("lets an entry lapse at its task's expiry, so a replica that died frees its principal's quota", async () => {
      const principal = `p-${randomUUID()}`;
      const now = Date.now();
      expect(await current().admitTask(principal, "t1", 1, now + 1_000, now)).toBe(true);
      expect(await current().admitTask(principal, "t2", 1, now + 60_000, now + 500)).toBe(false);
      expect(await current().admitTask(principal, "t2", 1, now + 60_000, now + 1_000)).toBe(true);
    });

    it("treats a limit of 0 as no limit", async () => {
      const principal = `p-${randomUUID()}`;
      const now = Date.now();
      for (let i = 0; i < 5; i++) expect(await current().admitTask(principal, `t${i}`, 0, now + 60_000, now)).toBe(true);
    });
  });
}
