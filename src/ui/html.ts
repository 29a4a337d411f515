/** A minimal HTML builder: every interpolated value is escaped unless it is already {@link SafeHtml}. */

/** HTML that has been escaped (or is trusted markup built from escaped parts). */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Escapes text for an HTML element or a quoted attribute. */
function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

type Part = SafeHtml | string | number | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof SafeHtml) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

/** Tagged template: `html\`<td>${value}</td>\`` escapes `value`; arrays are joined; false/null/undefined render nothing. */
export function html(strings: TemplateStringsArray, ...parts: Part[]): SafeHtml {
  let out = strings[0]!;
  parts.forEach((p, i) => {
    out += render(p) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}
