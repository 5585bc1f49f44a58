/**
 * The little of Markdown that planning and issue import read: ATX headings (`## Login`) and
 * list items (`- [ ] #12`), never inside fenced code. marked and mdast, the well-kept parsers,
 * ship as ES modules only, which this CommonJS build can load only asynchronously; a line scan
 * covers the two constructs these callers need.
 */

export interface Heading {
  /** 1–6. */
  level: number;
  text: string;
  /** GitHub's anchor for the heading (`#user-login`), unique within the document. */
  slug: string;
  /** 0-based line of the heading. */
  line: number;
  /** 0-based line after the section's last line (the next heading of the same or a higher level, or the end). */
  end: number;
}

export interface ListItem {
  line: number;
  text: string;
  /** `- [ ]` → false, `- [x]` → true, a plain item → undefined. */
  checked?: boolean;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[([ xX])\]\s+)?(.*)$/;

/** Each line of `text`, with whether it is inside (or is the fence of) a fenced code block. */
function scan(text: string): { line: string; code: boolean }[] {
  const out: { line: string; code: boolean }[] = [];
  let fence: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === undefined && marker) {
      fence = marker[0].repeat(marker.length);
      out.push({ line, code: true });
    } else if (fence !== undefined) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      out.push({ line, code: true });
    } else out.push({ line, code: false });
  }
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces → `-`. */
export function slugify(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

export function headings(text: string): Heading[] {
  const lines = scan(text);
  const found: Heading[] = [];
  const used = new Map<string, number>();
  lines.forEach(({ line, code }, index) => {
    const match = code ? null : ATX.exec(line);
    if (!match) return;
    const title = (match[2] ?? '').trim();
    const base = slugify(title);
    const seen = used.get(base) ?? 0;
    used.set(base, seen + 1);
    found.push({ level: match[1].length, text: title, slug: seen === 0 ? base : `${base}-${seen}`, line: index, end: lines.length });
  });
  for (let i = 0; i < found.length; i++) {
    const next = found.slice(i + 1).find((h) => h.level <= found[i].level);
    if (next) found[i].end = next.line;
  }
  return found;
}

/** The heading `name` names: its text or its slug, case-insensitively. */
export function findHeading(all: readonly Heading[], name: string): Heading | undefined {
  const wanted = name.trim().replace(/^#/, '').toLowerCase();
  return (
    all.find((h) => h.text.toLowerCase() === wanted) ?? all.find((h) => h.slug === wanted) ?? all.find((h) => h.slug === slugify(wanted))
  );
}

/** The lines `from`..`to` (0-based, end exclusive). */
export function linesOf(text: string, from: number, to: number): string {
  return text.split(/\r?\n/).slice(from, to).join('\n');
}

/** List items outside code, with their checkbox state. */
export function listItems(text: string): ListItem[] {
  const items: ListItem[] = [];
  scan(text).forEach(({ line, code }, index) => {
    const match = code ? null : ITEM.exec(line);
    if (match) items.push({ line: index, text: match[2].trim(), ...(match[1] !== undefined ? { checked: match[1] !== ' ' } : {}) });
  });
  return items;
}

/** The text with fenced code blocks blanked out (line numbers kept), for searching prose only. */
export function withoutCode(text: string): string {
  return scan(text)
    .map(({ line, code }) => (code ? '' : line))
    .join('\n');
}
