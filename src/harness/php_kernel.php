<?php
// fnbox session kernel for PHP (docs/internals/kernels.md).
//
// Started as `/usr/bin/php -d... <dir>/kernel.php` with the call harness at <dir>/harness.php, which it includes
// as a library (its main runs only when it is the program): cells compile as a call's body does (the harness's
// `user_code.php` stream wrapper and user_source), values convert and errors are described by its
// serialize_result / stack_of / header_line, with no second copy of that code.  Frames on fd 4 (host -> kernel)
// and fd 3 (kernel -> host): `<decimal length>\n<payload>`; requests are {"code": "..."}, answers the call
// harness's report (a header line, then the value's JSON text on success), after one {"ready":true} once loaded.
//
// Cells are included from the global scope (the loop at the end of this file), so their top-level variables
// are globals and persist, as do their functions and classes.  The result is a top-level `return`'s value, or
// the final expression's when the cell ends with one that has no `;` (`$x + 1`); else null.
namespace Fnbox\Kernel;

use Fnbox\Harness as H;

require __DIR__ . '/harness.php';

const RESULT_FD = 3;
const INPUT_FD = 4;
const MAX_HEADER = 24; // digits of a frame's length, and the newline

/** Thrown into the running cell by the SIGINT handler; reported as KeyboardInterrupt, as the other kernels do. */
final class Interrupted extends \Exception
{
}

final class K
{
    /** @var resource */
    public static $in;
    public static bool $running = false;
    public static bool $answered = true; // the current cell has its frame (else the shutdown function sends one)
    public static ?string $early = null;  // the cell's answer found before it runs (a redeclaration)
    public static int $cells = 0;
    public static string $file = '';      // the current cell's name, `<cell N>`: each cell's own file and lines
}

function send(string $payload, string $body = ''): void
{
    while (\ob_get_level() > 0 && @\ob_end_flush()) {
    }
    \flush(); // the cell's output reaches fds 1/2 before its result reaches fd 3
    K::$answered = true;
    $frame = \strlen($payload) + \strlen($body) . "\n" . $payload;
    $h = @\fopen('php://fd/' . RESULT_FD, 'wb');
    if ($h === false) {
        exit(70);
    }
    foreach ([$frame, $body] as $data) {
        for ($off = 0, $len = \strlen($data); $off < $len; $off += $n) {
            $n = \fwrite($h, \substr($data, $off, 1 << 22));
            if ($n === false || $n === 0) {
                exit(70); // the host stopped reading: nothing more to say
            }
        }
    }
    \fclose($h);
}

function read_frame(): ?array
{
    $head = \fgets(K::$in, MAX_HEADER + 1);
    if ($head === false || !\str_ends_with($head, "\n") || !\ctype_digit(\rtrim($head))) {
        return null;
    }
    for ($body = '', $left = (int)$head; $left > 0; $left -= \strlen($chunk)) {
        $chunk = \fread(K::$in, \min($left, 1 << 20));
        if ($chunk === false || $chunk === '') {
            return null;
        }
        $body .= $chunk;
    }
    $req = \json_decode($body, true, 512, \JSON_BIGINT_AS_STRING);
    return \is_array($req) ? $req : [];
}

/** The significant tokens of a parsed cell, or null when it does not parse. */
function tokens(string $src): ?array
{
    try {
        $all = \token_get_all($src, \TOKEN_PARSE);
    } catch (\ParseError $e) {
        return null;
    }
    $skip = [\T_WHITESPACE, \T_COMMENT, \T_DOC_COMMENT];
    return \array_values(\array_filter($all, fn($t) => !\is_array($t) || !\in_array($t[0], $skip, true)));
}

/** $src with `return` before its final expression when that has no `;` (and so does not parse as it is). */
function with_value(string $src): string
{
    if (tokens($src) !== null) {
        return $src;
    }
    // Candidates: after each `;`, `}` or open tag outside brackets, from the last; the first that parses wins.
    $all = @\token_get_all($src);
    $depth = 0;
    $at = [];
    $off = 0;
    foreach ($all as $t) {
        $text = \is_array($t) ? $t[1] : $t;
        $off += \strlen($text);
        if (\in_array($text, ['(', '[', '{'], true) || (\is_array($t) && \in_array($t[0], [\T_CURLY_OPEN, \T_DOLLAR_OPEN_CURLY_BRACES], true))) {
            $depth++;
        } elseif (\in_array($text, [')', ']', '}'], true)) {
            $depth--;
        }
        if ($depth === 0 && ($text === ';' || $text === '}' || (\is_array($t) && $t[0] === \T_OPEN_TAG))) {
            $at[] = $off;
        }
    }
    foreach (\array_reverse($at) as $cut) {
        $try = \substr($src, 0, $cut) . ' return ' . \substr($src, $cut) . "\n;";
        if (\trim(\substr($src, $cut)) !== '' && tokens($try) !== null) {
            return $try;
        }
    }
    return $src; // the include reports PHP's own ParseError
}

/** PHP's fatal "Cannot redeclare" for a function or class the cell declares at its top level and that exists
 * already: a compile error ends the process, so it is found first and answered without running the cell. */
function redeclared(string $src): ?array
{
    $toks = tokens($src) ?? [];
    $ns = '';
    $depth = 0;
    foreach ($toks as $i => $t) {
        $text = \is_array($t) ? $t[1] : $t;
        if ($text === '{' || (\is_array($t) && \in_array($t[0], [\T_CURLY_OPEN, \T_DOLLAR_OPEN_CURLY_BRACES], true))) {
            $depth++;
        } elseif ($text === '}') {
            $depth--;
        }
        $next = $toks[$i + 1] ?? null;
        if ($depth !== 0 || !\is_array($t) || !\is_array($next)) {
            continue;
        }
        if ($t[0] === \T_NAMESPACE && \in_array($next[0], [\T_STRING, \T_NAME_QUALIFIED], true)) {
            $ns = $next[1] . '\\';
        }
        if ($next[0] !== \T_STRING) {
            continue;
        }
        $prev = $toks[$i - 1] ?? null;
        $name = $ns . $next[1];
        if ($t[0] === \T_FUNCTION && \function_exists($name)) {
            $r = new \ReflectionFunction($name);
            return ['Cannot redeclare ' . $name . '() (previously declared in ' . $r->getFileName() . ':'
                . $r->getStartLine() . ')', K::$file . ':' . $next[2]];
        }
        $classy = [\T_CLASS, \T_INTERFACE, \T_TRAIT, \T_ENUM];
        if (\in_array($t[0], $classy, true) && !(\is_array($prev) && \in_array($prev[0], [\T_NEW, \T_DOUBLE_COLON], true))
            && (\class_exists($name, false) || \interface_exists($name, false) || \trait_exists($name, false))) {
            return ['Cannot declare ' . \strtolower($t[1]) . ' ' . $name . ', because the name is already in use',
                    K::$file . ':' . $next[2]];
        }
    }
    return null;
}

/** Tells the host where this cell's output begins on fds 1/2: what the kernel wrote before (a shutdown of an
 * earlier cell's output buffer) is not this cell's. Its own buffers first, so nothing written before comes after. */
function mark(string $text): void
{
    while (\ob_get_level() > 0 && @\ob_end_flush()) {
    }
    \flush();
    foreach ([\STDOUT, \STDERR] as $h) {
        try {
            @\fwrite($h, $text);
        } catch (\Throwable $e) { // closed by the code: nothing of the cell's comes there either
        }
    }
}

/** Reads the next cell and points the `file` wrapper at it (H\UserCode): the loop's `include` compiles it. */
function next_cell(): bool
{
    $req = read_frame();
    if ($req === null) {
        exit(0); // EOF: the host is done with us
    }
    mark(\is_string($req['mark'] ?? null) ? $req['mark'] : '');
    K::$file = '<cell ' . ++K::$cells . '>';
    $src = with_value(H\user_source(\is_string($req['code'] ?? null) ? $req['code'] : '', false));
    if (tokens($src) !== null) {
        $src = H\user_source($src, true); // the marker returned when the cell returns nothing
    } // else left as it is, so that PHP's ParseError speaks of the cell's own text
    K::$answered = false;
    $why = redeclared($src);
    if ($why !== null) {
        send(H\header_line('FatalError', $why[0], $why[1], 1));
        return false;
    }
    H\UserCode::$src = $src;
    \stream_wrapper_unregister('file');
    \stream_wrapper_register('file', H\UserCode::class);
    H\UserCode::$wrapped = true;
    K::$running = true;
    return true;
}

function done(mixed $ret): void
{
    K::$running = false;
    H\restore_file_wrapper();
    try {
        $text = H\serialize_result($ret === H\State::$noReturn ? null : $ret);
    } catch (\Throwable $e) {
        failed($e);
        return;
    }
    send("{\"ok\":true}\n", $text);
}

function failed(\Throwable $e): void
{
    K::$running = false;
    H\restore_file_wrapper();
    if ($e instanceof H\HarnessError) {
        send(H\header_line($e->etype, $e->getMessage(), '', 1));
    } elseif ($e instanceof Interrupted) {
        send(H\header_line('KeyboardInterrupt', '', interrupted_stack($e), 1));
    } else {
        send(H\header_line(\get_class($e), $e->getMessage(), stack_of($e), 1));
    }
}

/** The harness's stack text without the kernel's own lines (its include, its SIGINT handler). */
function stack_of(\Throwable $e): string
{
    $keep = fn($l) => !\str_contains($l, __FILE__) && !\str_contains($l, 'Fnbox\\Kernel\\');
    return \implode("\n", \array_filter(\explode("\n", H\stack_of($e)), $keep));
}

/** Where the cell was interrupted, and the calls that led there. The exception is thrown in on_sigint, so its
 * own file and line are the kernel's: the handler's frame (the first of the trace) is where the VM was when
 * it ran the handler, in the cell. */
function interrupted_stack(Interrupted $e): string
{
    $trace = $e->getTrace();
    $at = $trace[0] ?? [];
    $mine = fn($f) => ($f['file'] ?? '') === __FILE__ || \str_starts_with(\strtolower($f['class'] ?? $f['function'] ?? ''), 'fnbox\\');
    $out = ['KeyboardInterrupt' . (isset($at['file']) && !$mine(['file' => $at['file']]) ? ' in ' . $at['file'] . ':' . ($at['line'] ?? 0) : '')];
    $n = 0;
    foreach (\array_slice($trace, 1) as $f) {
        if (!$mine($f)) {
            $out[] = '#' . $n++ . ' ' . H\frame_text($f);
        }
    }
    return \implode("\n", $out);
}

/** exit() or a fatal error in a cell ends the process: the cell still gets its answer (the next execute
 * starts a fresh kernel). */
function on_shutdown(): void
{
    if (K::$answered) {
        return;
    }
    H\restore_file_wrapper();
    $err = \error_get_last();
    $fatal = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;
    if ($err !== null && ($err['type'] & $fatal) !== 0) {
        send(H\header_line('FatalError', $err['message'], $err['file'] . ':' . $err['line'], 255));
        return;
    }
    $status = H\exit_status() ?? 0;
    send(H\header_line('SystemExit', 'exit code ' . $status, '', ($status & 0xFF) ?: 1));
}

/** SIGINT (the host's interrupt) throws into the running cell; between cells it is dropped. pcntl_async_signals
 * runs the handler at the VM's next interrupt check: loop back-edges and calls, and after a sleep() it cut. */
function on_sigint(): void
{
    if (K::$running) {
        K::$running = false; // once: the cell's own catch may go on, the host's next SIGINT throws again
        throw new Interrupted('interrupted');
    }
}

function start(): void
{
    H\State::$noReturn = new \stdClass();
    $ffi = H\libc();
    if ($ffi !== null) {
        // Nothing the cells spawn inherits the channels.
        $ffi->fcntl(RESULT_FD, 2 /* F_SETFD */, 1 /* FD_CLOEXEC */);
        $ffi->fcntl(INPUT_FD, 2, 1);
    }
    K::$in = \fopen('php://fd/' . INPUT_FD, 'rb');
    \register_shutdown_function('Fnbox\Kernel\on_shutdown');
    if (\function_exists('pcntl_async_signals')) {
        \pcntl_async_signals(true);
        \pcntl_signal(\SIGINT, 'Fnbox\Kernel\on_sigint');
    }
    H\proxy_streams(); // permissions.network: http and https streams through fnbox's proxy, as in a call
    send("{\"ready\":true}\n");
}

start();
// The loop is at the file's top level so that each cell's `include` runs in the global scope; its only
// variable is $__fnbox_e, which is unset again.
while (true) {
    if (!next_cell()) {
        continue;
    }
    try {
        done(include K::$file);
    } catch (\Throwable $__fnbox_e) {
        failed($__fnbox_e);
    }
    unset($__fnbox_e);
}
