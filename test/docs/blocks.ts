/** Reads the code blocks out of the Markdown docs, and splits a shell block into simple commands. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** One fenced code block: where it is, its language, its markers and its text. */
export interface DocBlock {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  /** From `<!-- docs-test: KIND -->` on the line before the fence, and words after the language (```sh aws). */
  readonly kinds: ReadonlySet<string>;
  readonly code: string;
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
const TS = new Set(['ts', 'typescript']);

/** The Markdown files the test reads: README.md and docs/*.md. */
export function docFiles(root: string): string[] {
  return [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

/** Every fenced block of a Markdown file. */
export function blocksOf(root: string, file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.trimStart().startsWith('```'));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    const marker = /^<!--\s*docs-test:\s*([\w ,-]+?)\s*-->$/.exec(lines[i - 1]?.trim() ?? '');
    const kinds = new Set([...(marker?.[1]?.split(/[\s,]+/) ?? []), ...(open[3]?.split(/\s+/).filter(Boolean) ?? [])]);
    const indent = open[1]!.length;
    blocks.push({
      file,
      line: i + 1,
      lang: open[2]!,
      kinds,
      code: lines
        .slice(i + 1, end)
        .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
        .join('\n'),
    });
    i = end;
  }
  return blocks;
}

/** Whether a block is shell (```sh, ```bash, ```shell, ```console). */
export const isShell = (b: DocBlock): boolean => SHELL.has(b.lang);
/** Whether a block is TypeScript (```ts, ```typescript). */
export const isTypeScript = (b: DocBlock): boolean => TS.has(b.lang);

/** A simple command: its leading `NAME=value` assignments and its words, quotes removed. */
export interface SimpleCommand {
  readonly env: Readonly<Record<string, string>>;
  readonly words: readonly string[];
  readonly text: string;
}

/**
 * Splits shell text into simple commands: backslash-newlines joined, comments dropped, split on
 * `&&`, `||`, `|`, `;`, `&` and newlines outside quotes. Enough for documentation, not a shell.
 */
export function simpleCommands(code: string): SimpleCommand[] {
  const text = code.replace(/\\\n/g, ' ');
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let start = 0;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (at: number) => {
    endWord();
    if (words.length) commands.push(toCommand(words, text.slice(start, at).trim()));
    words = [];
    start = at + 1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      word = (word ?? '') + text.slice(i + 1, close < 0 ? text.length : close);
      i = close < 0 ? text.length : close;
    } else if (c === '#' && word === undefined) {
      const nl = text.indexOf('\n', i);
      i = (nl < 0 ? text.length : nl) - 1;
    } else if (c === '\n' || c === ';' || c === '&' || c === '|') {
      endCommand(i);
      if (text[i + 1] === c) {
        i++;
        start = i + 1;
      }
    } else if (c === ' ' || c === '\t') endWord();
    else word = (word ?? '') + c;
  }
  endCommand(text.length);
  return commands;
}

function toCommand(words: string[], text: string): SimpleCommand {
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length; i++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(words[i]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  return { env, words: words.slice(i), text };
}
