import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { isAlive, ROOT } from "./processes.js";
import { waitFor } from "./wait-for.js";

/**
 * The previous version for the rolling-upgrade tests (docs/operations/upgrading.md#the-rule): the
 * last commit of main before the latest change to the store's contract. The next such change
 * moves it to the last commit before itself, in this one place.
 */
export const PREVIOUS = {
  /** Main before acknowledged writes waited for the replicas (WAIT, the spare held sets). */
  commit: "478b049b4f9b3d0ac989290281b1c48afdf84629",
  /** What its replicas write (store/format.ts), recorded in `{format}`. */
  storeFormat: 2,
};

/**
 * The last build of store format 1 (a lease per task), which a replica of this build refuses to
 * run beside: the test shows the refusal the upgrade notes describe.
 */
export const FORMAT_1_BUILD = {
  commit: "2a2c3ae636eca825aeee51b68fb7bc428c4f9d6d",
  storeFormat: 1,
};

/** Built once per machine (per fresh node_modules in CI): kept under node_modules/.cache. */
const CACHE = join(ROOT, "node_modules/.cache/taskgate-previous");
/** This checkout's TypeScript compiles it: its own lockfile has the same compiler, and only its runtime dependencies are installed. */
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
/** The longest one build may take, and another file wait for it. */
const BUILD_MS = 540_000;

const exec = promisify(execFile);

/**
 * The previous version built from the git history, with the runtime dependencies of its own
 * lockfile: `git archive` of the commit, `npm ci --omit=dev`, tsc's emit. Returns the folder holding its
 * dist/cli.js. One build per commit at a time on a machine (a lock file holds the builder's pid):
 * a test file in another worker waits for it. A folder is renamed into place only once built,
 * so an interrupted build is redone.
 */
export async function previousBuild(commit = PREVIOUS.commit): Promise<string> {
  const dir = join(CACHE, commit);
  const built = () => existsSync(join(dir, "dist/cli.js"));
  if (built()) return dir;
  try {
    await exec("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: ROOT });
  } catch {
    throw new Error(`commit ${commit} is not in this clone's history: the rolling-upgrade test needs it (git fetch --unshallow)`);
  }
  mkdirSync(CACHE, { recursive: true });
  const lock = `${dir}.lock`;
  await waitFor(() => built() || takeLock(lock), { timeoutMs: BUILD_MS, intervalMs: 500, what: `the build of ${commit} in another test file` });
  if (built()) return dir;
  try {
    await build(commit, dir);
  } finally {
    rmSync(lock, { force: true });
  }
  return dir;
}

/** The lock when free, or held by a process that is gone. */
function takeLock(lock: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: "wx" });
    return true;
  } catch {
    let owner: number;
    try {
      owner = Number(readFileSync(lock, "utf8"));
    } catch {
      return false;
    }
    // Empty: its owner has yet to write its pid.
    if (!owner || isAlive(owner)) return false;
    rmSync(lock, { force: true });
    return false;
  }
}

async function build(commit: string, dir: string): Promise<void> {
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const env = { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1", CI: "true" };
  const run = (command: string, args: string[], cwd: string) => exec(command, args, { cwd, env, maxBuffer: 64 << 20, timeout: BUILD_MS });
  try {
    await exec("sh", ["-c", `git archive --format=tar ${commit} | tar -x -C "${building}"`], { cwd: ROOT });
    await run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"], building);
    // Its emit only: the commit was type-checked when it landed, and verbatimModuleSyntax makes emit per file.
    await run(process.execPath, [TSC, "-p", "tsconfig.build.json", "--noCheck"], building);
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    const out = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`building ${commit} failed: ${out.message}\n${out.stdout ?? ""}${out.stderr ?? ""}`);
  }
}
