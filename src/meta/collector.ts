// HTMLRewriter handlers that collect the raw tags of a page's head, in document order. Values are kept
// as the runtime hands them over (entities still encoded); result.ts decodes and resolves them.

export interface MetaTag {
  /** `name`, `property` or `http-equiv`, lower-cased. */
  key: string;
  content: string;
}

export interface LinkTag {
  rel: string[];
  href: string;
}

export interface RawPage {
  title: string | null;
  lang: string | null;
  base: string | null;
  metas: MetaTag[];
  links: LinkTag[];
  jsonLd: string[];
}

type Handlers = Pick<HTMLRewriterElementContentHandlers, 'element' | 'text'>;

const LINK_RELS = new Set(['canonical', 'icon', 'apple-touch-icon', 'apple-touch-icon-precomposed']);

/** Text gathered from an element's text chunks until its end tag (or the end of what was read). */
class Capture {
  text = '';
  open = false;
}

export class HeadCollector {
  readonly page: RawPage = { title: null, lang: null, base: null, metas: [], links: [], jsonLd: [] };
  /** True once the head is over (`</head>` or `<body>`): nothing more needs reading. */
  done = false;
  /** Depth inside inline SVG and MathML, whose own <title> elements are not the page's. */
  private foreignDepth = 0;
  private readonly title = new Capture();
  private readonly script = new Capture();

  attach(rewriter: HTMLRewriter): HTMLRewriter {
    // Reading stops a chunk after the head ends; whatever that chunk holds beyond it is not the head's.
    const head = (handlers: Handlers): Handlers => ({
      element: handlers.element && ((el) => (this.done ? undefined : handlers.element!(el))),
      text: handlers.text && ((t) => (this.done ? undefined : handlers.text!(t))),
    });
    return rewriter
      .on('html', head({ element: (el) => void (this.page.lang ??= el.getAttribute('lang')) }))
      .on('head', head({ element: (el) => void this.onEnd(el, () => (this.done = true)) }))
      .on('body', { element: () => void (this.done = true) })
      .on('svg, math', {
        element: (el) => {
          if (this.onEnd(el, () => this.foreignDepth--)) this.foreignDepth++;
        },
      })
      .on(
        'title',
        head({
          element: (el) => {
            if (this.page.title !== null || this.title.open || this.foreignDepth > 0) return;
            this.title.open = this.onEnd(el, () => this.closeTitle());
          },
          text: (t) => void (this.title.open && (this.title.text += t.text)),
        }),
      )
      .on('base', head({ element: (el) => void (this.page.base ??= el.getAttribute('href')) }))
      .on('meta', head({ element: (el) => this.onMeta(el) }))
      .on('link', head({ element: (el) => this.onLink(el) }))
      .on(
        'script',
        head({
          element: (el) => {
            const type = (el.getAttribute('type') ?? '').split(';')[0]!.trim().toLowerCase();
            if (type === 'application/ld+json') this.script.open = this.onEnd(el, () => this.closeScript());
          },
          text: (t) => void (this.script.open && (this.script.text += t.text)),
        }),
      );
  }

  /** What an unclosed <title> or JSON-LD block held when reading stopped still counts. */
  finish(): RawPage {
    if (this.title.open) this.closeTitle();
    if (this.script.open) this.closeScript();
    return this.page;
  }

  /** Registers a handler for the element's end tag; false when it has none (void or self-closing). */
  private onEnd(el: Element, handler: () => void): boolean {
    try {
      el.onEndTag(handler);
      return true;
    } catch {
      return false;
    }
  }

  private closeTitle(): void {
    this.title.open = false;
    this.page.title ??= this.title.text;
  }

  private closeScript(): void {
    this.script.open = false;
    this.page.jsonLd.push(this.script.text);
    this.script.text = '';
  }

  private onMeta(el: Element): void {
    // Old Twitter markup used `value` where everyone else uses `content`.
    const content = el.getAttribute('content') ?? el.getAttribute('value');
    if (content === null) return;
    for (const attribute of ['property', 'name', 'http-equiv']) {
      const key = el.getAttribute(attribute)?.trim().toLowerCase();
      if (key) this.page.metas.push({ key, content });
    }
  }

  private onLink(el: Element): void {
    const href = el.getAttribute('href');
    const rel = (el.getAttribute('rel') ?? '')
      .toLowerCase()
      .split(/\s+/)
      .filter((r) => LINK_RELS.has(r));
    if (href !== null && rel.length > 0) this.page.links.push({ rel, href });
  }
}
