// The web example page's test: serves www/ on 127.0.0.1 (python3 -m
// http.server), opens it in headless Chromium with WebGPU, waits (bounded)
// for the page's result, checks what it shows against a CPU blur of the
// same input computed here, takes a screenshot, and exits non-zero on a
// mismatch, an error or a timeout.
//
//   node page_test.mjs [--screenshot PATH] [--timeout SECONDS] [--chromium PATH]
//
// Build the page first (docs/web.md). The screenshot goes to
// ../docs/pictures/web-page.png unless --screenshot says otherwise.

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { blurReference, maxAbsError } from './www/reference.js';

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
};
const screenshot = resolve(arg('--screenshot', join(here, '..', 'docs', 'pictures', 'web-page.png')));
const timeoutMs = Number(arg('--timeout', '120')) * 1000;
const executablePath = arg('--chromium', '/usr/bin/chromium');
const TOLERANCE = 1e-4;

function fail(message) {
  console.error(`page test FAILED: ${message}`);
  process.exitCode = 1;
}

/** Starts `python3 -m http.server` on a free port of 127.0.0.1; resolves to [process, url]. */
function serve(dir) {
  return new Promise((resolvePromise, reject) => {
    const server = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => reject(new Error('http.server did not start within 10 s')), 10_000);
    server.on('error', reject);
    server.stdout.on('data', (chunk) => {
      const m = /port (\d+)/.exec(String(chunk));
      if (m) {
        clearTimeout(timer);
        resolvePromise([server, `http://127.0.0.1:${m[1]}/`]);
      }
    });
    server.stderr.resume();
  });
}

const started = Date.now();
const [server, url] = await serve(join(here, 'www'));
let browser;
try {
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless=new', '--no-sandbox', '--enable-unsafe-webgpu'],
    timeout: 30_000,
  });
  const page = await browser.newPage({ viewport: { width: 860, height: 640 } });
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
  await page.goto(url, { timeout: 30_000 });
  try {
    await page.waitForFunction(() => window.vyreResult !== undefined, null, { timeout: timeoutMs, polling: 100 });
  } catch (e) {
    const shown = await page.textContent('#status').catch(() => '?');
    throw new Error(`no result within ${timeoutMs / 1000} s; the page shows: ${shown}\n${consoleLines.join('\n')}`);
  }
  const result = await page.evaluate(() => window.vyreResult);
  const status = await page.textContent('#status');
  const values = await page.textContent('#values');
  console.log(status);
  console.log(values);
  await page.locator('body').evaluate(() => document.fonts.ready);
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);

  if (result.error) throw new Error(`the page reports an error: ${result.error}\n${consoleLines.join('\n')}`);
  // The page's own check, and what it shows.
  if (!result.ok || !status.startsWith('OK:')) fail(`the page reports no match: ${status}`);
  // Our own check: the CPU blur of the page's input against the page's whole output.
  const input = Uint8Array.from(await page.evaluate(() => Array.from(window.vyreInput)));
  const output = Float32Array.from(await page.evaluate(() => Array.from(window.vyreOutput)));
  const { width, height, radius, sigma } = result;
  if (input.length !== width * height * 4) fail(`input holds ${input.length} bytes, not ${width * height * 4}`);
  const want = blurReference(input, width, height, radius, sigma);
  const error = maxAbsError(output, want);
  if (!(error <= TOLERANCE)) fail(`output differs from the CPU: max abs error ${error} over ${TOLERANCE}`);
  // The first values the page prints are the reference's, to the 6 decimals printed.
  const shown = (values.split(':').pop() || '').trim().split(/\s+/).map(Number);
  const first = Array.from(want.slice(0, 8));
  if (shown.length !== 8 || shown.some((v, i) => !(Math.abs(v - first[i]) <= TOLERANCE + 5e-7))) {
    fail(`the page shows first values ${shown.join(' ')}, the CPU says ${first.map((v) => v.toFixed(6)).join(' ')}`);
  }
  if (!process.exitCode) {
    console.log(
      `page test passed: ${width} x ${height}, max abs error ${error.toExponential(2)} against the CPU, ` +
        `${result.msPerRun.toFixed(2)} ms per run, load to checked result ${result.loadToResultMs.toFixed(0)} ms ` +
        `(test ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
} catch (e) {
  fail(e && e.message ? e.message : String(e));
} finally {
  if (browser) await browser.close().catch(() => {});
  server.kill();
}
