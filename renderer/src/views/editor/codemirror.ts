/**
 * The CodeMirror 6 set-up of the scenario editor: YAML highlighting,
 * completion and hover docs from the scenario schema, and the engine parser's
 * errors marked in the text and written at the end of their line. What to
 * offer and what is wrong comes from the model (editorSchema.ts,
 * editorDiagnostics.ts); this file only wires it in.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import type { CompletionSource } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { yaml } from "@codemirror/lang-yaml";
import { bracketMatching, HighlightStyle, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { lintGutter, lintKeymap, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { EditorState, Prec, StateEffect, StateField, type Extension } from "@codemirror/state";
import {
  Decoration,
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  hoverTooltip,
  keymap,
  lineNumbers,
  ViewPlugin,
  WidgetType,
  type DecorationSet,
  type ViewUpdate,
} from "@codemirror/view";
import { tags } from "@lezer/highlight";
import schemaJson from "../../../../schemas/scenario.schema.json";
import { scenarioDiagnostics, type EditorDiagnostic } from "../../model/editorDiagnostics.ts";
import { completeAt, hoverAt, type SchemaNode } from "../../model/editorSchema.ts";

const schema = schemaJson as unknown as SchemaNode;

/** How long typing must pause before the parser runs again. */
export const DIAGNOSTICS_DELAY_MS = 300;

/** What the editor asks of its host; read at the time of the call (the host's latest). */
export interface EditorHost {
  /** The file name errors name. */
  fileName(): string;
  onText(text: string): void;
  onProblems(problems: readonly EditorDiagnostic[]): void;
  save(as: boolean): void;
  run(): void;
}

const completionSource: CompletionSource = (context) => {
  const found = completeAt(schema, context.state.doc.toString(), context.pos);
  if (found === undefined) return null;
  // Keys are offered once a letter is typed (or on Ctrl-Space); values as soon as `key: ` is there.
  if (!context.explicit && found.from === context.pos && found.options[0]?.kind === "property") return null;
  return {
    from: found.from,
    to: found.to,
    validFor: /^[\w.-]*$/,
    options: found.options.map((o) => ({
      label: o.label,
      apply: o.apply,
      type: o.kind === "property" ? "property" : "enum",
      detail: o.detail,
      boost: o.boost,
      ...(o.info !== undefined && { info: o.info }),
    })),
  };
};

const schemaHover = hoverTooltip((view, pos) => {
  const hover = hoverAt(schema, view.state.doc.toString(), pos);
  if (hover === undefined) return null;
  return {
    pos: Math.min(hover.from, pos),
    end: Math.max(hover.to, pos),
    above: true,
    create: () => {
      const dom = document.createElement("div");
      dom.className = "cm-schema-hover";
      const title = dom.appendChild(document.createElement("div"));
      title.className = "cm-schema-hover-title";
      title.textContent = hover.title;
      const type = dom.appendChild(document.createElement("div"));
      type.className = "cm-schema-hover-type";
      type.textContent = `${hover.type}${hover.required ? " · required" : ""}`;
      if (hover.description !== undefined) {
        const text = dom.appendChild(document.createElement("p"));
        text.textContent = hover.description;
      }
      return { dom };
    },
  };
});

/** The parser's message, written after the end of the line it is about. */
class ProblemWidget extends WidgetType {
  readonly problem: EditorDiagnostic;
  readonly more: number;
  constructor(problem: EditorDiagnostic, more: number) {
    super();
    this.problem = problem;
    this.more = more;
  }
  override eq(other: ProblemWidget): boolean {
    return other.problem.text === this.problem.text && other.more === this.more;
  }
  toDOM(): HTMLElement {
    const span = document.createElement("span");
    span.className = "cm-inline-problem";
    span.dataset["line"] = String(this.problem.line);
    span.textContent = `${this.problem.field}: ${this.problem.message}${this.more > 0 ? ` (+${this.more} more)` : ""}`;
    return span;
  }
  override ignoreEvent(): boolean {
    return false;
  }
}

const setInlineProblems = StateEffect.define<readonly EditorDiagnostic[]>();

const inlineProblems = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(decorations, tr) {
    let next = decorations.map(tr.changes);
    for (const effect of tr.effects) {
      if (!effect.is(setInlineProblems)) continue;
      const byLine = new Map<number, EditorDiagnostic[]>();
      for (const p of effect.value) byLine.set(p.line, [...(byLine.get(p.line) ?? []), p]);
      const ranges = [...byLine.values()].flatMap((ps) => {
        const first = ps[0];
        if (first === undefined || first.from > tr.state.doc.length) return [];
        const end = tr.state.doc.lineAt(first.from).to;
        return [Decoration.widget({ widget: new ProblemWidget(first, ps.length - 1), side: 1 }).range(end)];
      });
      next = Decoration.set(ranges, true);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

const toLint = (p: EditorDiagnostic): Diagnostic => ({
  from: p.from,
  to: p.to,
  severity: "error",
  source: `${p.line}:${p.column}`,
  message: `${p.field}: ${p.message}`,
});

/** Runs the parser when typing pauses, and once at the start. */
function diagnostics(host: EditorHost): Extension {
  return ViewPlugin.fromClass(
    class {
      timer: ReturnType<typeof setTimeout> | undefined;
      readonly view: EditorView;
      constructor(view: EditorView) {
        this.view = view;
        this.schedule(0);
      }
      update(update: ViewUpdate) {
        if (update.docChanged) {
          host.onText(update.state.doc.toString());
          this.schedule(DIAGNOSTICS_DELAY_MS);
        }
      }
      schedule(delay: number) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.check(), delay);
      }
      check() {
        const problems = scenarioDiagnostics(this.view.state.doc.toString(), host.fileName());
        const lint = setDiagnostics(this.view.state, problems.map(toLint));
        this.view.dispatch({ ...lint, effects: [...[lint.effects ?? []].flat(), setInlineProblems.of(problems)] });
        host.onProblems(problems);
      }
      destroy() {
        clearTimeout(this.timer);
      }
    },
  );
}

/** Colours from the app's palette (App.css), so light and dark both read. */
const highlight = HighlightStyle.define([
  { tag: tags.definition(tags.propertyName), color: "var(--cm-key)" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--cm-string)" },
  { tag: tags.content, color: "var(--cm-value)" },
  { tag: tags.lineComment, color: "var(--muted)", fontStyle: "italic" },
  { tag: [tags.meta, tags.keyword], color: "var(--cm-meta)" },
  { tag: [tags.separator, tags.punctuation, tags.squareBracket, tags.brace], color: "var(--muted)" },
  { tag: [tags.labelName, tags.typeName], color: "var(--cm-meta)" },
]);

/** The editor's state for `text`. */
export function editorState(text: string, host: EditorHost): EditorState {
  return EditorState.create({
    doc: text,
    extensions: [
      Prec.highest(
        keymap.of([
          { key: "Mod-s", preventDefault: true, run: () => (host.save(false), true) },
          { key: "Mod-Shift-s", preventDefault: true, run: () => (host.save(true), true) },
          { key: "Mod-Enter", preventDefault: true, run: () => (host.run(), true) },
        ]),
      ),
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightSpecialChars(),
      history(),
      drawSelection(),
      indentOnInput(),
      bracketMatching(),
      closeBrackets(),
      highlightActiveLine(),
      EditorState.tabSize.of(2),
      indentUnit.of("  "),
      yaml(),
      syntaxHighlighting(highlight),
      autocompletion({ override: [completionSource], activateOnTyping: true }),
      schemaHover,
      lintGutter(),
      inlineProblems,
      diagnostics(host),
      keymap.of([
        ...closeBracketsKeymap,
        ...defaultKeymap,
        ...historyKeymap,
        ...completionKeymap,
        ...lintKeymap,
        indentWithTab,
      ]),
      // The text is one tab stop (tabindex says so to checkers that do not count contenteditable).
      EditorView.contentAttributes.of({ "aria-label": "Scenario text (YAML)", tabindex: "0" }),
      EditorView.lineWrapping,
    ],
  });
}
