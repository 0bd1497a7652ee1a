/**
 * The Explore view's exploration: lanes dealt over K Web Workers
 * (app/explore/webWorker.ts, one run at a time each), their runs batched into
 * the view's state once a frame, and the report built from every lane when
 * all are done — never on the page's thread while runs go on.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { buildReport, exploreHeader } from "../../../../app/explore/report.ts";
import { shardLanes, type ExploreConfig, type LaneResult, type RunReport } from "../../../../app/explore/search.ts";
import type { ExploreWorkerReply, ExploreWorkerRequest } from "../../../../app/explore/workerProtocol.ts";
import { pushAll } from "../../../../app/protocol/lists.ts";
import { addRuns, startState, withReport, type ExploreState } from "../../model/explore.ts";
import type { WorkerLike } from "../../session/port.ts";

/** A Web Worker of the exploration. */
export function createExploreWorker(): WorkerLike {
  return new Worker(new URL("../../../../app/explore/webWorker.ts", import.meta.url), {
    type: "module",
    name: "mailscope-explore",
  }) as unknown as WorkerLike;
}

/** What the view gets: the state, and start and stop. */
export interface ExploreControl {
  readonly state: ExploreState | undefined;
  /** When the exploration started (performance.now()), for the rate. */
  readonly startedAt: number;
  /** When it ended, else undefined. */
  readonly endedAt: number | undefined;
  readonly config: ExploreConfig | undefined;
  start(config: ExploreConfig, workers: number): void;
  stop(): void;
}

export function useExplore(createWorker: () => WorkerLike = createExploreWorker): ExploreControl {
  const [state, setState] = useState<ExploreState | undefined>();
  const [config, setConfig] = useState<ExploreConfig | undefined>();
  const [startedAt, setStartedAt] = useState(0);
  const [endedAt, setEndedAt] = useState<number | undefined>();
  const workers = useRef<WorkerLike[]>([]);
  const pending = useRef<RunReport[]>([]);
  const frame = useRef<number | undefined>(undefined);

  const flush = useCallback(() => {
    frame.current = undefined;
    const batch = pending.current;
    pending.current = [];
    setState((s) => (s === undefined ? s : addRuns(s, batch)));
  }, []);

  const end = useCallback(() => {
    for (const w of workers.current) w.terminate();
    workers.current = [];
    if (frame.current !== undefined) cancelAnimationFrame(frame.current);
    frame.current = undefined;
  }, []);

  useEffect(() => end, [end]);

  const start = useCallback(
    (next: ExploreConfig, count: number) => {
      end();
      pending.current = [];
      const lanes = shardLanes(next.options.lanes, { index: 1, count: 1 });
      const k = Math.max(1, Math.min(count, lanes.length));
      const results: LaneResult[] = [];
      let done = 0;
      setConfig(next);
      setState(startState(next.runs ?? 0));
      setStartedAt(performance.now());
      setEndedAt(undefined);
      for (let w = 0; w < k; w++) {
        const worker = createWorker();
        workers.current.push(worker);
        worker.addEventListener("message", (event) => {
          const reply = event.data as ExploreWorkerReply;
          if (reply.type === "run") {
            pending.current.push(reply.report);
            frame.current ??= requestAnimationFrame(flush);
          } else if (reply.type === "done") {
            pushAll(results, reply.results);
            done++;
            if (done < k) return;
            const batch = pending.current;
            pending.current = [];
            const report = buildReport(exploreHeader({ ...next, runs: next.runs }), results);
            setState((s) => (s === undefined ? s : withReport(addRuns(s, batch), report)));
            setEndedAt(performance.now());
            end();
          } else {
            setState((s) => (s === undefined ? s : { ...s, phase: "failed", error: reply.message }));
            setEndedAt(performance.now());
            end();
          }
        });
        worker.addEventListener("error", (event) => {
          setState((s) => (s === undefined ? s : { ...s, phase: "failed", error: event.message ?? "a worker failed" }));
          setEndedAt(performance.now());
          end();
        });
        const request: ExploreWorkerRequest = {
          type: "start",
          config: next,
          lanes: lanes.filter((_, i) => i % k === w),
        };
        worker.postMessage(request);
      }
    },
    [createWorker, end, flush],
  );

  const stop = useCallback(() => {
    for (const w of workers.current) w.postMessage({ type: "stop" } satisfies ExploreWorkerRequest);
    setState((s) => (s === undefined || s.phase !== "running" ? s : { ...s, phase: "stopping" }));
  }, []);

  return { state, startedAt, endedAt, config, start, stop };
}
