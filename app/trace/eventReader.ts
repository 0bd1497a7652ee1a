/**
 * Reading recorded events by the catalogue (events.ts): a consumer narrows an
 * event by its name and reads its data typed, as the catalogue defines it.
 *
 * A trace comes from a file or a live run, so its data is whatever it holds:
 * {@link dataOf} keeps each field the catalogue lists only when its value has
 * the catalogue's type (a field of another type reads as absent, as the
 * readers' own `typeof` checks did), and every field may be absent (an older
 * trace, an optional field). The checks are compiled once from the
 * catalogue's JSON Schema; an event whose fields all fit is read as it is,
 * without a copy.
 */
import { eventDataSchema } from "./eventData.ts";
import { isTraceEventName, traceEvents, type EventData, type TraceEventName } from "./events.ts";

/** An event as it comes: any name, any data. */
interface AnyEvent {
  readonly name: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** An event's data as read: the catalogue's fields for its name, each present only when its value fits. */
export type ReadData<N extends TraceEventName> = { readonly [K in keyof EventData<N>]?: EventData<N>[K] };

/** `E` narrowed to the event named `N`, its data read as the catalogue says. */
export type EventNamed<E extends AnyEvent, N extends TraceEventName> = Omit<E, "name" | "data"> & {
  readonly name: N;
  readonly data: ReadData<N>;
};

/** `E` as one of the catalogue's events, narrowed by a `switch` on its name. */
export type KnownEvent<E extends AnyEvent> = { [N in TraceEventName]: EventNamed<E, N> }[TraceEventName];

type Check = (value: unknown) => boolean;
interface Schema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly Schema[];
  readonly items?: Schema;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: Schema;
  readonly minimum?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The check of a value against one JSON Schema, as the catalogue's schemas use it. */
function checkOf(schema: Schema): Check {
  const { enum: values, anyOf } = schema;
  if (values !== undefined) return (v) => values.includes(v);
  if (anyOf !== undefined) {
    const checks = anyOf.map(checkOf);
    return (v) => checks.some((c) => c(v));
  }
  const types = schema.type === undefined ? [] : typeof schema.type === "string" ? [schema.type] : schema.type;
  if (types.length === 0) return () => true;
  const checks = types.map((type) => typeCheck(type, schema));
  return checks.length === 1 ? (checks[0] ?? (() => true)) : (v) => checks.some((c) => c(v));
}

function typeCheck(type: string, schema: Schema): Check {
  switch (type) {
    case "string":
      return (v) => typeof v === "string";
    case "number":
      return (v) => typeof v === "number" && Number.isFinite(v);
    case "integer": {
      const min = schema.minimum ?? Number.NEGATIVE_INFINITY;
      return (v) => Number.isInteger(v) && (v as number) >= min;
    }
    case "boolean":
      return (v) => typeof v === "boolean";
    case "null":
      return (v) => v === null;
    case "array": {
      const item = schema.items === undefined ? undefined : checkOf(schema.items);
      return (v) => Array.isArray(v) && (item === undefined || v.every(item));
    }
    case "object": {
      const fields = Object.entries(schema.properties ?? {}).map(([k, s]) => [k, checkOf(s)] as const);
      const required = schema.required ?? [];
      const rest = schema.additionalProperties === undefined ? undefined : checkOf(schema.additionalProperties);
      return (v) => {
        if (!isObject(v)) return false;
        for (let i = 0; i < required.length; i++) if (!Object.hasOwn(v, required[i] as string)) return false;
        for (let i = 0; i < fields.length; i++) {
          const field = fields[i] as readonly [string, Check];
          if (v[field[0]] !== undefined && !field[1](v[field[0]])) return false;
        }
        if (rest !== undefined) for (const k in v) if (!rest(v[k])) return false;
        return true;
      };
    }
    default:
      return () => true;
  }
}

/**
 * Per event name: each field the catalogue lists, with its check, compiled when an event of that name is first
 * read. One name at a time: a JSON Schema of every name of the catalogue cost a short run's fresh process more
 * than its reading (decision 0295), and a run reads events of a few names.
 */
const fieldChecks = new Map<string, readonly (readonly [string, Check])[]>();

function checksOf(name: string): readonly (readonly [string, Check])[] | undefined {
  let checks = fieldChecks.get(name);
  if (checks === undefined && isTraceEventName(name)) {
    const schema = eventDataSchema(traceEvents[name]) as Schema;
    checks = Object.entries(schema.properties ?? {}).map(([field, s]) => [field, checkOf(s)] as const);
    fieldChecks.set(name, checks);
  }
  return checks;
}

/** `data` with only the fields that fit their checks (itself when all do). */
function fitting(data: Readonly<Record<string, unknown>>, checks: readonly (readonly [string, Check])[]) {
  let out: Record<string, unknown> | undefined;
  // An index loop without destructuring: `for (const [field, c] of checks)` ran the array iterator protocol for
  // every field of every event read, ~1 KB of iterator objects an event, the most of what the invariants and the
  // explorer's run properties allocated (decision 0205).
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i] as readonly [string, Check];
    const value = data[check[0]];
    if (value === undefined || check[1](value)) continue;
    out ??= { ...data };
    delete out[check[0]];
  }
  return out ?? data;
}

/** Whether `event` is named `name` (a name of the catalogue: a misspelt one does not compile). */
export function isEvent<E extends AnyEvent, N extends TraceEventName>(event: E, name: N): event is E & { name: N } {
  return event.name === name;
}

/** The data of `event` read as the catalogue's `name` says, or undefined when `event` has another name. */
export function dataOf<N extends TraceEventName>(event: AnyEvent, name: N): ReadData<N> | undefined {
  return event.name === name ? (readData(event) as ReadData<N>) : undefined;
}

/** `data`, its fields of the catalogue kept only where they fit (every field of an unknown name kept). */
function readData(event: AnyEvent): Readonly<Record<string, unknown>> {
  const data = isObject(event.data) ? event.data : {};
  const checks = checksOf(event.name);
  return checks === undefined ? data : fitting(data, checks);
}

/**
 * `event` as one of the catalogue's events, for a `switch` on its name that narrows its data; undefined for a
 * name the catalogue does not have. The same object when its data fits, else a copy without the fields that
 * do not.
 */
export function readEvent<E extends AnyEvent>(event: E): KnownEvent<E> | undefined {
  if (!isTraceEventName(event.name)) return undefined;
  const data = readData(event);
  return (data === event.data ? event : { ...event, data }) as unknown as KnownEvent<E>;
}
