import type { TaskRecord } from "../../store/contract.js";

/** Status snapshots remembered per session, so a long-lived session's memory stays bounded. */
const MAX_TOLD_PER_SESSION = 1_000;

interface SessionEntry {
  /** Streams of the session open on this replica (GET and tasks/result): the entry lives while any is. */
  streams: number;
  /** tasks/result streams open per task. */
  results: Map<string, number>;
  /** The last status snapshot each task's notification carried to this session. */
  told: Map<string, string>;
}

/**
 * Which stream of a 2025-11-25 session carries a task's `notifications/tasks/status`, so that
 * each status change reaches the client once (issue 17).
 *
 * The rule: on the `tasks/result` stream while one is open for that task, else on the session's
 * GET stream. Streamable HTTP says messages on a request's own SSE stream SHOULD relate to that
 * request, and messages on the GET stream SHOULD be unrelated to any request the client has
 * running (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server
 * and #listening-for-messages-from-the-server); a status change of a task whose `tasks/result`
 * is running relates to that request. Status notifications are a MAY and clients keep polling
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#task-status-notification),
 * so the rule is kept per replica: both streams of a session on one replica never repeat a
 * snapshot; a client whose GET and `tasks/result` streams land on two replicas may see one twice.
 *
 * Questions (`elicitation/create` and the like) follow another rule: they go on every stream
 * that may be read (see TasksA), and the first answer wins.
 */
export class SessionNotices {
  private readonly sessions = new Map<string, SessionEntry>();

  /** A stream of the session opened; the returned function closes it. */
  open(sessionId: string, resultFor?: string): () => void {
    const entry = this.entry(sessionId);
    entry.streams++;
    if (resultFor !== undefined) entry.results.set(resultFor, (entry.results.get(resultFor) ?? 0) + 1);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (resultFor !== undefined) {
        const left = (entry.results.get(resultFor) ?? 1) - 1;
        if (left > 0) entry.results.set(resultFor, left);
        else entry.results.delete(resultFor);
      }
      if (--entry.streams === 0) this.sessions.delete(sessionId);
    };
  }

  /** Whether a tasks/result stream of the session is open for the task on this replica. */
  hasResultStream(sessionId: string, taskId: string): boolean {
    return (this.sessions.get(sessionId)?.results.get(taskId) ?? 0) > 0;
  }

  /**
   * True the first time this snapshot of the task is to be told to the session (and it is marked
   * told); false when the session was already told it, on whichever stream.
   */
  firstTelling(sessionId: string, task: TaskRecord): boolean {
    const entry = this.sessions.get(sessionId);
    if (!entry) return true;
    const snapshot = `${task.status}\u0000${task.statusMessage ?? ""}\u0000${task.lastUpdatedAt}`;
    if (entry.told.get(task.id) === snapshot) return false;
    entry.told.delete(task.id);
    entry.told.set(task.id, snapshot);
    if (entry.told.size > MAX_TOLD_PER_SESSION) entry.told.delete(entry.told.keys().next().value!);
    return true;
  }

  private entry(sessionId: string): SessionEntry {
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      entry = { streams: 0, results: new Map(), told: new Map() };
      this.sessions.set(sessionId, entry);
    }
    return entry;
  }
}
