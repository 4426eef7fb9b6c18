<?php
// The PHP oracle of tests/integration/test_infer_oracle.py. Each source is included in a forked child (its
// functions cannot clash with another source's), then ReflectionFunction reports the functions it declared
// (what PHP itself defines when the code runs: top-level ones, and those in top-level blocks such as
// `if (!function_exists(...))` or `namespace X {...}`), in source order, with their parameters. PHP's own
// tokenizer (token_get_all) then finds each declaration's parameter list, so a default is the token list
// after its `=` (whitespace and comments left out). A code that does not start with `<?` is PHP from its
// first byte, as fnbox's harness runs it.
//
// stdin:  {"sources": [code, ...], "exprs": [text, ...]}
// stdout: {"php": version, "sources": [[{name, async, params: [{name, kind, default}]}] | {error}],
//          "exprs": [tokens | {error}]}
// "exprs" are the scanner's default texts, tokenized the same way.

const SKIP = [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT];
const OPEN = ['(', '[', '{', T_ATTRIBUTE, T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES];
const CLOSE = [')', ']', '}'];

function tokens(string $code): array
{
    $out = [];
    foreach (token_get_all($code) as $t) {
        [$id, $text, $line] = is_array($t) ? $t : [$t, $t, 0];
        if (!in_array($id, SKIP, true)) {
            $out[] = [$id, $text, $line];
        }
    }
    return $out;
}

function shape(array $toks): array
{
    return array_map(fn($t) => [is_int($t[0]) ? token_name($t[0]) : $t[0], $t[1]], $toks);
}

// The parameter segments of the list that opens at $toks[$i] ('('): [[tokens...], ...].
function param_segments(array $toks, int $i): array
{
    $segs = [[]];
    $depth = 0;
    for ($n = count($toks); $i < $n; $i++) {
        $id = $toks[$i][0];
        if (in_array($id, CLOSE, true) && --$depth === 0) {
            break;
        }
        if ($depth === 1 && $id === ',') {
            $segs[] = [];
        } elseif ($depth >= 1) {
            $segs[count($segs) - 1][] = $toks[$i];
        }
        if (in_array($id, OPEN, true)) {
            $depth++;
        }
    }
    return array_values(array_filter($segs, fn($s) => $s !== []));
}

// name => default tokens (null: no `=`), read from one parameter's tokens at its own level.
function split_param(array $seg): array
{
    $depth = 0;
    $name = null;
    foreach ($seg as $k => $t) {
        if ($depth === 0 && $t[0] === T_VARIABLE && $name === null) {
            $name = substr($t[1], 1);
        } elseif ($depth === 0 && $t[0] === '=' && $name !== null) {
            return [$name, shape(array_slice($seg, $k + 1))];
        }
        if (in_array($t[0], OPEN, true)) {
            $depth++;
        } elseif (in_array($t[0], CLOSE, true)) {
            $depth--;
        }
    }
    return [$name, null];
}

function declared(string $code): array
{
    $file = tempnam(sys_get_temp_dir(), 'php-oracle-');
    file_put_contents($file, $code);
    ob_start();
    try {
        include $file;
    } catch (Throwable $e) {
        return ['error' => get_class($e) . ': ' . $e->getMessage()];
    } finally {
        ob_end_clean();
        unlink($file);
    }
    $toks = tokens($code);
    $funcs = [];
    foreach (get_defined_functions()['user'] as $lc) {
        $r = new ReflectionFunction($lc);
        if ($r->getFileName() !== $file) {
            continue;                                   // the oracle's own functions
        }
        $at = null;
        foreach ($toks as $k => $t) {                   // `function [&] name (` on the declaration's line
            if ($t[0] !== T_FUNCTION || $t[2] !== $r->getStartLine()) {
                continue;
            }
            $j = $k + 1;
            if (in_array($toks[$j][0], ['&', T_AMPERSAND_FOLLOWED_BY_VAR_OR_VARARG,
                                        T_AMPERSAND_NOT_FOLLOWED_BY_VAR_OR_VARARG], true)) {
                $j++;
            }
            if (strcasecmp($toks[$j][1], $r->getShortName()) === 0 && $toks[$j + 1][0] === '(') {
                $at = $j + 1;
            }
        }
        if ($at === null) {
            return ['error' => "no tokens for the declaration of {$r->getName()}"];
        }
        $segs = param_segments($toks, $at);
        $params = [];
        foreach ($r->getParameters() as $k => $p) {
            [$name, $default] = split_param($segs[$k] ?? []);
            if ($name !== $p->getName()) {
                return ['error' => "{$r->getName()}: parameter $k is \${$p->getName()}, the tokens say \$$name"];
            }
            $params[] = ['name' => $name, 'kind' => $p->isVariadic() ? 'var_positional' : 'positional',
                         'default' => $p->isDefaultValueAvailable() ? $default : null];
        }
        $funcs[] = [$r->getStartLine(), ['name' => $r->getShortName(), 'async' => false, 'params' => $params]];
    }
    usort($funcs, fn($a, $b) => $a[0] <=> $b[0]);
    return array_column($funcs, 1);
}

// Runs f in a forked child and returns what it returned (JSON through a socket pair).
function in_child(callable $f): array
{
    [$parent, $child] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    $pid = pcntl_fork();
    if ($pid === 0) {
        fclose($parent);
        fwrite($child, json_encode($f(), JSON_THROW_ON_ERROR | JSON_INVALID_UTF8_SUBSTITUTE));
        fclose($child);
        posix_kill(posix_getpid(), SIGKILL);            // no shutdown functions or destructors of the code
    }
    fclose($child);
    $text = stream_get_contents($parent);
    fclose($parent);
    pcntl_waitpid($pid, $status);
    return $text === '' ? ['error' => 'the child died'] : json_decode($text, true, 512, JSON_THROW_ON_ERROR);
}

function php_code(string $code): string
{
    return str_starts_with($code, '<?') ? $code : '<?php ' . $code;
}

$in = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
echo json_encode([
    'php' => PHP_VERSION,
    'sources' => array_map(fn($c) => in_child(fn() => declared(php_code($c))), $in['sources']),
    'exprs' => array_map(fn($t) => shape(array_slice(tokens("<?php " . $t . "\n;"), 1, -1)), $in['exprs']),
], JSON_THROW_ON_ERROR | JSON_INVALID_UTF8_SUBSTITUTE);
