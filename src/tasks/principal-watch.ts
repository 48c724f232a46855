import { taskChannel, type Store, type TaskRecord } from "../store/contract.js";
import { isTerminal } from "./transitions.js";

/** Where a principal's new tasks are announced (a hint; the store has the truth). */
export { principalChannel } from "../store/channels.js";
import { principalChannel } from "../store/channels.js";

/** Between reads of the followed tasks when no hint arrives: a lost hint only delays (pub/sub is a hint). */
const POLL_MS = 2_000;
/** Every this many polls the principal's newest tasks are listed again, to find one whose announcement was lost. */
const LIST_EVERY = 10;
/** The newest tasks looked at when the watch starts and on each listing. */
const LISTED = 100;

/**
 * Every change of a principal's tasks, from any replica, while the watch lasts: the current state
 * of those running when it starts, then each change of them and of tasks created after
 * (announced on the principal's channel), woken by the store's hints with a slow poll behind
 * them: the followed tasks re-read every POLL_MS, the newest listed now and then.
 * `onChange` may see one revision more than once. Returns the function that ends it.
 */
export async function watchPrincipal(store: Store, principal: string, onChange: (task: TaskRecord) => void): Promise<() => Promise<void>> {
  const { bus } = store;
  const followed = new Map<string, Promise<() => Promise<void>>>();
  let stopped = false;
  const unfollow = (taskId: string) => {
    void followed.get(taskId)?.then((stop) => stop());
    followed.delete(taskId);
  };
  const seen = (task: TaskRecord) => {
    if (stopped) return;
    onChange(task);
    if (isTerminal(task.status)) unfollow(task.id);
  };
  const push = async (taskId: string) => {
    const task = await store.getTask(taskId, principal).catch(() => null);
    if (task === null) return; // the store is away: the next poll reads it again
    if (task && !task.parked) seen(task);
    else unfollow(taskId);
  };
  const follow = (taskId: string) => {
    // A subscription the store refused follows nothing; the next hint or poll tries again.
    if (!stopped && !followed.has(taskId))
      followed.set(
        taskId,
        bus
          .subscribe(taskChannel(taskId), () => void push(taskId))
          .catch(() => {
            followed.delete(taskId);
            return async () => undefined;
          }),
      );
  };
  const list = async () => {
    const listed = await store.listTasks(principal, { limit: LISTED }).catch(() => undefined);
    const fresh = new Set<string>();
    for (const task of listed?.tasks ?? []) {
      if (task.parked || (isTerminal(task.status) && !followed.has(task.id))) continue;
      fresh.add(task.id);
      follow(task.id);
      seen(task);
    }
    return fresh;
  };
  let polls = 0;
  const poll = async () => {
    const listed = ++polls % LIST_EVERY === 0 ? await list() : new Set<string>();
    await Promise.all([...followed.keys()].filter((id) => !listed.has(id)).map(push));
  };
  const stopNew = await bus.subscribe(principalChannel(principal), (taskId) => {
    follow(taskId);
    void push(taskId);
  });
  await list();
  const timer = setInterval(() => void poll(), POLL_MS);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await stopNew();
    await Promise.all([...followed.values()].map(async (stop) => (await stop)()));
  };
}
