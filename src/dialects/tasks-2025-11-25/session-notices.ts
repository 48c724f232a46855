import type { TaskRecord } from "../../store/contract.js";

/** Status snapshots and questions remembered per session, so a long-lived session's memory stays bounded. */
const MAX_TOLD_PER_SESSION = 1_000;

interface SessionEntry {
  /** Streams of the session open on this replica (GET and tasks/result): the entry lives while any is. */
  streams: Set<SessionStream>;
  /** The last status snapshot each task's notification carried to this session. */
  told: Map<string, string>;
  /** `<taskId> <key>` → the open stream that carried the question. */
  asked: Map<string, SessionStream>;
}

/** One open stream of a session: its GET stream, or a tasks/result stream for `resultFor`. */
export interface SessionStream {
  readonly resultFor?: string;
  /** Whether this stream carries the task's status notification now (marks it told). */
  tell(task: TaskRecord): boolean;
  /** Whether this stream carries the question now: no other open stream of the session carries it (marks it carried). */
  claim(taskId: string, key: string): boolean;
  close(): void;
}

/**
 * What each stream of a 2025-11-25 session carries, so that the client is told each thing once
 * while a client that reads only one kind of stream still gets everything.
 *
 * Status: `notifications/tasks/status` go on the `tasks/result` stream while one is open for that
 * task, else on the session's GET stream, and a snapshot the session was told is not repeated.
 * Streamable HTTP says messages on a request's SSE stream SHOULD relate to that request, and
 * those on the GET stream SHOULD be unrelated to any request the client has running
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server,
 * #listening-for-messages-from-the-server); a status change of a task whose `tasks/result` runs
 * relates to that request.
 *
 * Questions (`elicitation/create` and the like): the first open stream to see one carries it (the
 * GET stream, or the task's `tasks/result`); while that stream stays open no other repeats it,
 * so a client that reads both (the SDK 1.x client) asks its user once. Once that stream closes
 * unanswered, the next to look (a re-opened `tasks/result`, a new GET stream) carries it again.
 * The tasks page says clients should expect messages on any SSE stream, the GET stream included
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#input-required-status).
 *
 * Kept per replica: a client whose two streams land on two replicas may be told a status twice,
 * or asked twice; either answer is taken and the first wins. Status notifications are a MAY and
 * clients keep polling (same page, #task-status-notification).
 */
export class SessionNotices {
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly rechecks = new WeakMap<SessionStream, () => void>();

  /**
   * `recheck`: called when another stream of the session closed leaving questions unanswered,
   * so this one may carry them now (it reads the task again: the question may be answered by now).
   */
  open(sessionId: string, resultFor: string | undefined, recheck: () => void): SessionStream {
    const entry = this.entry(sessionId);
    const stream: SessionStream = {
      ...(resultFor !== undefined ? { resultFor } : {}),
      tell: (task) => (resultFor === task.id || !this.hasResultStream(entry, task.id)) && firstTelling(entry, task),
      claim: (taskId, key) => {
        const holder = entry.asked.get(`${taskId} ${key}`);
        if (holder && holder !== stream) return false;
        entry.asked.set(`${taskId} ${key}`, stream);
        if (entry.asked.size > MAX_TOLD_PER_SESSION) entry.asked.delete(entry.asked.keys().next().value!);
        return true;
      },
      close: () => {
        if (!entry.streams.delete(stream)) return;
        let released = false;
        for (const [question, holder] of entry.asked)
          if (holder === stream) {
            entry.asked.delete(question);
            released = true;
          }
        if (entry.streams.size === 0) this.sessions.delete(sessionId);
        else if (released) for (const other of entry.streams) rechecks.get(other)?.();
      },
    };
    const rechecks = this.rechecks;
    rechecks.set(stream, recheck);
    entry.streams.add(stream);
    return stream;
  }

  private hasResultStream(entry: SessionEntry, taskId: string): boolean {
    for (const stream of entry.streams) if (stream.resultFor === taskId) return true;
    return false;
  }

  private entry(sessionId: string): SessionEntry {
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      entry = { streams: new Set(), told: new Map(), asked: new Map() };
      this.sessions.set(sessionId, entry);
    }
    return entry;
  }
}

/** True the first time this snapshot of the task is to be told to the session (then marked told). */
function firstTelling(entry: SessionEntry, task: TaskRecord): boolean {
  const snapshot = `${task.status}\u0000${task.statusMessage ?? ""}\u0000${task.lastUpdatedAt}`;
  if (entry.told.get(task.id) === snapshot) return false;
  entry.told.delete(task.id);
  entry.told.set(task.id, snapshot);
  if (entry.told.size > MAX_TOLD_PER_SESSION) entry.told.delete(entry.told.keys().next().value!);
  return true;
}
