import type { RepoRef } from '../../git/issueRefs';
import { headings, linesOf, listItems, withoutCode } from '../markdownOutline';

/** What an issue's text says beyond its request: its testable criteria and what it waits for. */
export interface IssueReading {
  /** The acceptance criteria, one per item; empty when the issue states none. */
  criteria: string[];
  /** Issues of the same repository it depends on (`depends on #3`, `blocked by #4`, a task list `- [ ] #5`). */
  dependsOn: number[];
  /** Dependencies in other repositories (`depends on o/r#3`): named, not tracked. */
  external: string[];
}

/** Headings (or bold lead-ins) under which issues state what "done" means. */
const CRITERIA_TITLE = /^(?:acceptance criteria|acceptance|definition of done|done when|success criteria|expected (?:result|behaviou?r))$/i;
/** A lead-in line: `**Acceptance criteria**`, `**Acceptance criteria:**`, `Acceptance criteria:`. */
const LEAD_IN = /^\s*(?:(?:\*\*|__)([A-Za-z][A-Za-z ]*?):?(?:\*\*|__):?|([A-Za-z][A-Za-z ]*?):)\s*$/;
/** What issue forms and people write where there is nothing (GitHub's forms: `_No response_`). */
const PLACEHOLDER = /^(?:_?no response_?|tbd|tba|todo|n\/?a|none|-+|\?+|\.\.\.|…)\.?$/i;

const REF = '(?:(?:https?://[^/\\s]+/([\\w.-]+)/([\\w.-]+)/issues/(\\d+))|(?:([\\w.-]+)/([\\w.-]+))?#(\\d+))';
const DEPENDS = new RegExp(`\\b(?:depends on|depend on|dependent on|blocked by)\\s*:?\\s*((?:${REF}(?:\\s*(?:,|and|&)\\s*)?)+)`, 'gi');
const REFS = new RegExp(REF, 'g');
const LEADING_REF = new RegExp(`^${REF}`);

export function readIssueBody(body: string, repo: RepoRef): IssueReading {
  const prose = withoutCode(body);
  const deps = new Set<number>();
  const external = new Set<string>();
  const add = (match: RegExpExecArray) => {
    const owner = match[1] ?? match[4];
    const name = match[2] ?? match[5];
    const number = Number(match[3] ?? match[6]);
    if (!owner || (owner.toLowerCase() === repo.owner.toLowerCase() && name.toLowerCase() === repo.repo.toLowerCase())) deps.add(number);
    else external.add(`${owner}/${name}#${number}`);
  };
  for (const statement of prose.matchAll(DEPENDS)) for (const ref of statement[1].matchAll(REFS)) add(ref);
  // a task list of issues: the issue tracks them, so it is done after them
  for (const item of listItems(body)) {
    const ref = item.checked !== undefined ? LEADING_REF.exec(item.text) : null;
    if (ref) add(ref);
  }
  return { criteria: criteriaOf(body), dependsOn: [...deps].sort((a, b) => a - b), external: [...external] };
}

/** The items (or lines) of the first criteria section that says something; placeholders do not count. */
function criteriaOf(body: string): string[] {
  const outline = headings(body);
  const sections: { from: number; to: number }[] = outline
    .filter((h) => CRITERIA_TITLE.test(h.text.replace(/[*_:]/g, '').trim()))
    .map((h) => ({ from: h.line + 1, to: h.end }));
  // a lead-in line outside code, up to the next heading or lead-in
  const prose = withoutCode(body).split('\n');
  const leadIns = prose.flatMap((line, index) => {
    const match = LEAD_IN.exec(line);
    return match ? [{ index, title: (match[1] ?? match[2]).trim() }] : [];
  });
  leadIns.forEach((lead, i) => {
    if (!CRITERIA_TITLE.test(lead.title)) return;
    const next = Math.min(outline.find((h) => h.line > lead.index)?.line ?? prose.length, leadIns[i + 1]?.index ?? prose.length);
    sections.push({ from: lead.index + 1, to: next });
  });
  for (const section of sections.sort((a, b) => a.from - b.from)) {
    const text = linesOf(body, section.from, section.to);
    const meaningful = (line: string) => line !== '' && !PLACEHOLDER.test(line.replace(/[*_`]/g, '').trim());
    const items = listItems(text)
      .filter((item) => !LEADING_REF.test(item.text))
      .map((item) => item.text)
      .filter(meaningful);
    if (items.length > 0) return items;
    // no criteria in a list: the section's prose (its list items are issue references or placeholders)
    const listed = new Set(listItems(text).map((item) => item.line));
    const plain = withoutCode(text)
      .split('\n')
      .filter((_, i) => !listed.has(i))
      .map((line) => line.trim())
      .filter(meaningful);
    if (plain.length > 0) return plain;
  }
  return [];
}
