import { expect, it } from "vitest";
import { createStore } from "../../src/store/index.js";
import { describeStoreContract } from "./store.contract.js";

describeStoreContract("memory", async () => createStore({ keyPrefix: "taskgate:" }));

it("createStore without a Redis URL gives the memory store", async () => {
  const store = createStore({ keyPrefix: "taskgate:" });
  expect(store.kind).toBe("memory");
  await store.close();
});
