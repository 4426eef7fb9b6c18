<?php
// fnbox in-sandbox harness for PHP (protocol: docs/internals/harness-protocol.md).
//
// Started as `/usr/bin/php -d ... /.fnbox/harness.php` (the PHP CLI, never php-cgi: no CGI headers on
// stdout); fd 4 holds the call input (one JSON document), fd 3 receives the result (one JSON header line,
// then on success the raw result JSON).
//
// Choices:
// - User code is compiled by `include 'user_code.php'` while a read-only stream wrapper stands in for
//   `file://`: PHP then names the file exactly `user_code.php` in errors, warnings, traces and __FILE__,
//   with the request's line numbers, and nothing is written to disk. The real file wrapper is restored as
//   soon as the compiler closes the stream, before any user statement runs. Code may start with `<?php`
//   (leading blanks dropped) or not (`<?php ` is prepended on the same line).
// - Input objects decode to associative arrays; an empty JSON object decodes to `new stdClass` so that `{}`
//   comes back as `{}` (`[]` stays a list). Integers beyond 64 bits decode as decimal strings
//   (JSON_BIGINT_AS_STRING: exact digits rather than a rounded float).
// - Results: a list-shaped array is a JSON array, any other array an object; objects give their public
//   properties (JsonSerializable, DateTimeInterface -> ISO-8601, enums -> value/name, Traversable -> its
//   items); NAN/INF -> null; invalid UTF-8 strings -> {"base64": ...}; closures, resources, cycles and
//   nesting past 10000 levels -> SerializationError.
// - exit()/die() and fatal errors (not Throwables) are reported from a shutdown function; the status given
//   to exit() is read from the engine through FFI (when FFI is unavailable nothing is published and fnbox
//   reports NoResult with the process's real exit status).
namespace Fnbox\Harness;

const USER_FILE = 'user_code.php';

// An environment's php.paths (core/environment.c places them at FNBOX_PHP_PATH): on include_path, over the
// root's own directories. The kernel includes this file, so its cells get them too.
if (($fnbox_php_path = \getenv('FNBOX_PHP_PATH')) !== false && $fnbox_php_path !== '') {
    \set_include_path('.' . \PATH_SEPARATOR . $fnbox_php_path . \PATH_SEPARATOR . \get_include_path());
}
unset($fnbox_php_path);
const MAX_DEPTH = 10000;
const ENC_FLAGS = \JSON_PRESERVE_ZERO_FRACTION | \JSON_UNESCAPED_UNICODE | \JSON_UNESCAPED_SLASHES | \JSON_THROW_ON_ERROR;

final class State
{
    public static bool $published = false;
    public static ?object $noReturn = null;
    public static ?\FFI $libc = null;
    public static bool $plainArray = false; // the result is an array holding no object (serialize_result)
}

final class HarnessError extends \Exception
{
    public function __construct(public string $etype, string $message)
    {
        parent::__construct($message);
    }
}

/** Serves the user's source as `user_code.php` to one include; restores `file://` when the compiler is done. */
final class UserCode
{
    public static string $src = '';
    public static bool $wrapped = false;
    public $context;
    private int $pos = 0;

    public function stream_open($path, $mode, $options, &$opened_path): bool
    {
        return true;
    }
    public function stream_read($count): string
    {
        $r = (string)\substr(self::$src, $this->pos, $count);
        $this->pos += \strlen($r);
        return $r;
    }
    public function stream_eof(): bool
    {
        return $this->pos >= \strlen(self::$src);
    }
    public function stream_close(): void
    {
        restore_file_wrapper();
    }
    public function stream_stat(): array
    {
        return ['size' => \strlen(self::$src)];
    }
    public function stream_set_option($option, $arg1, $arg2): bool
    {
        return false;
    }
    public function url_stat($path, $flags): array
    {
        return ['size' => \strlen(self::$src)];
    }
}

function restore_file_wrapper(): void
{
    if (UserCode::$wrapped) {
        UserCode::$wrapped = false;
        UserCode::$src = '';
        \stream_wrapper_restore('file');
    }
}

// ------------------------------------------------------------------------------------------------ input

function libc(): ?\FFI
{
    if (State::$libc === null && \class_exists('FFI', false)) {
        try {
            State::$libc = \FFI::cdef('int fcntl(int fd, int cmd, int arg); int close(int fd);'
                . ' int kill(int pid, int sig); int getpid(void); extern int executor_globals[1024];');
        } catch (\Throwable $e) {
            State::$libc = null;
        }
    }
    return State::$libc;
}

function read_input(): string
{
    $h = @\fopen('php://fd/4', 'rb');
    if ($h === false) {
        throw new \RuntimeException('cannot open fd 4');
    }
    if (\stream_get_meta_data($h)['seekable']) {
        \fseek($h, 0); // a regular file or memfd: read from offset 0
    }
    $text = \stream_get_contents($h);
    \fclose($h);
    if ($text === false) {
        throw new \RuntimeException('read failed');
    }
    return $text;
}

/** stdClass trees from json_decode(assoc: false) -> arrays, keeping empty objects as stdClass. */
function to_php(mixed $v): mixed
{
    if ($v instanceof \stdClass) {
        $a = (array)$v;
        if ($a === []) {
            return $v;
        }
        foreach ($a as $k => $x) {
            if (\is_array($x) || \is_object($x)) {
                $a[$k] = to_php($x);
            }
        }
        return $a;
    }
    if (\is_array($v)) {
        foreach ($v as $k => $x) {
            if (\is_array($x) || \is_object($x)) {
                $v[$k] = to_php($x);
            }
        }
    }
    return $v;
}

/** The number of empty objects in a JSON text, strings skipped (possessive: no backtracking state per byte).
 * Most texts have no `{}` even inside their strings: a scan for `{` alone settles those (1 ms per 10 MB,
 * against 10 for the scan that skips strings). */
function empty_objects(string $text, int $expected): int
{
    $n = \preg_match_all('/\{\s*+\}/', $text);
    if ($n === $expected) {
        return $n;
    }
    $n = \preg_match_all('/"(?:[^"\\\\]++|\\\\.)*+"(*SKIP)(*FAIL)|\{\s*+\}/', $text);
    if ($n === false) {
        throw new \RuntimeException('cannot scan the input: ' . \preg_last_error_msg());
    }
    return $n;
}

function decode(string $text): mixed
{
    // The C decoder straight to arrays reads `{}` as [], which is right only for the top-level kwargs
    // (fnbox always sends an object there). An empty object anywhere else (inside an argument) takes the
    // careful path: objects kept, then turned into arrays except the empty ones.
    $v = \json_decode($text, true, 0x7fffffff, \JSON_BIGINT_AS_STRING | \JSON_THROW_ON_ERROR);
    $top = \is_array($v) && ($v['kwargs'] ?? null) === [] ? 1 : 0;
    if (empty_objects($text, $top) === $top) {
        return $v;
    }
    unset($v);
    // The cycle collector would otherwise scan the stdClass tree again and again as it is built and taken
    // apart (a third of the time for 250k records): nothing here can form a cycle.
    $gc = \gc_enabled();
    \gc_disable();
    try {
        return to_php(\json_decode($text, false, 0x7fffffff, \JSON_BIGINT_AS_STRING | \JSON_THROW_ON_ERROR));
    } finally {
        if ($gc) {
            \gc_enable();
        }
    }
}

// ----------------------------------------------------------------------------------------------- output

function publish(string $data, string $body = ''): void
{
    while (\ob_get_level() > 0 && @\ob_end_flush()) {
    }
    \flush();
    State::$published = true;
    $h = @\fopen('php://fd/3', 'wb');
    if ($h === false) {
        return;
    }
    $len = \strlen($data);
    for ($off = 0; $off < $len;) {
        $n = \fwrite($h, $off === 0 ? $data : \substr($data, $off));
        if ($n === false || $n === 0) {
            break;
        }
        $off += $n;
    }
    // The result text apart from the header: "header" . $text would copy a 64 MB result once more.
    $len = $off === $len ? \strlen($body) : 0;
    for ($off = 0; $off < $len;) {
        $n = \fwrite($h, $off === 0 ? $body : \substr($body, $off, 1 << 22));
        if ($n === false || $n === 0) {
            break;
        }
        $off += $n;
    }
    \fclose($h);
}

function header_line(string $type, string $message, string $stack, int $code): string
{
    $h = ['ok' => false, 'error' => ['type' => $type, 'message' => $message, 'stack' => $stack],
          'exitCode' => $code];
    return \json_encode($h, \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n";
}

function fail(string $type, string $message, string $stack = '', int $code = 1): int
{
    publish(header_line($type, $message, $stack, $code));
    return $code;
}

/** Whether the value holds anything json_encode would not turn into the JSON we promise. */
function needs_conversion(mixed $v): bool
{
    if (\is_object($v) || \is_resource($v) || (\is_float($v) && !\is_finite($v))) {
        return true;
    }
    // A walk by value: array_walk_recursive takes the array by reference, which separates (copies) every
    // nested array of the result (a 1M-item result twice over). Past MAX_DEPTH (a reference cycle...):
    // convert() says what is wrong.
    $stack = \is_array($v) ? [$v] : [];
    $depths = [0];
    while ($stack) {
        $a = \array_pop($stack);
        $d = \array_pop($depths);
        if ($d > MAX_DEPTH) {
            return true;
        }
        foreach ($a as $x) {
            if (\is_array($x)) {
                $stack[] = $x;
                $depths[] = $d + 1;
            } elseif (\is_object($x) || \is_resource($x) || (\is_float($x) && !\is_finite($x))) {
                return true;
            }
        }
    }
    return false;
}

function describe(mixed $v): string
{
    return \is_object($v) ? \get_class($v) : (\is_resource($v) ? 'resource(' . \get_resource_type($v) . ')' : \get_debug_type($v));
}

/** The value as plain arrays/stdClass/scalars json_encode spells as promised; throws HarnessError. */
function convert(mixed $v, int $depth, array &$active): mixed
{
    if ($depth > MAX_DEPTH) {
        throw new HarnessError('SerializationError', 'the result nests deeper than ' . MAX_DEPTH
            . ' levels (or holds a reference cycle)');
    }
    if ($v === null || \is_bool($v) || \is_int($v)) {
        return $v;
    }
    if (\is_float($v)) {
        return \is_finite($v) ? $v : null;
    }
    if (\is_string($v)) {
        return \preg_match('//u', $v) === 1 ? $v : (object)['base64' => \base64_encode($v)];
    }
    if (\is_array($v)) {
        $out = [];
        foreach ($v as $k => $x) {
            $out[$k] = convert($x, $depth + 1, $active);
        }
        return \array_is_list($out) ? $out : (object)$out;
    }
    if (\is_resource($v) || \gettype($v) === 'resource (closed)') {
        throw new HarnessError('SerializationError', 'cannot convert ' . describe($v) . ' to JSON');
    }
    if (!\is_object($v)) {
        throw new HarnessError('SerializationError', 'cannot convert ' . \gettype($v) . ' to JSON');
    }
    $id = \spl_object_id($v);
    if (isset($active[$id])) {
        throw new HarnessError('SerializationError', 'circular reference in the result');
    }
    $active[$id] = true;
    try {
        if ($v instanceof \Closure || $v instanceof \FFI\CData || $v instanceof \WeakReference) {
            throw new HarnessError('SerializationError', 'cannot convert ' . describe($v) . ' to JSON');
        }
        if ($v instanceof \JsonSerializable) {
            return convert($v->jsonSerialize(), $depth + 1, $active);
        }
        if ($v instanceof \DateTimeInterface) {
            return $v->format((int)$v->format('u') !== 0 ? 'Y-m-d\TH:i:s.uP' : 'Y-m-d\TH:i:sP');
        }
        if ($v instanceof \UnitEnum) {
            return $v instanceof \BackedEnum ? $v->value : $v->name;
        }
        if ($v instanceof \Traversable) {
            $items = \iterator_to_array($v, !($v instanceof \Generator));
            return convert($items, $depth + 1, $active);
        }
        $out = [];
        foreach (\get_object_vars($v) as $k => $x) {
            $out[$k] = convert($x, $depth + 1, $active);
        }
        return (object)$out;
    } finally {
        unset($active[$id]);
    }
}

/** Whether json_encode could run the function's code: a jsonSerialize() of its own (PHP's own, e.g.
 * SplFixedArray's, run none). */
function user_json_serialize(): bool
{
    foreach (\get_declared_classes() as $c) {
        if (\is_subclass_of($c, \JsonSerializable::class)
            && !(new \ReflectionMethod($c, 'jsonSerialize'))->isInternal()) {
            return true;
        }
    }
    return false;
}

/** Whether $text, json_encode's spelling of the array $v, holds no object of $v's: then it is what convert()
 * would give. An object json_encode spells as `{...}` adds members that count(COUNT_RECURSIVE), which never
 * looks into objects, does not count; one spelt `{}` is caught by itself. Members in the text are its commas
 * plus its non-empty containers, strings skipped. C-level passes instead of a walk in PHP (about 5x faster
 * for 250k records). The first count does not skip strings: a `,`, `[` or `{` in a string only adds to it
 * (a `[]` or `{}` there is one opening and one empty pair: 0), so when even that count is count()'s, the
 * text has no member count() lacks; only otherwise do strings have to be skipped (a regex: 20 ms per
 * 10 MB of records, against 2.5 ms). */
function plain_json(array $v, string $text): bool
{
    if (\str_contains($text, '{}') && empty_objects($text, 0) !== 0) {
        return false;
    }
    $n = \count($v, \COUNT_RECURSIVE);
    $upper = \substr_count($text, ',') + \substr_count($text, '[') + \substr_count($text, '{')
        - \substr_count($text, '[]') - \substr_count($text, '{}');
    if ($upper === $n) {
        return true;
    }
    $members = \preg_match_all('/"(?:[^"\\\\]++|\\\\.)*+"(*SKIP)(*FAIL)|,|[\[{](?![\]}])/', $text);
    return $members === $n;
}

function serialize_result(mixed $v): string
{
    State::$plainArray = false;
    // An array is encoded first and checked after, unless encoding it could run the function's code (which
    // the careful path would then run a second time).
    if (\is_array($v) && !user_json_serialize()) {
        try {
            // Arrays nest at most MAX_DEPTH + 1 deep, as in needs_conversion.
            $text = \json_encode($v, ENC_FLAGS, MAX_DEPTH + 1);
            if (plain_json($v, $text)) {
                State::$plainArray = true;
                return $text;
            }
        } catch (\JsonException $e) {
            // invalid UTF-8, non-finite floats, depth, recursion, resources: the careful path says which
        }
    } elseif (!needs_conversion($v)) {
        try {
            return \json_encode($v, ENC_FLAGS, MAX_DEPTH + 2);
        } catch (\JsonException $e) {
            // invalid UTF-8, depth, recursion: the careful path below says which
        }
    }
    $active = [];
    $c = convert($v, 0, $active);
    try {
        return \json_encode($c, ENC_FLAGS, MAX_DEPTH + 2);
    } catch (\JsonException $e) {
        throw new HarnessError('SerializationError', $e->getMessage());
    }
}

// ------------------------------------------------------------------------------------------------ errors

function frame_text(array $f): string
{
    $where = isset($f['file']) ? $f['file'] . '(' . ($f['line'] ?? 0) . ')' : '[internal function]';
    return $where . ': ' . ($f['class'] ?? '') . ($f['type'] ?? '') . ($f['function'] ?? '') . '()';
}

/** The trace of $e without the harness's own frames, one line per frame, causes after it. */
function stack_of(\Throwable $e): string
{
    $out = [];
    for ($i = 0; $e !== null && $i < 16; $e = $e->getPrevious(), $i++) {
        $out[] = ($i > 0 ? 'Caused by: ' : '') . \get_class($e) . ': ' . $e->getMessage()
            . ' in ' . $e->getFile() . ':' . $e->getLine();
        $n = 0;
        foreach ($e->getTrace() as $f) {
            if (($f['file'] ?? '') === __FILE__ || \str_starts_with(\strtolower($f['class'] ?? $f['function'] ?? ''), 'fnbox\\harness\\')) {
                continue;
            }
            $out[] = '#' . $n++ . ' ' . frame_text($f);
        }
    }
    return \implode("\n", $out);
}

function report(\Throwable $e): int
{
    if ($e instanceof HarnessError) {
        return fail($e->etype, $e->getMessage());
    }
    return fail(\get_class($e), $e->getMessage(), stack_of($e));
}

/** Runs after the script ends: reports exit()/die() and fatal errors when no result was published. */
function on_shutdown(): void
{
    if (State::$published) {
        // after the function's own shutdown functions, and those they register in turn
        \register_shutdown_function('Fnbox\Harness\fast_exit', 1);
        return;
    }
    $err = \error_get_last();
    $fatal = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;
    if ($err !== null && ($err['type'] & $fatal) !== 0) {
        $type = $err['type'] === \E_PARSE ? 'ParseError' : 'FatalError';
        fail($type, $err['message'], $err['file'] . ':' . $err['line'], 255);
        return;
    }
    $status = exit_status();
    if ($status !== null) {
        fail('SystemExit', 'exit code ' . $status, '', $status & 0xFF);
    }
}

/** Whether the function left anything whose end it could see: a destructor of its own classes (objects
 * still referenced are destructed after the shutdown functions), or a resource other than the standard
 * streams (a file, a tmpfile() that shutdown deletes, a socket, a process). */
function leaves_something(): bool
{
    foreach (\get_resources() as $r) {
        // PHP's own: the standard streams, stream contexts (the default one), the stream factory
        $type = \get_resource_type($r);
        if ($r !== \STDIN && $r !== \STDOUT && $r !== \STDERR && $type !== 'stream-context' && $type !== 'stream factory') {
            return true;
        }
    }
    foreach (\get_declared_classes() as $c) {
        if (\method_exists($c, '__destruct') && (new \ReflectionClass($c))->isUserDefined()) {
            return true;
        }
    }
    return false;
}

/** The last shutdown function, once the result is published: with nothing of the function's left to end,
 * the process ends here (SIGKILL to itself, after closing stdout and stderr: fnbox then has all it needs)
 * instead of in PHP's own shutdown (~2.3 ms here: every extension's, and the memory manager's), which came
 * between a warm call's result and its answer. fnbox ignores a SIGKILL it did not send once the result is
 * in (result.c), as for the JavaScript harness. */
function fast_exit(int $round): void
{
    if ($round < 3) { // registered again twice: shutdown functions that the function's register run first
        \register_shutdown_function('Fnbox\Harness\fast_exit', $round + 1);
        return;
    }
    $ffi = libc();
    if ($ffi === null || leaves_something()) {
        return;
    }
    while (\ob_get_level() > 0 && @\ob_end_flush()) {
    }
    \flush();
    if (\ob_get_level() > 0) {
        return; // a buffer that cannot be flushed: PHP's shutdown deals with it
    }
    $ffi->close(1);
    $ffi->close(2);
    $ffi->kill($ffi->getpid(), 9);
}

/** The status given to exit(), read from the engine (EG(exit_status) follows EG(error_reporting)): found by
 * setting error_reporting to a marker and taking the next int. null when FFI is not available. */
function exit_status(): ?int
{
    $ffi = libc();
    if ($ffi === null) {
        return null;
    }
    $marker = 0x3A5C1F2E;
    $old = \error_reporting($marker);
    try {
        $eg = $ffi->executor_globals;
        $at = -1;
        for ($i = 0; $i < 1023; $i++) {
            if ($eg[$i] === $marker) {
                if ($at >= 0) {
                    return null; // ambiguous
                }
                $at = $i;
            }
        }
        return $at >= 0 ? $eg[$at + 1] : null;
    } catch (\Throwable $e) {
        return null;
    } finally {
        \error_reporting($old);
    }
}

// ------------------------------------------------------------------------------------------------- call

function user_source(string $code, bool $body): string
{
    $n = \strspn($code, " \t\r\n");
    if (\strncasecmp(\substr($code, $n, 5), '<?php', 5) === 0 && ($n + 5 === \strlen($code) || \strpos(" \t\r\n", $code[$n + 5]) !== false)) {
        // drop blanks before the tag, keeping their newlines so line numbers stay right
        $src = '<?php' . \str_repeat("\n", \substr_count($code, "\n", 0, $n)) . \substr($code, $n + 5);
    } else {
        $src = '<?php ' . $code;
    }
    if ($body) {
        // The value of a top-level `return`, else the marker: `include` alone returns 1 without one.
        $html = false;
        if (\function_exists('token_get_all')) {
            $toks = @\token_get_all($src);
            $last = \end($toks);
            $html = \is_array($last) && ($last[0] === \T_INLINE_HTML || $last[0] === \T_CLOSE_TAG);
        }
        $src .= ($html ? '<?php' : '') . "\nreturn \\Fnbox\\Harness\\State::\$noReturn;";
    }
    return $src;
}

function user_functions(): array
{
    $names = [];
    foreach (\get_defined_functions()['user'] as $f) {
        $r = new \ReflectionFunction($f);
        if ($r->getFileName() === USER_FILE) {
            $names[] = $r->getName();
        }
    }
    return $names;
}

function find_function(string $name): callable
{
    if (\function_exists($name)) {
        $r = new \ReflectionFunction($name);
        if ($r->isUserDefined() && $r->getFileName() === USER_FILE) {
            return $name;
        }
    } elseif (\str_contains($name, '::') && \is_callable($name)) {
        return $name;
    } else {
        // a function in a namespace, named without it
        $hits = [];
        foreach (user_functions() as $f) {
            if (\strcasecmp(\substr($f, -\strlen($name) - 1), '\\' . $name) === 0) {
                $hits[] = $f;
            }
        }
        if (\count($hits) === 1) {
            return $hits[0];
        }
    }
    $have = user_functions();
    throw new HarnessError('FunctionNotFound', "'" . $name . "' is not defined in " . USER_FILE
        . '; functions defined: ' . ($have ? \implode(', ', $have) : '(none)'));
}

function main(): int
{
    // fnbox points PHP_INI_SCAN_DIR at its copy of conf.d (src/lang/php_ini.c: /.fnbox/php.d, or in a session
    // the run's own directory); a php the function starts reads the real one, and the function sees the
    // environment it would see without fnbox.
    if (\preg_match('#^(/\.fnbox|/tmp/\.fnbox-run/[0-9]+)/php\.d$#', (string)\getenv('PHP_INI_SCAN_DIR'))) {
        \putenv('PHP_INI_SCAN_DIR');
        unset($_SERVER['PHP_INI_SCAN_DIR'], $_ENV['PHP_INI_SCAN_DIR']);
    }
    \register_shutdown_function('Fnbox\Harness\on_shutdown');
    State::$noReturn = new \stdClass();
    $ffi = libc(); // FFI::cdef before the input: in a pooled sandbox, not part of the call
    try {
        $in = decode(read_input());
    } catch (\Throwable $e) {
        return fail('HarnessError', 'cannot read the call input on fd 4: ' . $e->getMessage());
    }
    if ($ffi !== null) {
        // Nothing the function spawns inherits the result channel or the input pipe.
        $ffi->fcntl(3, 2 /* F_SETFD */, 1 /* FD_CLOEXEC */);
        $ffi->close(4);
    }
    if (!\is_array($in) || !\is_string($in['code'] ?? null)) {
        return fail('HarnessError', 'the call input has no code');
    }
    $fname = $in['functionName'] ?? null;
    $args = $in['args'] ?? [];
    $kwargs = $in['kwargs'] ?? [];
    $args = \is_array($args) ? \array_values($args) : [];
    $kwargs = \is_array($kwargs) ? $kwargs : [];
    $workdir = $in['workdir'] ?? null;
    if (\is_string($workdir) && $workdir !== '') {
        @\chdir($workdir);
    }
    UserCode::$src = user_source($in['code'], $fname === null);
    unset($in);
    try {
        \stream_wrapper_unregister('file');
        \stream_wrapper_register('file', UserCode::class);
        UserCode::$wrapped = true;
        try {
            $ret = include USER_FILE;
        } finally {
            restore_file_wrapper();
        }
        if ($fname === null) {
            $value = $ret === State::$noReturn ? null : $ret;
        } else {
            $fn = find_function((string)$fname);
            $value = $fn(...$args, ...$kwargs);
        }
        unset($args, $kwargs, $ret);
        $text = serialize_result($value);
    } catch (\Throwable $e) {
        return report($e);
    }
    // What the result holds goes before it is published: an object's destructor may print, and a large
    // string's memory is returned at once. An array of no object is left to the process's end (fast_exit):
    // taking 250k records apart took 17-37 ms and gave back no memory (PHP keeps its small blocks).
    if (!State::$plainArray) {
        unset($value);
    }
    publish("{\"ok\":true}\n", $text);
    return 0;
}

// Run as the program (a call); included by the session kernel (php_kernel.php) it is a library only.
if (\get_included_files()[0] === __FILE__) {
    exit(main());
}
