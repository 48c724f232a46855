import { createStore } from "../../src/store/index.js";
import { describeTaskStoreContract } from "./task-store.contract.js";

describeTaskStoreContract("memory", async () => createStore({ keyPrefix: "t:" }));
