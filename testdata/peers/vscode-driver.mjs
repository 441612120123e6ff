// vscode-driver.mjs: drives a real VS Code (code-server's workbench) in headless Chromium with
// playwright-core, one step at a time, for e2e/vscode_real_test.go. It only does what a user does
// (keys, the command palette, clicks on notification buttons) and reads what a user sees (the
// editor's lines, the ghost text, the notifications); the test checks the rest (what the agent
// heard, the files) itself.
//
// Usage: node vscode-driver.mjs --url URL --profile DIR --shots DIR
//   URL      the workbench, e.g. http://127.0.0.1:PORT/?folder=/path
//   DIR      a new, empty Chromium profile; --shots: where screenshots go
// Needs VSCODE_TOOLS (node_modules with playwright-core) and CHROMIUM (the browser to run).
//
// Steps are JSON objects, one a line, on stdin; each answer is one line on stdout:
// {"ok":true,"result":...} or {"ok":false,"error":"...","screenshot":"FILE"} (a screenshot of the
// page when the step failed). Every wait has a generous deadline (timeoutMs, 60 s by default):
// the machine may be slow, and a wait ends as soon as its condition holds.
//
//   {"op":"load"}                          open URL, wait for the workbench
//   {"op":"open","name":"a.go"}            Quick Open (Ctrl+P) the file, wait for its editor
//   {"op":"goto","line":4,"column":14}     Go to Line (Ctrl+G) "4:14" (1-based, as VS Code shows)
//   {"op":"press","keys":["End","Tab"]}    press keys, one after another
//   {"op":"type","text":"o"}               type text, key by key
//   {"op":"editor","path":"/x/settings.json"}  wait until the active editor shows that file and has the focus
//   {"op":"replaceAll","text":"..."}       replace the active editor's text: Ctrl+A, then paste text
//                                          (pasted, not typed, so that no bracket or quote is auto-closed)
//   {"op":"palette","title":"..."}         F1, type the command's title, run the command of that title
//                                          ("prefix":true: whose title starts so, for titles that end
//                                          with the remote's name, such as Open Remote Settings)
//   {"op":"ghost","text":"o(x)"}           wait until the active editor shows exactly this ghost text
//   {"op":"noGhost"}                       wait until the active editor shows no ghost text
//   {"op":"lines"}                         the active editor's rendered lines, top to bottom
//   {"op":"waitLine","line":4,"text":"..."} wait until rendered line (1-based) reads text (leading
//                                          whitespace aside: VS Code draws a tab as spaces)
//   {"op":"lightbulb"}                     wait until the editor shows the code action light bulb
//   {"op":"squiggle"} / {"op":"noSquiggle"}  wait until the editor shows an error squiggle / none
//   {"op":"toast","contains":"..."}        wait for a notification containing the text: {message, buttons}
//   {"op":"toasts"}                        the notifications shown now
//   {"op":"click","contains":"...","button":"Apply"}  click a button of that notification
//   {"op":"clearToasts"}                   close every notification
//   {"op":"activeTab"}                     the active tab's label, description and title, the editor's URI
//   {"op":"hint","line":8,"text":"..."}    wait until the rendered line shows that text after it (a
//                                          decoration's ::after content, as VS Code draws it)
//   {"op":"statusItem","contains":"NES","icon":"check"}  wait until a status bar item's text contains
//                                          that, with that codicon when given: {text, icons, label}
//   {"op":"clickStatus","contains":"NES"}  click that status bar item
//   {"op":"pick","label":"..."}            wait for a quick pick with an item of that label, click it
//   {"op":"screenshot","name":"x"}         a screenshot, SHOTS/x.png
//   {"op":"quit"}

import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= args.length) {
    console.error(`vscode-driver: --${name} is required`);
    process.exit(2);
  }
  return args[i + 1];
};
const url = opt('url');
const profile = opt('profile');
const shots = opt('shots');
const require = createRequire(path.join(process.env.VSCODE_TOOLS, 'vscode-driver.cjs'));
const { chromium } = require('playwright-core');

const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM,
  headless: true,
  viewport: { width: 1400, height: 900 },
  // No sandbox (root in CI), no GPU; nothing in the background tries the (closed) network.
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
// The replaceAll step pastes through the clipboard.
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
const page = context.pages()[0] ?? (await context.newPage());
const browserErrors = [];
page.on('pageerror', (e) => browserErrors.push(String(e)));

const DEFAULT_TIMEOUT = 60000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The active editor group's text editor (not the Settings editor's inputs, not the quick input).
const EDITOR = '.part.editor .editor-group-container.active .editor-container .monaco-editor[data-uri]';

async function until(what, cond, timeoutMs = DEFAULT_TIMEOUT) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await cond();
    if (last) return last;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

// The rendered lines of the active editor, ordered by their position (the DOM order is not the
// line order), with VS Code's non-breaking spaces turned back into spaces.
async function lines() {
  return page.evaluate((sel) => {
    const ed = document.querySelector(sel);
    if (!ed) return null;
    const rows = [...ed.querySelectorAll('.view-lines .view-line')].map((el) => ({
      top: parseFloat(el.style.top || '0'),
      text: el.textContent.replace(/\u00a0/g, ' '),
    }));
    rows.sort((a, b) => a.top - b.top);
    return rows.map((r) => r.text);
  }, EDITOR);
}

// The texts that decorations draw after or before the rendered lines' spans (CSS ::after and
// ::before content), by line (1-based, as rendered top to bottom).
async function decorationTexts() {
  return page.evaluate((sel) => {
    const ed = document.querySelector(sel);
    if (!ed) return [];
    const rows = [...ed.querySelectorAll('.view-lines .view-line')].map((el) => {
      const texts = [];
      for (const span of el.querySelectorAll('span')) {
        for (const pseudo of ['::before', '::after']) {
          const c = getComputedStyle(span, pseudo).content;
          if (c && c !== 'none' && c !== 'normal' && c !== '""') texts.push(JSON.parse(c));
        }
      }
      return { top: parseFloat(el.style.top || '0'), texts };
    });
    rows.sort((a, b) => a.top - b.top);
    return rows.map((r) => r.texts);
  }, EDITOR);
}

async function ghostText() {
  return page.evaluate((sel) => {
    const ed = document.querySelector(sel);
    if (!ed) return '';
    return [...ed.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text')]
      .map((el) => el.textContent)
      .join('')
      .replace(/\u00a0/g, ' ');
  }, EDITOR);
}

async function toasts() {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notifications-toasts .notification-toast')].map((t) => ({
      message: (t.querySelector('.notification-list-item-message')?.textContent ?? '').trim(),
      buttons: [...t.querySelectorAll('.notification-list-item-buttons-container .monaco-button')].map((b) => b.textContent.trim()),
    })),
  );
}

async function waitToast(contains, timeoutMs) {
  return until(`a notification containing ${JSON.stringify(contains)}`, async () => (await toasts()).find((t) => t.message.includes(contains)), timeoutMs);
}

async function quickInputVisible() {
  return page.locator('.quick-input-widget').isVisible();
}

// Opens a quick input (the command palette, Quick Open, Go to Line) with a key, and waits until its
// input box has the focus, so that what is typed next goes there.
async function quickInput(key, what, timeoutMs) {
  await page.keyboard.press(key);
  await until(
    what,
    () => page.evaluate(() => !!document.activeElement?.closest('.quick-input-widget') && document.activeElement.tagName === 'INPUT'),
    timeoutMs,
  );
}

// Whether the active editor's text area has the focus (what is typed goes into the file).
async function editorFocused() {
  return page.evaluate((sel) => !!document.activeElement?.closest(sel) && document.activeElement.tagName === 'TEXTAREA', EDITOR);
}

async function palette(title, prefix, timeoutMs) {
  // F1 opens the command palette with the ">" prefix; the title then filters the list.
  await quickInput('F1', 'the command palette', timeoutMs);
  await page.keyboard.type(title);
  // Wait until the focused (first) row is the command, then run it.
  await until(
    `the command ${JSON.stringify(title)} in the palette`,
    () =>
      page.evaluate(
        ({ title, prefix }) => {
          const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
          const label = (row?.querySelector('.label-name')?.textContent ?? '').replace(/\u00a0/g, ' ').trim();
          return prefix ? label.startsWith(title) : label === title;
        },
        { title, prefix },
      ),
    timeoutMs,
  );
  await page.keyboard.press('Enter');
  await until('the command palette to close', async () => !(await quickInputVisible()), timeoutMs);
}

// The status bar items whose text contains `contains`: their text, codicons and accessible label.
async function statusItems(contains) {
  return page.evaluate(
    (contains) =>
      [...document.querySelectorAll('.part.statusbar .statusbar-item')]
        .map((el) => ({
          text: el.textContent.replace(/\u00a0/g, ' ').trim(),
          icons: [...el.querySelectorAll('.codicon')].flatMap((c) => [...c.classList].filter((k) => k.startsWith('codicon-')).map((k) => k.slice(8))),
          label: el.querySelector('a')?.getAttribute('aria-label') ?? el.getAttribute('aria-label') ?? '',
        }))
        .filter((i) => i.text.includes(contains)),
    contains,
  );
}

async function activeTab() {
  return page.evaluate(() => {
    const tab = document.querySelector('.part.editor .editor-group-container.active .tab.active');
    const ed = document.querySelector('.part.editor .editor-group-container.active .editor-container .monaco-editor[data-uri]');
    return {
      label: tab?.querySelector('.label-name')?.textContent ?? '',
      description: tab?.querySelector('.label-description')?.textContent ?? '',
      title: tab?.getAttribute('aria-label') ?? '',
      uri: ed?.getAttribute('data-uri') ?? '',
    };
  });
}

async function step(s) {
  const timeoutMs = s.timeoutMs ?? DEFAULT_TIMEOUT;
  switch (s.op) {
    case 'load': {
      const t0 = Date.now();
      await page.goto(url, { timeout: timeoutMs });
      await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: timeoutMs });
      // The explorer lists the folder once the remote side answers.
      await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: timeoutMs });
      return { ms: Date.now() - t0 };
    }
    case 'open': {
      await quickInput('Control+p', 'Quick Open', timeoutMs);
      await page.keyboard.type(s.name);
      await until(
        `${s.name} in Quick Open`,
        () =>
          page.evaluate((name) => {
            const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
            return (row?.querySelector('.label-name')?.textContent ?? '') === name;
          }, s.name),
        timeoutMs,
      );
      await page.keyboard.press('Enter');
      await until(`the editor of ${s.name}`, async () => (await activeTab()).label === s.name && (await lines()) !== null && (await editorFocused()), timeoutMs);
      return activeTab();
    }
    case 'goto': {
      await quickInput('Control+g', 'Go to Line', timeoutMs);
      await page.keyboard.type(s.column ? `${s.line}:${s.column}` : `${s.line}`);
      await page.keyboard.press('Enter');
      await until('Go to Line to close', async () => !(await quickInputVisible()) && (await editorFocused()), timeoutMs);
      return null;
    }
    case 'press':
      for (const k of s.keys) await page.keyboard.press(k);
      return null;
    case 'type':
      await page.keyboard.type(s.text);
      return null;
    case 'editor':
      await until(
        `the editor of ${s.path} (now ${JSON.stringify(await activeTab())})`,
        async () => decodeURIComponent(new URL((await activeTab()).uri || 'x:/').pathname) === s.path && (await editorFocused()),
        timeoutMs,
      );
      return activeTab();
    case 'replaceAll':
      await page.evaluate((text) => navigator.clipboard.writeText(text), s.text);
      await page.keyboard.press('Control+a');
      await page.keyboard.press('Control+v');
      return null;
    case 'palette':
      await palette(s.title, !!s.prefix, timeoutMs);
      return null;
    case 'ghost':
      return until(`the ghost text ${JSON.stringify(s.text)} (now ${JSON.stringify(await ghostText())})`, async () => (await ghostText()) === s.text && s.text, timeoutMs);
    case 'noGhost':
      await until('no ghost text', async () => (await ghostText()) === '', timeoutMs);
      return null;
    case 'lines':
      return lines();
    case 'waitLine':
      return until(
        `line ${s.line} to read ${JSON.stringify(s.text)}`,
        async () => {
          const ls = await lines();
          return ls && ls[s.line - 1]?.trimStart() === s.text.trimStart() ? ls : null;
        },
        timeoutMs,
      ).catch(async (e) => {
        throw new Error(`${e.message}; the lines: ${JSON.stringify(await lines())}`);
      });
    case 'lightbulb':
      await page.waitForSelector(`${EDITOR} .lightBulbWidget`, { state: 'visible', timeout: timeoutMs });
      return null;
    case 'squiggle':
      await page.waitForSelector(`${EDITOR} .squiggly-error`, { state: 'attached', timeout: timeoutMs });
      return null;
    case 'noSquiggle':
      await page.waitForSelector(`${EDITOR} .squiggly-error`, { state: 'detached', timeout: timeoutMs });
      return null;
    case 'toast':
      return waitToast(s.contains, timeoutMs);
    case 'toasts':
      return toasts();
    case 'click': {
      await waitToast(s.contains, timeoutMs);
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: s.contains }).first();
      await toast.locator('.notification-list-item-buttons-container .monaco-button', { hasText: s.button }).first().click({ timeout: timeoutMs });
      return null;
    }
    case 'clearToasts':
      await palette('Notifications: Clear All Notifications', false, timeoutMs);
      await until('no notifications', async () => (await toasts()).length === 0, timeoutMs);
      return null;
    case 'activeTab':
      return activeTab();
    case 'hint':
      return until(
        `line ${s.line} to show ${JSON.stringify(s.text)} after it`,
        async () => ((await decorationTexts())[s.line - 1] ?? []).includes(s.text),
        timeoutMs,
      ).catch(async (e) => {
        throw new Error(`${e.message}; the decorations' texts: ${JSON.stringify(await decorationTexts())}`);
      });
    case 'statusItem':
      return until(
        `a status bar item with ${JSON.stringify(s.contains)}${s.icon ? ` and the icon ${s.icon}` : ''}`,
        async () => (await statusItems(s.contains)).find((i) => !s.icon || i.icons.includes(s.icon)),
        timeoutMs,
      ).catch(async (e) => {
        throw new Error(`${e.message}; the items: ${JSON.stringify(await statusItems(s.contains))}`);
      });
    case 'clickStatus':
      await page.locator('.part.statusbar .statusbar-item', { hasText: s.contains }).first().click({ timeout: timeoutMs });
      return null;
    case 'pick': {
      const row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${s.label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) }).first();
      await row.waitFor({ state: 'visible', timeout: timeoutMs });
      const items = await page.evaluate(() => [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row .label-name')].map((el) => el.textContent.replace(/\u00a0/g, ' ').trim()));
      await row.click({ timeout: timeoutMs });
      await until('the quick pick to close', async () => !(await quickInputVisible()), timeoutMs);
      return items;
    }
    case 'screenshot': {
      const file = path.join(shots, `${s.name}.png`);
      await page.screenshot({ path: file });
      return file;
    }
    case 'quit':
      return null;
    default:
      throw new Error(`unknown op ${s.op}`);
  }
}

let shot = 0;
// Answers go to stdout, one line each; nothing else may write there.
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  let s;
  try {
    s = JSON.parse(line);
    const result = await step(s);
    out({ ok: true, result });
    if (s.op === 'quit') break;
  } catch (e) {
    let screenshot = '';
    try {
      screenshot = path.join(shots, `failed-${++shot}.png`);
      await page.screenshot({ path: screenshot });
    } catch {
      screenshot = '';
    }
    out({ ok: false, error: `${s?.op ?? 'step'}: ${e && e.message ? e.message : e}${browserErrors.length ? `; page errors: ${browserErrors.slice(-3).join(' | ')}` : ''}`, screenshot });
  }
}
await context.close();
