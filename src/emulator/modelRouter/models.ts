/**
 * The fake models behind `POST /v1/models/{provider}/{model}[/{variant}]` (Model router API,
 * POST /v1/models/{provider}/{model}, and its Idempotency-Key) and the generations they run:
 * - `emulator/echo`: the output is the input's bytes, unchanged (byte-faithful: big integers, key order, escapes);
 * - `emulator/solid-png`: `{color: '#RRGGBB', width?, height?}` → `{created, data: [{b64_json, mime_type, width,
 *   height}]}`, a PNG of that colour in base64 (the engine's PNG code);
 * - `emulator/slow`: finishes after `slowMs`, longer than the router's deadline `deadlineMs`: the call answers 504
 *   `deadline_exceeded` with `Retry-After`, and a retry with the SAME Idempotency-Key collects the generation once
 *   finished (a different key or none starts a new one); variant `emulator/slow/no-retry` answers the 504 without
 *   Retry-After (the generation still runs and the same key still collects it);
 * - `emulator/strict`: validates its input against its schema (validate.ts), 422 with one field error each;
 * - every other catalog model answers like echo.
 * An Idempotency-Key (1 to 255 characters) is kept 24 hours per router key with the request it came with: the
 * same key with the same model and body answers that generation's outcome; with another request, 400 `invalid_input`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { solidImage } from '../engine/image';
import { encodePng } from '../engine/png';
import { RouterError, ValidationFailure } from './buckets';
import { EMULATOR_PROVIDER } from './catalog';
import { modelSchema } from './schemas';
import { validate } from './validate';

/** How long an Idempotency-Key is kept, in ms: 24 hours (not shown in Model router API; public sources). */
const ROUTER_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** A finished generation: the native output's bytes, or a refusal. */
export type Outcome = { kind: 'output'; text: string } | { kind: 'error'; error: RouterError | ValidationFailure };

interface Generation {
  readonly model: string;
  readonly bodyHash: string;
  readonly at: number;
  readonly done: Promise<Outcome>;
  settled: Outcome | undefined;
}

/** Timing of the router: its own connection deadline and the slow model's duration, both in ms. */
interface InvokerTiming {
  deadlineMs: number;
  slowMs: number;
  /** Seconds in the 504's Retry-After. */
  retryAfterSeconds: number;
}

/** Runs the fake models, holds generations by Idempotency-Key. */
export class Invoker {
  private readonly generations = new Map<string, Generation>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** Generations started, for the `generation` counter of the slow model's output. */
  private started = 0;

  constructor(
    private readonly timing: InvokerTiming,
    private readonly now: () => number,
  ) {}

  /**
   * Runs model `provider/model[/variant]` on `body` (the request's bytes) for `owner`, or collects the generation
   * of `key`.
   * @returns the outcome, or `deadline` when the router's deadline passed first (the generation goes on).
   * @throws RouterError `invalid_input` for a body that is not JSON, a key outside 1..255 characters, or a key
   *   reused with another request.
   */
  async invoke(
    owner: string,
    provider: string,
    model: string,
    variant: string | undefined,
    body: Buffer,
    key: string | undefined,
  ): Promise<Outcome | 'deadline'> {
    const text = body.toString('utf8');
    let input: unknown;
    try {
      if (text.trim() === '') throw new Error('the body is empty');
      input = JSON.parse(text);
    } catch (e) {
      throw new RouterError(
        'invalid_input',
        `the request body must be the model's JSON input: ${(e as Error).message}`,
      );
    }
    if (key !== undefined && (key.length < 1 || key.length > 255))
      throw new RouterError('invalid_input', `an Idempotency-Key has 1 to 255 characters; got ${key.length}`);
    const id = [provider, model, variant].filter((s) => s !== undefined).join('/');
    const bodyHash = createHash('sha256').update(body).digest('hex');
    const slot = key === undefined ? undefined : `${owner}\n${key}`;
    let generation = slot === undefined ? undefined : this.generations.get(slot);
    if (generation !== undefined && this.now() - generation.at >= ROUTER_KEY_TTL_MS) {
      this.generations.delete(slot!);
      generation = undefined;
    }
    if (generation !== undefined && (generation.model !== id || generation.bodyHash !== bodyHash)) {
      throw new RouterError(
        'invalid_input',
        `this Idempotency-Key was used for another request (${generation.model}); send the same model and body to collect it, or use a new key`,
      );
    }
    if (generation === undefined) {
      generation = {
        model: id,
        bodyHash,
        at: this.now(),
        done: this.run(provider, model, text, input),
        settled: undefined,
      };
      const g = generation;
      void g.done.then((o) => (g.settled = o));
      if (slot !== undefined) this.generations.set(slot, g);
    }
    if (generation.settled !== undefined) return generation.settled;
    return Promise.race([generation.done, this.wait(this.timing.deadlineMs).then(() => 'deadline' as const)]);
  }

  /** Forgets expired keys. */
  sweep(): void {
    for (const [slot, g] of this.generations) if (this.now() - g.at >= ROUTER_KEY_TTL_MS) this.generations.delete(slot);
  }

  /** Cancels the timers (pending waits never settle; their connections are closed by the server). */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private async run(provider: string, model: string, text: string, input: unknown): Promise<Outcome> {
    if (provider !== EMULATOR_PROVIDER || model === 'echo') return { kind: 'output', text };
    const schema = modelSchema(provider, model);
    const errors = validate(input, { $ref: `#/components/schemas/${schema.root}` }, schema.components);
    if (errors.length > 0) return { kind: 'error', error: new ValidationFailure(errors) };
    const fields = input as Record<string, unknown>;
    if (model === 'solid-png') {
      const width = (fields.width as number | undefined) ?? 64;
      const height = (fields.height as number | undefined) ?? 64;
      const png = encodePng(solidImage(width, height, parseInt((fields.color as string).slice(1), 16)));
      const output = {
        created: Math.floor(this.now() / 1000),
        data: [{ b64_json: png.toString('base64'), mime_type: 'image/png', width, height }],
      };
      return { kind: 'output', text: JSON.stringify(output) };
    }
    if (model === 'slow') {
      const generation = ++this.started;
      const startedAt = new Date(this.now()).toISOString();
      await this.wait(this.timing.slowMs);
      return { kind: 'output', text: JSON.stringify({ id: randomUUID(), generation, started_at: startedAt, input }) };
    }
    // strict: valid input, a small native output.
    return {
      kind: 'output',
      text: JSON.stringify({ id: randomUUID(), status: 'succeeded', prompt: fields.prompt, steps: fields.steps }),
    };
  }
}
