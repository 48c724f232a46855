import type { DemoTool } from "./tool.js";
import { crash, echo, fail } from "./quick.js";
import { hang, sleep } from "./slow.js";
import { deploy } from "./deploy.js";
import { changeLists, routed } from "./lists.js";

export type { DemoTool, ToolContext } from "./tool.js";
export { toListedTool } from "./tool.js";
export { CRASH_ERROR_CODE } from "./quick.js";

export const demoTools: readonly DemoTool[] = [echo, sleep, deploy, fail, crash, hang, routed, changeLists];
