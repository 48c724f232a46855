/**
 * The allowed status transitions (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks,
 * Task Status): the one table lives with the store's rules (store/task-rules.ts), because each Redis
 * script is built from it and checks inside Lua which statuses its transition may start from.
 * The engine names the transition (TaskChange `kind`); it never passes the statuses itself.
 * test/unit/transitions.test.ts pins the table.
 */
export { allowedFrom, isTerminal, NON_TERMINAL, TRANSITIONS } from "../store/task-rules.js";
