import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./processes.js";

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

/**
 * The previous version built from the git history, with the dependencies of its own lockfile:
 * `git archive` of the commit, `npm ci`, `npm run build`. Returns the folder holding its
 * dist/cli.js. A folder is renamed into place only once built, so an interrupted build is redone.
 */
export function previousBuild(commit = PREVIOUS.commit): string {
  const dir = join(CACHE, commit);
  if (existsSync(join(dir, "dist/cli.js"))) return dir;
  try {
    execFileSync("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: ROOT, stdio: "ignore" });
  } catch {
    throw new Error(`commit ${commit} is not in this clone's history: the rolling-upgrade test needs it (git fetch --unshallow)`);
  }
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const run = (command: string, cwd: string) =>
    execSync(command, { cwd, stdio: "pipe", env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1", CI: "true" }, maxBuffer: 64 << 20 });
  try {
    run(`git archive --format=tar ${commit} | tar -x -C "${building}"`, ROOT);
    run("npm ci --no-audit --no-fund --loglevel=error", building);
    run("npm run build --silent", building);
    // Test files in another worker may have built it meanwhile and be running it: theirs stays.
    if (existsSync(join(dir, "dist/cli.js"))) rmSync(building, { recursive: true, force: true });
    else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(building, dir);
    }
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    const out = err as { stderr?: Buffer; stdout?: Buffer; message: string };
    throw new Error(`building ${commit} failed: ${out.message}\n${out.stdout?.toString() ?? ""}${out.stderr?.toString() ?? ""}`);
  }
  return dir;
}
