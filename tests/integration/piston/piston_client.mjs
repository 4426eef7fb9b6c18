// Drives `fnbox serve`'s Piston API with the npm piston-client, unchanged (tests/integration/test_serve_piston.py
// runs it):
//
//   PISTON_URL=http://127.0.0.1:PORT node piston_client.mjs < jobs.json
//
// jobs.json is a JSON array; each entry is what one client.execute() takes: {language, code, config?} calls
// execute(language, code, config), {config} calls execute(config). It prints ONE JSON object on stdout:
// {"runtimes": [...], "results": [...each execute's answer]}. The client posts its JSON with node-fetch's
// default Content-Type for a string body, text/plain;charset=UTF-8, and catches its own errors into
// {success: false, error}; the Python side judges.
import { readFileSync } from 'node:fs';
import piston from 'piston-client';

const client = piston({ server: process.env.PISTON_URL });
const jobs = JSON.parse(readFileSync(0, 'utf8'));
const runtimes = await client.runtimes();
const results = [];
for (const job of jobs) {
  const r = job.config && job.code === undefined
    ? await client.execute(job.config)
    : await client.execute(job.language, job.code, job.config || {});
  results.push(r && r.error instanceof Error ? { success: false, error: String(r.error) } : r);
}
process.stdout.write(JSON.stringify({ runtimes, results }) + '\n');
