import { activeSpan, traced, tracingEnabled } from "../observability/tracing.js";
import { StoreUnconfirmedError, type Store } from "./contract.js";

export interface StoreObserver {
  storeError(operation: string): void;
  storeUnconfirmed(operation: string): void;
}

/** Not operations on the stored state: the bus has its own hints, ping is the probe. */
const UNOBSERVED = new Set<PropertyKey>(["ping", "close", "bus", "kind", "constructor"]);

/**
 * The store with every operation counted when it fails and, inside a traced request or task, run
 * in a span of its own. A proxy rather than a class that lists the methods, so an operation added
 * to the contract is observed without touching this file. Operations outside any trace (the lease
 * loop) open no span: a root trace every few seconds would bury the ones that matter.
 */
export function observeStore<S extends Store>(store: S, observer: StoreObserver): S {
  // One wrapper per operation, made again only if the operation is replaced: a poll's store call
  // then builds no closures of its own.
  const wrappers = new Map<string, { method: unknown; wrapper: unknown }>();
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (UNOBSERVED.has(prop) || typeof prop !== "string") return method.bind(target);
      const known = wrappers.get(prop);
      if (known?.method === method) return known.wrapper;
      const wrapper = (...args: unknown[]) => {
        const inTrace = tracingEnabled() && activeSpan() !== undefined;
        // The request (or task) span that creates a task names it, for finding its trace by task id.
        if (inTrace && prop === "createTask") activeSpan()?.setAttribute("taskgate.task.id", (args[0] as { id: string }).id);
        const run = () => {
          const result = method.apply(target, args);
          return result instanceof Promise ? result : Promise.resolve(result);
        };
        const work = inTrace ? traced(`store ${prop}`, { "db.system": target.kind, "db.operation": prop }, run) : run();
        return work.catch((err: unknown) => {
          observer.storeError(prop);
          if (err instanceof StoreUnconfirmedError) observer.storeUnconfirmed(prop);
          throw err;
        });
      };
      wrappers.set(prop, { method, wrapper });
      return wrapper;
    },
  });
}
