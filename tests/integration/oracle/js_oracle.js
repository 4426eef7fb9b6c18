// The JavaScript oracle of tests/integration/test_infer_oracle.py: acorn (Debian's node-acorn) parses each
// source and reports its top-level functions as fnbox's scanner defines them (javascript_infer.c): function
// declarations (async, generators), exported ones, and `const|let|var NAME =` function or arrow expressions.
//
// stdin:  {"sources": [code, ...], "exprs": [text, ...]}
// stdout: {"acorn": version, "sources": [[{name, async, params: [{name, kind, default, keys}]}] | {error}],
//          "exprs": [ast | {error}]}
// A default is its expression's AST without positions; "exprs" are the scanner's default texts, parsed
// the same way, so the test compares meaning, not spelling.
'use strict';

function loadAcorn() {
  for (const where of ['acorn', '/usr/share/nodejs/acorn']) {     // nodesource's node does not look there
    try {
      return require(where);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  process.stderr.write('js_oracle: acorn not found (Debian: apt-get install node-acorn)\n');
  process.exit(3);
}
const acorn = loadAcorn();
const OPTIONS = {ecmaVersion: 'latest', allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true,
                 allowHashBang: true};

function strip(node) {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const k of Object.keys(node).sort()) {
    if (k === 'start' || k === 'end' || k === 'loc' || k === 'range') continue;
    out[k] = typeof node[k] === 'bigint' ? String(node[k]) : strip(node[k]);
  }
  return out;
}

function parseProgram(code) {
  try {
    return acorn.parse(code, {...OPTIONS, sourceType: 'script'});
  } catch (e) {
    return acorn.parse(code, {...OPTIONS, sourceType: 'module'});   // import/export
  }
}

function patternKeys(pattern) {
  const keys = [];
  for (const prop of pattern.properties) {
    if (prop.type !== 'Property' || prop.computed) continue;       // `...rest`, `[expr]`: no key
    const k = prop.key;
    if (k.type === 'Identifier') keys.push(k.name);
    else if (k.type === 'Literal') keys.push(typeof k.value === 'string' ? k.value : k.raw);
  }
  return keys;
}

function param(node, index) {
  let dflt = null;
  if (node.type === 'AssignmentPattern') {
    dflt = strip(node.right);
    node = node.left;
  }
  let kind = 'positional';
  if (node.type === 'RestElement') {
    kind = 'var_positional';
    node = node.argument;
  }
  if (node.type === 'Identifier') return {name: node.name, kind, default: dflt, keys: null};
  const keys = node.type === 'ObjectPattern' ? patternKeys(node) : null;
  return {name: '$' + index, kind: kind === 'positional' ? 'destructured' : kind, default: dflt, keys};
}

function fn(name, f) {
  return {name, async: !!f.async, params: f.params.map(param)};
}

function topLevel(program) {
  const out = [];
  const visit = (stmt) => {
    if (stmt.type === 'FunctionDeclaration' && stmt.id) {
      out.push(fn(stmt.id.name, stmt));
    } else if (stmt.type === 'VariableDeclaration') {
      for (const d of stmt.declarations) {
        if (d.id.type === 'Identifier' && d.init &&
            (d.init.type === 'FunctionExpression' || d.init.type === 'ArrowFunctionExpression')) {
          out.push(fn(d.id.name, d.init));
        }
      }
    } else if ((stmt.type === 'ExportNamedDeclaration' || stmt.type === 'ExportDefaultDeclaration') &&
               stmt.declaration) {
      visit(stmt.declaration);
    }
  };
  program.body.forEach(visit);
  return out;
}

// One expression, the whole text: in parentheses, as a statement of its own (an object literal stays one).
function parseExpr(text) {
  const body = acorn.parse('(' + text + '\n);', {...OPTIONS, sourceType: 'script'}).body;
  if (body.length !== 1 || body[0].type !== 'ExpressionStatement') throw new Error('not one expression');
  return strip(body[0].expression);
}

function guard(f) {
  try {
    return f();
  } catch (e) {
    return {error: String(e.message)};
  }
}

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({
  acorn: acorn.version,
  sources: input.sources.map((code) => guard(() => topLevel(parseProgram(code)))),
  exprs: input.exprs.map((text) => guard(() => parseExpr(text))),
}));
