/**
 * A real headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) for browser tests, driven from
 * Deno over the DevTools protocol with puppeteer-core. Each test gets a fresh profile in its own
 * temporary directory; the screenshots it took of each page are written there when it fails.
 *
 * @example
 * browserTest("SCA page approves", async (b) => {
 *   await b.page.goto(url);
 *   await b.capture("login");
 * });
 */
import puppeteer, { type Browser, type HTTPRequest, type Page } from "puppeteer-core";

/** The Chromium binary the tests drive. */
export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

/** Flags for a quiet, reproducible headless run in a container. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Whether the Chromium binary is there. */
export function chromiumAvailable(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/** A browser with one page, and the screenshots taken so far. */
export interface BrowserSession {
  browser: Browser;
  page: Page;
  /** The test's temporary directory (profile, and screenshots on failure). */
  dir: string;
  /** Takes a screenshot of the current page, kept in memory until the test fails. */
  capture(name: string): Promise<void>;
  /**
   * Answers every request to `origin` (a TPP's site) in the browser itself with a small page, so
   * that a redirect to it lands without any network.
   */
  serveOrigin(origin: string, body?: string): Promise<void>;
}

/** Launches Chromium with a fresh profile under a new temporary directory. */
export async function openBrowser(): Promise<BrowserSession & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "browser_test_" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${dir}/profile`],
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const shots: { name: string; png: Uint8Array }[] = [];
  const served = new Map<string, string>();
  const session: BrowserSession & AsyncDisposable & { shots: typeof shots } = {
    browser,
    page,
    dir,
    shots,
    async capture(name) {
      shots.push({ name, png: await page.screenshot({ fullPage: true }) });
    },
    async serveOrigin(origin, body = "<!doctype html><title>TPP</title><h1>TPP</h1>") {
      if (served.size === 0) {
        await page.setRequestInterception(true);
        page.on("request", (request: HTTPRequest) => {
          const hit = [...served].find(([o]) => new URL(request.url()).origin === o);
          if (hit) {
            request.respond({ status: 200, contentType: "text/html", body: hit[1] });
          } else request.continue();
        });
      }
      served.set(new URL(origin).origin, body);
    },
    async [Symbol.asyncDispose]() {
      await browser.close();
    },
  };
  return session;
}

/**
 * A Deno test with a browser: on failure the screenshots it captured (and one of the page as it
 * was at the failure) are written to `<temp dir>/screenshots/` and the error names the folder;
 * on success the directory is removed. Without Chromium the test fails under CI and is ignored
 * elsewhere, as tests that need Redis are.
 */
export function browserTest(name: string, fn: (session: BrowserSession) => Promise<void>) {
  const missing = !chromiumAvailable();
  Deno.test({
    name,
    ignore: missing && Deno.env.get("CI") !== "true",
    // puppeteer's connection and child process end after the test's own last await.
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      if (missing) {
        throw new Error(`Chromium is missing at "${CHROMIUM}" (apt-get install chromium)`);
      }
      const session = await openBrowser() as BrowserSession & AsyncDisposable & {
        shots: { name: string; png: Uint8Array }[];
      };
      let failed = true;
      try {
        await fn(session);
        failed = false;
      } catch (error) {
        const folder = await writeScreenshots(session);
        if (error instanceof Error) error.message += `\nscreenshots: ${folder}`;
        throw error;
      } finally {
        await session[Symbol.asyncDispose]();
        if (!failed) await Deno.remove(session.dir, { recursive: true });
      }
    },
  });
}

async function writeScreenshots(
  session: BrowserSession & { shots: { name: string; png: Uint8Array }[] },
): Promise<string> {
  const folder = `${session.dir}/screenshots`;
  await Deno.mkdir(folder, { recursive: true });
  try {
    session.shots.push({
      name: "at-failure",
      png: await session.page.screenshot({ fullPage: true }),
    });
  } catch {
    // The page may be gone with the failure; the earlier screenshots are still written.
  }
  for (const [index, shot] of session.shots.entries()) {
    const file = `${folder}/${String(index + 1).padStart(2, "0")}-${shot.name}.png`;
    await Deno.writeFile(file, shot.png);
  }
  return folder;
}
