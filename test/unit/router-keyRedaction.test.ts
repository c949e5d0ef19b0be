// The router key taught to the log Redactor (no secret in a log): the extension's learnSecrets over its
// SecretStorage (here a fake with the same shape). The CLI's side is in cli-models.test.ts.
import * as assert from 'node:assert/strict';
import { REDACTED, Redactor, learnSecrets, type SecretSource } from '../../src/core/util';

const PREFIX = 'comfyCloud.routerKey:';

class FakeSecrets implements SecretSource {
  readonly values = new Map<string, string>();
  private listeners: ((e: { key: string }) => unknown)[] = [];
  failing = false;
  get(key: string): Promise<string | undefined> {
    return this.failing ? Promise.reject(new Error('keychain locked')) : Promise.resolve(this.values.get(key));
  }
  onDidChange(listener: (e: { key: string }) => unknown): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }
  async store(key: string, value: string): Promise<void> {
    this.values.set(key, value);
    for (const l of this.listeners) l({ key });
    await Promise.resolve();
  }
}

describe('router key redaction', () => {
  it("rule: the configured router's key is learnt at once, so a log line echoing it is redacted before any change", async () => {
    const secrets = new FakeSecrets();
    secrets.values.set(`${PREFIX}https://router.example`, 'rk-live-0123456789');
    const redactor = new Redactor();
    const learnt = learnSecrets(secrets, redactor, PREFIX, () => ['https://router.example']);
    await learnt.ready;
    const line = redactor.clean(
      '[http] GET https://router.example/v1/models?k=rk-live-0123456789 → 403 "bad key rk-live-0123456789"',
    );
    assert.ok(!line.includes('rk-live-0123456789'), line);
    assert.equal(line.split(REDACTED).length - 1, 2);
    learnt.dispose();
  });

  it('rule: a router key stored or changed later is learnt from the change event; other secrets and disposal are respected', async () => {
    const secrets = new FakeSecrets();
    const redactor = new Redactor();
    const learnt = learnSecrets(secrets, redactor, PREFIX, () => []);
    await learnt.ready;
    assert.equal(redactor.size, 0);
    await secrets.store(`${PREFIX}http://127.0.0.1:9`, 'a-new-router-key-42');
    await new Promise((r) => setImmediate(r));
    assert.equal(redactor.clean('key a-new-router-key-42'), `key ${REDACTED}`);
    await secrets.store('other.extension:token', 'not-a-router-key-1');
    await new Promise((r) => setImmediate(r));
    assert.equal(redactor.size, 1, 'a secret outside the prefix is not read');
    learnt.dispose();
    await secrets.store(`${PREFIX}http://127.0.0.1:9`, 'after-dispose-key-77');
    await new Promise((r) => setImmediate(r));
    assert.equal(redactor.size, 1);
  });

  it('rule: relearn() reads the key of a newly configured router; an unreadable secret is ignored, never thrown', async () => {
    const secrets = new FakeSecrets();
    const redactor = new Redactor();
    let origins = ['https://a.example'];
    secrets.values.set(`${PREFIX}https://b.example`, 'key-of-router-b-999');
    const learnt = learnSecrets(secrets, redactor, PREFIX, () => origins);
    await learnt.ready;
    assert.equal(redactor.size, 0);
    origins = ['https://b.example'];
    await learnt.relearn();
    assert.equal(redactor.redact('key-of-router-b-999'), REDACTED);
    secrets.failing = true;
    await learnt.relearn();
    learnt.dispose();
  });
});
