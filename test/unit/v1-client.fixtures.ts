/**
 * Shared by the v1-client-*.test.ts suites (the deprecated v1 client against hostile loopback servers): the API key,
 * a small workflow, and the multipart form a request carried, parsed by the platform's own parser.
 */

export const KEY = 'v1-secret-key';
export const WORKFLOW = {
  '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 16711680 } },
  '3': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'fixture' } },
};

/** The multipart form a request carried, parsed by the platform's own parser. */
export async function formOf(req: import('node:http').IncomingMessage, body: Buffer): Promise<FormData> {
  return new Response(body, { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
}
