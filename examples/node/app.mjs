// The Node client as a drop-in for @isdk/sandbox-executor: a call, a call with files, and an error.
// Set up:  npm install /path/to/fnbox/clients/node   (in your app), then:  FNBOX_BIN=/path/to/fnbox node app.mjs
// With FNBOX_URL set it talks to that `fnbox serve` instead of running the binary.
import { createExecutor } from 'fnbox';

const executor = createExecutor(process.env.FNBOX_URL ? { baseUrl: process.env.FNBOX_URL } : {});

const greet = await executor.execute({
  language: 'python',
  code: 'def greet(name, greeting="Hello"):\n    return f"{greeting}, {name}!"\n',
  functionName: 'greet',
  args: ['World'],
  kwargs: { greeting: 'Hi' },
});
console.log('greet:', greet.status, greet.result);

// A function that reads a file given with the request and writes one: the result lists what it created.
const files = await executor.execute({
  language: 'javascript',
  code: `const fs = require('fs');
function count(path) {
  const n = fs.readFileSync(path, 'utf8').split('\\n').filter(Boolean).length;
  fs.writeFileSync('count.txt', String(n));
  return n;
}`,
  args: ['in.txt'],
  files: { 'in.txt': 'a\nb\nc\n' },
});
console.log('count:', files.result, files.files.created.map((f) => f.path));

// The function's own exception comes back with its type; the promise resolves.
const failed = await executor.execute({ language: 'ruby', code: 'def f(x) = 1 / x', args: [0] });
console.log('error:', failed.status, failed.error.type);
executor.close?.();
