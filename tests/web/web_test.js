// The web view in a real headless browser (Debian's chromium, driven by puppeteer-core):
// what a person sees. Run by tests/web_test.cc, which starts the cluster, the jobs and two
// `lockstep web` proxies (root, an operator; and nobody), and passes their login files in the
// environment.
// Exits 0 when every check holds; prints the first that does not and exits 1.
"use strict";
const puppeteer = require("puppeteer-core");
const { execFileSync } = require("child_process");
const fs = require("fs");

const env = process.env;
const need = (k) => { if (!env[k]) throw new Error("missing $" + k); return env[k]; };
// The proxies' login files (file:///...): the key is in them, never on a command line.
const ROOT_LOGIN = need("WEB_ROOT_LOGIN"), NOBODY_LOGIN = need("WEB_NOBODY_LOGIN");
const PENDING = need("WEB_PENDING_JOB"), RUNNING = need("WEB_RUNNING_JOB");
const NOBODY_JOB = need("WEB_NOBODY_JOB"), DRAIN = need("WEB_DRAIN_NODE");
const SHOTS = env.WEB_SCREENSHOTS || "";

function check(cond, what) { if (!cond) throw new Error("check failed: " + what); }

// The key a login file holds.
function keyOf(login) {
  const m = fs.readFileSync(new URL(login), "utf8").match(/\/login#([0-9a-f]+)/);
  if (!m) throw new Error("no key in " + login);
  return m[1];
}

// Every process whose command line holds `secret` (chromium's included), as "pid: args".
function commandLinesWith(secret) {
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let args;
    try { args = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1"); } catch { continue; }
    if (args.includes(secret)) found.push(pid + ": " + args.replace(/\0/g, " "));
  }
  return found;
}

async function main() {
  const browser = await puppeteer.launch({
    executablePath: env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const external = [];
    page.on("request", (r) => {
      if (!r.url().startsWith("http://127.0.0.1") && r.url() !== ROOT_LOGIN) external.push(r.url());
    });
    // The login file sends the browser to /login#KEY, which trades the key for a cookie.
    await page.goto(ROOT_LOGIN, { waitUntil: "domcontentloaded" });
    await page.waitForSelector(`[data-node="${DRAIN}"]`, { timeout: 20000 });
    check(!page.url().includes(keyOf(ROOT_LOGIN)), "the key left the address bar: " + page.url());
    const shown = commandLinesWith(keyOf(ROOT_LOGIN));
    check(shown.length === 0, "the key is on a command line: " + shown.join("; "));

    // A pending job shows its reason in plain words and its expected start.
    await page.waitForSelector(`[data-pending="${PENDING}"]`, { timeout: 20000 });
    const why = await page.$eval(`[data-pending="${PENDING}"] [data-why]`, (e) => e.textContent);
    check(why.includes("waiting for resources"), "pending job's reason in plain words: " + why);
    const start = await page.$eval(`[data-pending="${PENDING}"] [data-start]`, (e) => e.textContent);
    check(start && start !== "unknown", "pending job's expected start: " + start);

    // Draining a node changes its colour and shows the reason, live (from the event stream).
    const colour = (n) => page.$eval(`[data-node="${n}"]`, (e) => getComputedStyle(e).backgroundColor);
    const before = await colour(DRAIN);
    execFileSync(need("LOCKSTEP"), ["scontrol", "update", "NodeName=" + DRAIN, "State=DRAIN",
      "Reason=fan failure"], { env: { ...env, LOCKSTEP_STATE_DIR: need("STATE_DIR") } });
    await page.waitForFunction((n) => {
      const e = document.querySelector(`[data-node="${n}"]`);
      return e && (e.dataset.state === "drained" || e.dataset.state === "draining");
    }, { timeout: 20000 }, DRAIN);
    const after = await colour(DRAIN);
    check(before !== after, `the drained node's colour changed (${before} -> ${after})`);
    const reason = await page.$eval(`[data-node="${DRAIN}"] [data-reason]`, (e) => e.textContent);
    check(reason === "fan failure", "the drain reason is shown: " + reason);
    if (SHOTS) await page.screenshot({ path: SHOTS + "/web-cluster.png", fullPage: true });

    // A job's page opens from the map: the node, then the job on it.
    const runningNode = env.WEB_RUNNING_NODE;
    await page.click(`[data-node="${runningNode}"]`);
    await page.waitForSelector(`[data-node-page="${runningNode}"] [data-job-link="${RUNNING}"]`, { timeout: 20000 });
    await page.click(`[data-node-page="${runningNode}"] [data-job-link="${RUNNING}"]`);
    await page.waitForSelector(`[data-job-page="${RUNNING}"] [data-job-facts]`, { timeout: 20000 });
    const facts = await page.$eval(`[data-job-page="${RUNNING}"] [data-job-facts]`, (e) => e.textContent);
    check(facts.includes("RUNNING") && facts.includes(runningNode), "the job page's facts: " + facts);
    await page.waitForSelector(`[data-job-page="${RUNNING}"] [data-output]`, { timeout: 20000 });
    if (SHOTS) await page.screenshot({ path: SHOTS + "/web-job.png", fullPage: true });

    // Partitions as scontrol shows them: its field names, UNLIMITED rather than 2147483647.
    await page.evaluate(() => { location.hash = ""; });
    await page.waitForSelector("[data-partitions] [data-partition]", { timeout: 20000 });
    const parts = await page.$eval("[data-partitions]", (e) => e.innerText);
    check(parts.includes("MaxNodes") && parts.includes("UNLIMITED") && !parts.includes("2147483647") &&
      !parts.includes("max_nodes"), "partitions as scontrol shows them: " + parts);
    // The QoS and the fair-share tree open from the header.
    await page.click('[data-nav="qos"]');
    await page.waitForSelector('[data-qos-page] [data-qos="normal"]', { timeout: 20000 });
    const qos = await page.$eval('[data-qos-page] [data-qos="normal"]', (e) => [...e.children].map((c) => c.textContent));
    check(qos[0] === "normal (default)" && qos[6] === "OFF", "the normal QoS: " + qos.join("|"));
    await page.click('[data-nav="shares"]');
    await page.waitForSelector('[data-shares-page] [data-share-user="root"]', { timeout: 20000 });
    const share = await page.$eval('[data-shares-page] [data-share-user="root"]', (e) => [...e.children].map((c) => c.textContent));
    // Both users of the one account have no usage: tied, at the top rank.
    check(share[1] === "root" && share[3] === "0.500000" && share[7] === "1.000000",
      "root's line of the fair-share tree (NormShares, FairShare): " + share.join("|"));
    if (SHOTS) await page.screenshot({ path: SHOTS + "/web-shares.png", fullPage: true });
    check(external.length === 0, "no request left the cluster: " + external.join(" "));

    // A user cannot open another user's job details; their own, they can.
    const other = await browser.newPage();
    await other.goto(NOBODY_LOGIN, { waitUntil: "domcontentloaded" });
    await other.waitForSelector("[data-node]", { timeout: 20000 });
    await other.evaluate((id) => { location.hash = "#job/" + id; }, RUNNING);
    await other.waitForSelector(`[data-job-page="${RUNNING}"] [data-denied]`, { timeout: 20000 });
    const denied = await other.$eval(`[data-job-page="${RUNNING}"]`, (e) => e.textContent);
    check(!denied.includes("sleep") && denied.includes("only its owner"), "another's job is refused: " + denied);
    await other.evaluate((id) => { location.hash = "#job/" + id; }, NOBODY_JOB);
    await other.waitForSelector(`[data-job-page="${NOBODY_JOB}"] [data-job-facts]`, { timeout: 20000 });
  } finally {
    await browser.close();
  }
}

main().then(() => { console.log("web view: all checks held"); },
            (e) => { console.error(e.message || e); process.exit(1); });
