/**
 * What a batch left on the server, read through the emulator's listing and each job's workflow: the jobs of each
 * `color` of an `EmptyImage` node `"1"` (the value a batch test varies), so a test can say which colors ran twice and
 * which never ran (Job and Asset API v2, POST /api/v2/jobs, rule 3: one job per submission).
 */

/** The jobs per color, the colors run more than once (`"<color> (<n> jobs)"`) and the colors 1..count never run. */
export interface JobsByColor {
  total: number;
  /** The job ids of each color. */
  byColor: Map<number, string[]>;
  twice: string[];
  never: number[];
}

/**
 * Reads every job (`GET /api/v2/jobs?limit=1000`) and its workflow with `get` (a GET of a path, answering its JSON).
 * @param count the colors expected, 1..count.
 */
export async function jobsByColor(get: (path: string) => Promise<unknown>, count: number): Promise<JobsByColor> {
  const { jobs } = (await get('/api/v2/jobs?limit=1000')) as { jobs: { id: string }[] };
  const byColor = new Map<number, string[]>();
  for (const j of jobs) {
    const { workflow } = (await get(`/api/v2/jobs/${j.id}/workflow`)) as {
      workflow: Record<string, { inputs: { color: number } }>;
    };
    const color = workflow['1']!.inputs.color;
    byColor.set(color, [...(byColor.get(color) ?? []), j.id]);
  }
  return {
    total: jobs.length,
    byColor,
    twice: [...byColor].filter(([, ids]) => ids.length > 1).map(([c, ids]) => `${c} (${ids.length} jobs)`),
    never: Array.from({ length: count }, (_, i) => i + 1).filter((c) => !byColor.has(c)),
  };
}
