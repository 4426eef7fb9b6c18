#!/usr/bin/env node
// The oracle of tests/unit/fs/test_glob_oracle.c: generates a deterministic table of glob patterns x paths
// and prints minimatch's answer for each, one JSON object per line, for the C test to compare fs/glob.c
// against. minimatch is the version package.json pins, installed next to this file
// (`npm ci --prefix tests/oracle/glob`, done by scripts/install-deps.sh).
//
// Output: a header line {"minimatch": VERSION, "node": VERSION, "rows": N}, then N lines, one object each:
//   c: category; p: pattern; s: path;
//   m: minimatch(s, p, {dot: true, noext: true}), what fnbox emulates (fs/glob.h);
//   x: the same with extglobs on (minimatch's default), for the check that fnbox's rule parser refuses
//      every pattern whose meaning extglobs would change;
//   xa: only where it differs from x: the answer with extglobs on when each brace alternative is tested
//      on its own, as minimatch documents (with extglobs on it merges the alternatives into one
//      `@(a|b)`, which changes what a class such as `[]?a|[]?b` spans);
//   w: only where the pattern (after its '!'s) or the path starts with "./": the answer glob.h promises
//      where fnbox differs from minimatch on purpose (a leading "./" dropped from both), see below.
// Exit 3 (with a message on stderr) if minimatch cannot be loaded.
'use strict';

let mm;
try {
    mm = require('minimatch');
} catch (e) {
    process.stderr.write(`glob oracle: cannot load minimatch (${e.code || e.message}); ` +
        'run `npm ci --prefix tests/oracle/glob` (scripts/install-deps.sh does)\n');
    process.exitCode = 3;
    return;
}
const mmVersion = require('minimatch/package.json').version;

const optsNoext = { dot: true, noext: true };
const optsExt = { dot: true };

// mulberry32: a small seeded generator, so every run prints the same table. For exploring by hand,
// GLOB_ORACLE_SEED (a number) and GLOB_ORACLE_SCALE (generated patterns per kind, x70) change it; the test
// runs the default.
let seed = Number(process.env.GLOB_ORACLE_SEED || 0x5eed1234) | 0;
const SCALE = Math.max(1, Number(process.env.GLOB_ORACLE_SCALE || 1) | 0);
function rand() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
const chance = (p) => rand() < p;

// ---- paths every pattern is also tried against ----
const POOL = [
    '', 'a', 'b', 'c', 'ab', 'abc', 'A', 'x', 'xa', 'ax', 'x.txt', 'file.txt', 'file1.txt', 'fileA.txt',
    '.a', '.hidden', '.txt', 'a.', '.', '..', '...', '.a.b', 'a.b', 'a.b.c', '-', '_', 'a-b', '1', '10', '01',
    'é', 'e', '😀', 'ü', 'Σ', 'σ', '٣', '—', '\u00a0', '€', 'Ⅳ', 'a b', ' ', '[a]', '{a,b}', '{a}', '*', '?',
    '!', '!a', '#a', '\\', 'a\\b', '(a)',
    'a/b', 'a/c', 'b/a', 'a/b/c', 'a/b/c/d', 'x/y/z', 'a/.b', '.a/b', 'a/.b/c', 'a/b/.c', 'a/x.txt',
    'src/a/b.ts', 'src/x.js', 'output/x', 'output', 'output/a/b', 'node_modules/x/y.js', '.git/config',
    'a/.', 'a/..', './a', '../a', 'a/./b', 'a/../b', 'a/', 'a/b/', 'a//b', 'a///b/', '/', '/a', '/a/b',
    '/data/a', '/data/output/x', '//a', '/.a', 'a/b/c/d/e/f',
];

// ---- pattern pieces ----
const NAMES = ['a', 'b', 'c', 'ab', 'abc', 'x', 'A', '.a', '.hidden', 'x.txt', 'file1.txt', 'é', '😀', '1', '10',
    'a-b', 'a.b', 'src', 'output', 'data', 'node_modules', '.git'];
const CHARS = ['a', 'b', 'c', 'x', 'A', '.', '-', '_', '1', 'é', '😀', ' ', ',', ']', '}', '!', '^', '+', '@',
    '(', ')', '|', '$', '#', '='];
const CLASSES = ['[abc]', '[a-c]', '[!a]', '[^a-c]', '[]a]', '[!]a]', '[a-]', '[-a]', '[a-c-e]', '[[:alpha:]]',
    '[[:digit:]x]', '[![:digit:]]', '[[:upper:]]', '[[:space:]]', '[[:punct:]]', '[[:xdigit:]]', '[[:word:]]',
    '[z-a]', '[z-ab]', '[.]', '[.a]', '[é]', '[^é]', '[\\]]', '[\\\\]', '[a\\-z]', '[*]', '[?]', '[[]', '[{]',
    '[a,b]', '[a', '[', '[]', '[!]', '[a-[:alpha:]]', '[[:alpha:]', '[😀]', '[a-é]', '[.-.]', '[x]', '[\\x]'];
const BRACES = ['{a,b}', '{a,b,c}', '{x,y/z}', '{,a}', '{a,}', '{a,,b}', '{a}', '{}', '{1..3}', '{a..c}',
    '{01..03}', '{3..1}', '{1..9..3}', '{a,{b,c}}', '{{a,b}}', '{*.txt,b}', '{a,b}{c,d}', '{a/b,c}', '{**,x}',
    '${a,b}', '{a},b}', '{a,b', 'a,b}', '{.a,b}', '{x..y}', '{-1..1}', '{a..C}', '{é,e}', '{,}'];
const ESCAPES = ['\\*', '\\?', '\\[', '\\]', '\\{', '\\}', '\\,', '\\!', '\\#', '\\\\', '\\a', '\\.', '\\/',
    '\\(', '\\é'];

// One segment's text, of the kind the category asks for.
function segment(kind) {
    const k = kind === 'random' ? pick(['name', 'star', 'question', 'class', 'escape', 'brace', 'globstar',
        'dots', 'mixed', 'mixed']) : kind;
    switch (k) {
    case 'name':
        return pick(NAMES);
    case 'star':
        return pick(['*', '*', 'a*', '*a', '*a*', 'a*c', '*.txt', '.*', '*.', '**a', 'a**', 'a**b', '*.*',
            'x*y*', '*?', '?*']);
    case 'question':
        return pick(['?', '??', '?a', 'a?', '.?', '?.txt', 'file?.txt', 'a?c', '???']);
    case 'class':
        return (chance(0.3) ? pick(CHARS) : '') + pick(CLASSES) + (chance(0.4) ? pick(['', '*', 'x', '?']) : '');
    case 'escape':
        return (chance(0.5) ? pick(NAMES) : '') + pick(ESCAPES) + (chance(0.5) ? pick(['', '*', 'b', '?']) : '');
    case 'brace':
        return (chance(0.4) ? pick(NAMES) : '') + pick(BRACES) + (chance(0.4) ? pick(['', '*', 'x', '.txt']) : '');
    case 'globstar':
        return chance(0.7) ? '**' : pick(['**', '*', 'a', '.a', '**.txt']);
    case 'dots':
        return pick(['.', '..', '.*', '.?', '.a', '*.', '.[a-z]*', '[.]*', '.**']);
    default: { // mixed: a few tokens of every kind
        let s = '';
        for (let i = 1 + int(3); i > 0; i--)
            s += pick([pick(CHARS), '*', '?', pick(CLASSES), pick(ESCAPES), pick(BRACES), pick(NAMES)]);
        return s;
    }
    }
}

// A pattern: 1-4 segments of the kind, sometimes negated, absolute, with a trailing or doubled slash.
function pattern(kind) {
    const n = 1 + int(kind === 'globstar' ? 4 : 3);
    let p = '';
    for (let i = 0; i < n; i++) {
        if (i > 0)
            p += chance(0.07) ? '//' : '/';
        p += segment((kind === 'globstar' && i % 2 === 1) || kind === 'negation' ? 'random' : kind);
    }
    if (chance(0.1))
        p = '/' + p;
    if (chance(0.06))
        p += '/';
    if (kind === 'negation' || chance(0.04))
        p = '!'.repeat(1 + int(kind === 'negation' ? 3 : 1)) + p;
    return p;
}

// A path the pattern may well match: one brace alternative, each wildcard replaced by something.
const FILL = ['a', 'b', 'x', '.', 'A', '1', 'é', '-', ']', 'z', 'Σ', '٣'];
function instantiate(p) {
    p = p.replace(/^!+/, '');
    let alts;
    try {
        alts = mm.braceExpand(p);
    } catch {
        alts = [p];
    }
    const alt = alts.length ? pick(alts) : p;
    const out = [];
    for (const seg of alt.split('/')) {
        if (seg === '**') {
            for (let i = int(3); i > 0; i--)
                out.push(pick(['a', 'b', '.x', 'dir']));
            continue;
        }
        let s = '';
        for (let i = 0; i < seg.length; i++) {
            const c = seg[i];
            if (c === '\\' && i + 1 < seg.length) {
                s += seg[++i];
            } else if (c === '*') {
                for (let j = int(3); j > 0; j--)
                    s += pick(FILL);
            } else if (c === '?') {
                s += pick(FILL);
            } else if (c === '[') {
                const e = seg.indexOf(']', i + 2);
                if (e < 0 || chance(0.2)) {
                    s += c;
                } else {
                    const body = seg.slice(i + 1, e).replace(/[\\!^\-[\]:]/g, '');
                    s += body.length && chance(0.7) ? [...body][int([...body].length)] : pick(FILL);
                    i = e;
                }
            } else {
                s += c;
            }
        }
        out.push(s);
    }
    return out.join('/');
}

// Neighbours of a path that often cross a rule's edge.
function mutate(s) {
    switch (int(8)) {
    case 0: return s + '/x';
    case 1: return s.includes('/') ? s.slice(0, s.lastIndexOf('/')) : s + 'x';
    case 2: return s + '/';
    case 3: return '.' + s;
    case 4: return s.toUpperCase();
    case 5: return s.replace(/\//, '//');
    case 6: return 'x/' + s;
    default: return [...s].slice(0, -1).join(''); // by code point: no lone surrogate
    }
}

// ---- the table ----
const rows = [];

function answer(p, s, opts) {
    return new mm.Minimatch(p, opts).match(s);
}

// A leading "./" (glob.h: dropped from the pattern and the path). fnbox drops it from each brace
// alternative, after the leading '!'s; the promise is minimatch's answer on what is left: any alternative
// matching the path without its "./". An alternative left empty is a row of one empty segment, as
// minimatch's own `a/..` is (matching "" and "/"), not minimatch's empty pattern (matching only "").
// brace-expansion unescapes `\.`, which fnbox keeps (`\./x` is no leading "./" there): it is hidden from
// the expansion behind a private-use character. An alternative is no comment and no negation any more.
const stripDotSlash = (s) => s.replace(/^(?:\.\/+)+/, '');
const unnegated = (p) => p.slice(p.match(/^!*/)[0].length);
const EMPTY_ROW = new mm.Minimatch('a/..', optsNoext);
const optsAlt = { ...optsNoext, nobrace: true, nocomment: true, nonegate: true };
function promiseDotSlash(p, s) {
    const negate = (p.length - unnegated(p).length) % 2 === 1;
    const path = stripDotSlash(s);
    const hidden = unnegated(p).replace(/\\([^])/gu, (m, c) => (c === '.' ? '\uE000' : m));
    const hit = mm.braceExpand(hidden).some((x) => {
        const alt = x.replace(/\uE000/g, '\\.');
        const a = stripDotSlash(alt);
        return a === '' && alt !== '' ? EMPTY_ROW.match(path) : answer(a, path, optsAlt);
    });
    return hit !== negate;
}

// Extglobs on, each brace alternative tested alone (minimatch's own expansion, negation and comment).
const optsExtAlt = { ...optsExt, nobrace: true, nocomment: true, nonegate: true };
function extPerAlternative(p, s) {
    if (p.startsWith('#'))
        return false;
    const negate = (p.length - unnegated(p).length) % 2 === 1;
    return mm.braceExpand(unnegated(p)).some((alt) => answer(alt, s, optsExtAlt)) !== negate;
}

function add(cat, p, paths) {
    const seen = new Set();
    for (const s of paths) {
        if (seen.has(s))
            continue;
        seen.add(s);
        const row = { c: cat, p, s, m: answer(p, s, optsNoext), x: answer(p, s, optsExt) };
        const xa = extPerAlternative(p, s);
        if (xa !== row.x)
            row.xa = xa;
        if (unnegated(p).startsWith('./') || s.startsWith('./'))
            row.w = promiseDotSlash(p, s);
        rows.push(row);
    }
}

// The paths one pattern is tried against: instantiations, their neighbours, and part of the pool.
function pathsFor(p) {
    const paths = [];
    for (let i = 0; i < 5; i++) {
        const s = instantiate(p);
        paths.push(s, mutate(s));
    }
    for (let i = 0; i < 12; i++)
        paths.push(pick(POOL));
    return paths;
}

// Patterns glob.h and the seed README document, each against the whole pool.
const DOCUMENTED = [
    '*', '**', '?', '*.txt', 'src/**/*.ts', 'file?.txt', 'file[123].txt', 'file[!0-9].txt', '*.{js,ts}',
    'output/**', 'output{,/**}', 'a/*', 'a/**/b', '**/x.txt', '**/.git/**', '.*', 'a/../b', 'a/./b', '!a',
    '!!a', '#a', '\\#a', '', 'a//b', 'a/', '/a/*', '/data/output/**', '**/node_modules/**', '[[:alpha:]]*',
    '{a},b}', 'x{,y}', '{a/b,c}', '{1..10}', '{01..03}', '{a..e}', '{1..9..2}', '${a,b}', 'a**b', 'a/**/',
    '**/*', '*/**', '**/..', '../*', '*/.', '[z-a]x', '[a-[:alpha:]]', '@(a|b)', '+(x)', '*(x)', '!(a)',
];
for (const p of DOCUMENTED)
    add('documented', p, POOL.concat(pathsFor(p)));

const KINDS = ['star', 'question', 'class', 'escape', 'brace', 'globstar', 'dots', 'negation', 'random',
    'random', 'random'];
for (const kind of KINDS) {
    for (let i = 0; i < 70 * SCALE; i++) {
        const p = pattern(kind);
        add(kind === 'random' ? 'mixed' : kind, p, pathsFor(p));
    }
}

// Extglob syntax: fnbox reads it literally (noext) and its rule parser refuses it; the C test checks
// that every pattern whose answer extglobs change is one fb_glob_has_extglob reports.
const EXTGLOB = ['@(a|b)', '+(a)', '*(a|b)', '?(a)', '!(a)', '!(a|b)c', 'x@(a|b)', '*.@(js|ts)', '\\@(a)',
    '@\\(a)', '@(a', 'a)', '@()', '+()', '!()', '@(a|b)/*', '**/+(x|y)', '{@(a),b}', '[@(]a)', 'a!(b)',
    '!!(a)', '!@(a)', '*(a)*', '?(a|)', '@(a/b)', '@(*)', '+([0-9])', '!(*.txt)', '@(a\\|b)', '@(a|b\\)',
    // never closed: `*(` and `?(` are literal text with extglobs on, a wildcard then '(' without
    '*(a', '?(a', 'x*(', '?(', '*(/a', '+(a', '@(a',
    // made by brace expansion, which comes first: `{a,*}(b)` is `a(b)` or `*(b)`
    '{a,*}(b)', '{a,?}(b|c)', '{**,x}(', 'x{*,y}(', '{!,a}(b)', '{a,b\\*}(c)',
    // no extglob, but minimatch merges the alternatives into `@([]?a|[]?b)` with extglobs on
    '[]?{a,b}', '*{a,b}[]'];
for (const p of EXTGLOB) {
    const paths = pathsFor(p).concat(['a', 'b', 'aa', 'c', 'ac', 'x.js', 'a.ts', '@(a|b)', '+(a)', '(a)',
        'xa', '', 'a|b', 'x.txt', '1', '12', '!(a)', 'a/b', 'x(a', '*(a', '?(a', 'bb', 'x(b)', '*(b)', 'x(',
        'a(b)', 'b(c)', 'x(/a', '[]xa', '[]bb', '1a[]', 'xb[]']);
    add('extglob', p, paths);
}

// A leading "./" in the pattern, the path or both.
const DOTSLASH = ['./a', './*', './a/*', './**', './/a', '././a', '!./a', './.a', './*.txt', './/*/b', './'];
for (const p of DOTSLASH)
    add('dotslash', p, ['a', './a', './/a', '././a', 'a/b', './a/b', '.a', './.a', 'x.txt', './x.txt', 'b',
        './b', 'c/b', './c/b', '', './', '.', './x/b']);
for (let i = 0; i < 25; i++) {
    const base = pattern(pick(['star', 'name', 'globstar', 'class']));
    const neg = base.match(/^!*/)[0];
    const p = neg + './' + base.slice(neg.length).replace(/^\/+/, '');
    const paths = pathsFor(p).concat(pathsFor(base).slice(0, 6).map((s) => './' + s));
    add('dotslash', p, paths);
}

// Beyond fnbox's caps (glob.h): minimatch matches, fnbox refuses to compile (and so matches nothing).
const CAPS = [
    ['{1..2000}', ['1500', '1', '2000']],
    ['{a,'.repeat(70) + 'b' + '}'.repeat(70), ['a', 'b']],
    ['{a,b}'.repeat(11), ['a'.repeat(11), 'ab'.repeat(5) + 'a']],
    ['a/'.repeat(300) + 'a', ['a/'.repeat(300) + 'a']],
    ['a'.repeat(5000), ['a'.repeat(5000)]],
    ['*'.repeat(4097), ['a']],
];
for (const [p, paths] of CAPS)
    add('caps', p, paths);

// Dense class syntax: runs of `[` that may or may not close, escaped and first-member `]`, ranges, POSIX
// names cut short. fs/glob.c remembers which scan states never close a class (a run of unclosed `[` was
// quadratic); these rows check that it closes exactly the classes minimatch closes. Last in the table, so
// the rows above stay as they were.
const BRACKETS = ['[', '[', '[', ']', ']', '\\', '\\]', '-', '!', '^', '[:alpha:]', '[:', ':]', 'a', 'b', 'é', '*', '?',
    '[]', '[!', 'a-', '-]'];
for (let i = 0; i < 120 * SCALE; i++) {
    let p = '';
    for (let k = 2 + int(14); k > 0; k--)
        p += pick(BRACKETS);
    const literal = p.replace(/\\(.)/g, '$1');
    add('brackets', p, pathsFor(p).concat([literal, literal + 'a', 'a' + literal, '[', '[[', '[a', ']', 'a]']));
}

let out = JSON.stringify({ minimatch: mmVersion, node: process.version, rows: rows.length }) + '\n';
for (const r of rows)
    out += JSON.stringify(r) + '\n';
process.stdout.write(out);
