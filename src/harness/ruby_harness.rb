# fnbox in-sandbox harness for Ruby (protocol: docs/internals/harness-protocol.md).
#
# Started as `/usr/bin/ruby --disable-gems /.fnbox/harness.rb` with RUBYOPT empty; fd 4 holds the call
# input (one JSON document), fd 3 receives the result (one JSON header line, then on success the raw
# result JSON).
#
# Start-up cost drives a few choices (Ruby 3.1: `ruby -e 1` ~40 ms, of which RubyGems is ~33 ms):
# - RubyGems stays unloaded. A `require` that fails loads it once and tries again (see ORIGINAL_REQUIRE), so
#   user code that needs an installed gem still works.
# - `json` (the C extension from the standard library, ~3 ms) parses the input: big integers arrive exact
#   and nesting is unlimited (max_nesting: false). The result is written by the iterative serializer
#   below, which converts Ruby values (Symbol, Set, Struct, Time...), refuses what JSON cannot hold
#   (Proc, IO, cycles) and never recurses, so deep nesting cannot overflow the stack; the json generator
#   only escapes strings.
# - User code is compiled with RubyVM::InstructionSequence under the file name user_code.rb and run at
#   the top level (self is `main`, `def` defines private methods of Object, as in a script), so a
#   top-level `return` ends the code with a value (body mode) instead of raising LocalJumpError.
# The harness keeps its names inside the module FnboxHarness and uses no top-level local variables.
require 'json'

module FnboxHarness
  RESULT_FD = 3
  INPUT_FD = 4
  USER_FILE = 'user_code.rb'
  CELL_FILE = /\A<cell \d+>:/ # a session kernel's cells are user code too, each under its own name

  # A failure the harness reports itself (FunctionNotFound, SerializationError...).
  class Failure < StandardError
    attr_reader :etype, :stack

    def initialize(etype, message, stack = '')
      super(message)
      @etype = etype
      @stack = stack
    end
  end

  # RubyGems on demand: with --disable-gems a `require` of a gem fails. Kernel#require is replaced by a
  # wrapper that, on the first LoadError, puts the original back, loads RubyGems (which installs its own
  # require over the original) and retries with it. A prepended module would not do: RubyGems aliases
  # `require`, and an alias would then capture the wrapper.
  ORIGINAL_REQUIRE = ::Kernel.instance_method(:require)
  ::Kernel.send(:define_method, :require) do |path|
    ORIGINAL_REQUIRE.bind_call(self, path)
  rescue LoadError
    raise if defined?(::Gem)
    ::Kernel.send(:define_method, :require, ORIGINAL_REQUIRE)
    ::Kernel.send(:private, :require)
    begin
      ORIGINAL_REQUIRE.bind_call(self, 'rubygems')
    rescue LoadError
      raise
    end
    ::Kernel.instance_method(:require).bind_call(self, path)
  end
  ::Kernel.send(:private, :require)

  module_function

  # ------------------------------------------------------------------------------------------ input

  def read_input
    io = IO.for_fd(INPUT_FD, 'rb', autoclose: false)
    io.rewind if io.stat.file? # fnbox's memfd or a regular file: from offset 0
    data = io.read
    io.close
    data.force_encoding(Encoding::UTF_8)
    req = JSON.parse(data, max_nesting: false, create_additions: false, allow_nan: false)
    data.clear # frees the text now, not at some later GC (a 64 MB input counts against the memory limit)
    req
  end

  # ----------------------------------------------------------------------------------------- output

  # A streamed call's output reaches the caller as it is written (docs/internals/harness-protocol.md,
  # "stream"): on a pipe Ruby would hold it in its buffer until the end.  Ruby has no line buffering, and sync
  # (a write(2) per `puts`) makes a 50 MB loop of short lines 8x slower, so the buffer stays and a thread
  # flushes it every FLUSH_S: a line waits that long at most while the function blocks or writes, up to the
  # GVL's time slice (100 ms) while it only computes.  The thread lives for the process (a kernel's next cell
  # may stream again) and flushes only while FLUSH[:on].  If no thread can start (the call's pids limit),
  # sync it is.  $stderr is sync already.
  FLUSH_S = 0.005
  FLUSH = { on: false, pid: nil }

  def line_buffered(on)
    [$stdout, STDOUT].uniq.each do |s|
      s.sync = on
    rescue Exception # rubocop:disable Lint/RescueException -- closed or replaced: the user's choice stands
      nil
    end
  end

  def timed_flush(on)
    FLUSH[:on] = on
    return if !on || FLUSH[:pid] == Process.pid

    Thread.new do
      Thread.current.report_on_exception = false
      loop do
        sleep FLUSH_S
        next unless FLUSH[:on]

        begin
          STDOUT.flush
        rescue Exception # rubocop:disable Lint/RescueException -- closed: the user's choice stands
          nil
        end
      end
    end
    FLUSH[:pid] = Process.pid
  rescue ThreadError
    line_buffered(true)
  end

  def flush_user_streams
    [$stdout, $stderr, STDOUT, STDERR].each do |s|
      s.flush
    rescue Exception # rubocop:disable Lint/RescueException
      nil
    end
  end

  def publish(header, body = nil)
    flush_user_streams
    out = IO.for_fd(RESULT_FD, 'wb', autoclose: false)
    out.sync = true
    out.write(header)
    out.write(body) if body
    out.flush
  end

  def clean_text(s)
    s = s.to_s
    s = s.dup.force_encoding(Encoding::UTF_8) if s.encoding == Encoding::BINARY
    s = s.encode(Encoding::UTF_8, invalid: :replace, undef: :replace) unless s.encoding == Encoding::UTF_8
    s.valid_encoding? ? s : s.scrub
  rescue Exception # rubocop:disable Lint/RescueException
    ''
  end

  def header(etype, message, stack, exit_code)
    h = { 'ok' => false,
          'error' => { 'type' => clean_text(etype), 'message' => clean_text(message), 'stack' => clean_text(stack) },
          'exitCode' => exit_code }
    JSON.generate(h) + "\n"
  end

  # ------------------------------------------------------------------------------------ serialization

  INF = Float::INFINITY
  LARGE = 16 << 20

  def json_string(s)
    s = String.new(s) unless s.instance_of?(String) # subclasses: the plain string, not their to_json
    JSON.generate(s)
  end

  # A String as JSON: text when it is valid UTF-8 (or converts to it), else {"base64": ...}.
  def string_value(s)
    enc = s.encoding
    if enc == Encoding::UTF_8 || enc == Encoding::US_ASCII
      return s if s.valid_encoding?
    elsif enc == Encoding::BINARY
      return s.dup.force_encoding(Encoding::UTF_8) if s.ascii_only?
    else
      begin
        return s.encode(Encoding::UTF_8)
      rescue EncodingError
        nil
      end
    end
    { 'base64' => [s].pack('m0') }
  end

  def hash_key(k)
    k = k.is_a?(String) ? k : k.to_s
    string_value(k).then { |v| v.is_a?(String) ? v : k.b.inspect }
  end

  def describe(o)
    c = o.class
    c.name || c.inspect
  end

  def unserializable(o)
    Failure.new('SerializationError', "#{describe(o)} is not JSON-serializable")
  end

  def user_method?(o, name)
    m = o.method(name)
    owner = m.owner
    !(owner.name || '').start_with?('JSON::') && ![Kernel, Object, Enumerable, NilClass].include?(owner)
  rescue NameError
    false
  end

  def time_text(t)
    frac = t.nsec.zero? ? '' : (t.strftime('.%N').sub(/0+\z/, ''))
    t.strftime('%Y-%m-%dT%H:%M:%S') + frac + (t.utc? ? 'Z' : t.strftime('%:z'))
  end

  # Turns a value JSON has no form for into one it has. nil, true, false, Integer, Float, String,
  # Symbol, Array and Hash never get here.
  def convert(o)
    return o.to_a if defined?(::Set) && o.is_a?(::Set)
    return time_text(o) if o.is_a?(Time)
    return o.iso8601 if defined?(::Date) && o.is_a?(::Date)
    return o.to_h if o.is_a?(Struct) || (defined?(::OpenStruct) && o.is_a?(::OpenStruct))
    if o.is_a?(Range)
      raise Failure.new('SerializationError', "an endless Range is not JSON-serializable") if o.end.nil? || o.begin.nil?
      return o.to_a
    end
    return o.to_f if o.is_a?(Rational)
    if defined?(::BigDecimal) && o.is_a?(::BigDecimal)
      return o.finite? ? [:number_text, o.to_s('F')] : nil
    end
    raise unserializable(o) if o.is_a?(Proc) || o.is_a?(Method) || o.is_a?(UnboundMethod) || o.is_a?(IO) ||
                               o.is_a?(Module) || o.is_a?(Binding) || o.is_a?(Thread) || o.is_a?(Complex)
    return o.as_json if o.respond_to?(:as_json)
    return o.to_h if user_method?(o, :to_h)
    if o.respond_to?(:to_json) && user_method?(o, :to_json)
      text = o.to_json
      return JSON.parse(text.to_s, max_nesting: false, create_additions: false)
    end
    return o.to_a if o.is_a?(Enumerable)
    ivars = o.instance_variables
    raise unserializable(o) if ivars.empty?
    ivars.to_h { |iv| [iv.to_s.delete_prefix('@'), o.instance_variable_get(iv)] }
  end

  # The result as JSON text, iteratively: frames are [kind, items, index, object_id] where kind is
  # :array, :hash (items: the pairs) or :conv (a converted object; only closes its cycle guard).
  NATIVE_DEPTH = 256
  UTF8_OR_ASCII = [Encoding::UTF_8, Encoding::US_ASCII].freeze

  def native_text?(s)
    s.instance_of?(String) && UTF8_OR_ASCII.include?(s.encoding) && s.valid_encoding?
  end

  # Whether the C generator writes the value exactly as serialize's own loop would: JSON's types only (exact
  # classes, String keys), valid UTF-8 text, finite floats, nesting within NATIVE_DEPTH (the generator
  # recurses; a cycle shows up as too deep).  Checked without recursion and without building anything.
  def native?(value)
    stack = [value, 0]
    until stack.empty?
      d = stack.pop
      o = stack.pop
      case o
      when nil, true, false, Integer then next
      when Float then return false if o.nan? || o.infinite?
      when String then return false unless native_text?(o)
      when Array
        return false unless o.instance_of?(Array) && d < NATIVE_DEPTH
        o.each { |x| stack << x << d + 1 }
      when Hash
        return false unless o.instance_of?(Hash) && d < NATIVE_DEPTH
        o.each do |k, x|
          return false unless native_text?(k)
          stack << x << d + 1
        end
      else return false
      end
    end
    true
  end

  # Below this many items at its top, a value is checked by native? (well under a millisecond) before the
  # generator runs; from it on, the generator's own walk in C is the check (native_json).
  NATIVE_TRIAL_MIN = 1024
  NOT_NATIVE = Object.new.freeze # the throw tag: no rescue clause of the function's can catch a throw

  # The value's JSON when the C generator writes it without calling back into Ruby, else nil. The generator
  # calls back only for what native? refuses: #to_json of any other class (Symbol, Set, subclasses, objects
  # with a singleton class...), #to_s of a non-String key; Float#to_s it calls for every float. A TracePoint
  # stops the first such call before it runs (a function's own to_json never runs twice, here and in the
  # careful loop). What it lets through gives the careful loop's text too: Symbol keys (their name). 5x
  # faster than native? for 250k records, whose walk in Ruby costs more than the generation.
  def native_json(value)
    main = Thread.current
    state = JSON::State.new(max_nesting: NATIVE_DEPTH)
    guard = TracePoint.new(:call, :c_call) do |tp|
      next unless Thread.current.equal?(main)
      next if tp.event == :c_call && tp.method_id == :to_s && tp.self.instance_of?(Float)
      next if tp.event == :c_call && tp.method_id == :generate && tp.self.equal?(state)
      throw NOT_NATIVE if %i[to_json to_s respond_to? respond_to_missing? method_missing].include?(tp.method_id)
    end
    catch(NOT_NATIVE) do
      return guard.enable { state.generate(value) }
    end
    nil
  rescue JSON::JSONError, EncodingError, TypeError
    nil # NaN or Infinity, invalid UTF-8, too deep (a cycle too): the careful loop says which
  end

  def serialize(value)
    if value.instance_of?(String) # a long string: its JSON text only, no second copy in `out`
      v = string_value(value)
      return json_string(v) if v.is_a?(String)
    end
    # JSON-native values (the usual case): the C generator, ~20x faster than the loop below and without its
    # garbage (a 1M-item array would otherwise leave ~100 MB of it).
    if value.instance_of?(Array) || value.instance_of?(Hash)
      if value.size >= NATIVE_TRIAL_MIN
        text = native_json(value)
        return text if text
      elsif native?(value)
        return JSON.generate(value, max_nesting: false)
      end
    elsif (value.is_a?(Array) || value.is_a?(Hash)) && native?(value)
      return JSON.generate(value, max_nesting: false)
    end
    out = String.new(encoding: Encoding::UTF_8) # one buffer: an array of parts costs ~40 bytes a part
    active = {}.compare_by_identity
    frames = []
    o = value
    loop do
      loop do # write o, or open the container it is
        case o
        when nil then out << 'null'
        when true then out << 'true'
        when false then out << 'false'
        when Integer then out << o.to_s
        when Float then out << (o.nan? || o.infinite? ? 'null' : o.to_s)
        when String
          v = string_value(o)
          if v.is_a?(String)
            out << json_string(v)
          else
            out << '{"base64":' << json_string(v['base64']) << '}'
          end
        when Symbol then out << json_string(clean_text(o.name))
        when Array, Hash
          raise Failure.new('SerializationError', 'circular reference in the result') if active.key?(o)
          active[o] = true
          if o.is_a?(Hash)
            out << '{'
            frames << [:hash, o.to_a, 0, o]
          else
            out << '['
            frames << [:array, o, 0, o]
          end
        else
          raise Failure.new('SerializationError', 'circular reference in the result') if active.key?(o)
          begin
            c = convert(o)
          rescue Failure
            raise
          rescue Exception => e # rubocop:disable Lint/RescueException
            raise Failure.new('SerializationError', "cannot convert #{describe(o)}: #{e.class}: #{e.message}",
                              backtrace_text(e))
          end
          if c.is_a?(Array) && c.size == 2 && c[0] == :number_text
            out << c[1]
          else
            active[o] = true
            frames << [:conv, nil, 0, o]
            o = c
            next
          end
        end
        break
      end
      done = true
      until frames.empty? # find the next value to write
        fr = frames[-1]
        kind = fr[0]
        if kind == :conv
          frames.pop
          active.delete(fr[3])
          next
        end
        items = fr[1]
        i = fr[2]
        if i >= items.size
          frames.pop
          active.delete(fr[3])
          out << (kind == :array ? ']' : '}')
          next
        end
        fr[2] = i + 1
        out << ',' if i.positive?
        if kind == :array
          o = items[i]
        else
          k, o = items[i]
          out << json_string(hash_key(k)) << ':'
        end
        done = false
        break
      end
      return out if done
    end
  end

  # ------------------------------------------------------------------------------------------ errors

  def backtrace_text(e)
    bt = e.backtrace || []
    user = bt.select { |l| l.start_with?(USER_FILE + ':') || l.match?(CELL_FILE) }
    user.join("\n")
  end

  def error_of(e)
    return [e.etype, e.message, e.stack, 1] if e.is_a?(Failure)

    message = begin
      e.message
    rescue Exception # rubocop:disable Lint/RescueException
      "<unprintable #{describe(e)}>"
    end
    stack = backtrace_text(e)
    if e.is_a?(SystemExit)
      st = e.status
      message = "exit code #{st}" if message == 'exit' || message.nil? || message.empty?
      return ['SystemExit', message, stack, st & 0xFF]
    end
    if e.is_a?(SyntaxError)
      # The location is in the message ("user_code.rb:3: syntax error, ..."); the stack holds it too.
      stack = message.lines.first.to_s.chomp if stack.empty?
    end
    [describe(e), message, stack, 1]
  end

  def report(e)
    etype, message, stack, exit_code = error_of(e)
    publish(header(etype, message, stack, exit_code))
    exit_code
  end

  # --------------------------------------------------------------------------------------- user code

  MAIN = TOPLEVEL_BINDING.receiver

  def compile(code, workdir)
    verbose = $VERBOSE
    $VERBOSE = nil # "argument of top-level return is ignored" would otherwise reach the user's stderr
    begin
      RubyVM::InstructionSequence.compile(code, USER_FILE, File.join(workdir, USER_FILE), 1)
    ensure
      $VERBOSE = verbose
    end
  end

  def user_methods
    names = Object.private_instance_methods(false) + Object.public_instance_methods(false) +
            MAIN.singleton_methods(false)
    names.select do |n|
      m = MAIN.method(n)
      m.source_location && m.source_location[0] == USER_FILE
    rescue NameError
      false
    end.uniq
  end

  def find_function(name)
    sym = name.to_sym
    m = begin
      MAIN.method(sym)
    rescue NameError
      nil
    end
    return m if m && (m.owner == Object || m.owner == MAIN.singleton_class)

    have = user_methods
    raise Failure.new('FunctionNotFound',
                      "'#{name}' is not defined in #{USER_FILE}; methods defined: " \
                      "#{have.empty? ? '(none)' : have.join(', ')}")
  end

  def run(req)
    code = req['code'] || ''
    name = req['functionName']
    args = req['args'] || []
    kwargs = req['kwargs'] || {}
    workdir = req['workdir'] || Dir.pwd
    $LOAD_PATH << workdir unless $LOAD_PATH.include?(workdir)
    iseq = compile(code.to_s, workdir)
    result = iseq.eval
    unless name.nil?
      fn = find_function(name.to_s)
      result = if kwargs.empty?
                 fn.call(*args)
               else
                 fn.call(*args, **kwargs.transform_keys(&:to_sym))
               end
    end
    serialize(result)
  end

  def main
    [RESULT_FD, INPUT_FD].each do |fd|
      IO.for_fd(fd, autoclose: false).close_on_exec = true
    rescue StandardError
      nil
    end
    begin
      req = read_input
      raise ArgumentError, 'the call input is not a JSON object' unless req.is_a?(Hash)
    rescue Exception => e # rubocop:disable Lint/RescueException
      publish(header('HarnessError', "cannot read the call input on fd 4: #{e.class}: #{e.message}", '', 1))
      return 1
    end
    timed_flush(true) if req['stream']
    begin
      body = run(req)
    rescue Exception => e # rubocop:disable Lint/RescueException
      return report(e)
    end
    req = nil
    GC.start if body.bytesize > LARGE # the arguments and the value, before the copy in the result memfd
    publish("{\"ok\":true}\n", body)
    0
  end
end

# Run as the program (a call); loaded by the session kernel (ruby_kernel.rb) it is a library only.
if __FILE__ == $PROGRAM_NAME
  begin
    FnboxHarness.instance_variable_set(:@status, FnboxHarness.main)
  rescue Exception # rubocop:disable Lint/RescueException
    # The result channel itself failed (fd 3 closed by the function...): fnbox reports NoResult.
    exit!(70)
  end
  exit(FnboxHarness.instance_variable_get(:@status))
end
